package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestFunctionSelectSegmentNodes(t *testing.T) {
	results := resource.TestStep{
		Config: outputConfig(map[string]string{
			"one_per_segment": "provider::ray::select_segment_nodes(local.topo, 1, 2)",
			"pair":            "provider::ray::select_segment_nodes(local.topo, 2, 2)",
			"none":            "provider::ray::select_segment_nodes(local.topo, 2, 0)",
		}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("one_per_segment", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"selected": stringList("n3", "n2"), "remaining": stringList("n1", "n4"),
			})),
			statecheck.ExpectKnownOutputValue("pair", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"selected": stringList("n2", "n1"), "remaining": stringList("n3", "n4"),
			})),
			statecheck.ExpectKnownOutputValue("none", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"selected": stringList(), "remaining": stringList("n1", "n2", "n3", "n4"),
			})),
		},
	}
	functionTest(t, results,
		errorStep("provider::ray::select_segment_nodes(local.topo, 2, 3)", `num_nodes.*must be divisible`),
		errorStep("provider::ray::select_segment_nodes(local.topo, 2, 4)", `cannot form 2 complete segments`),
		errorStep("provider::ray::select_segment_nodes(local.topo, null, 2)", `segment_size.*null`),
	)
}
