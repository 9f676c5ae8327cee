package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestFunctionPrepareSegmentTopology(t *testing.T) {
	results := resource.TestStep{
		Config: outputConfig(map[string]string{
			"prepared": "provider::ray::prepare_segment_topology(local.topo, 2, 2)",
			"off":      "provider::ray::prepare_segment_topology(local.topo, null, 2)",
			"no_topology": `provider::ray::prepare_segment_topology({
    a = { nvlink_domain = "unknown", topo_rank = -1 }
  }, 1, 1)`,
		}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("prepared", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"message":                   knownvalue.StringExact("Topology-aware allocation: 2 training nodes in 1 NVLink domains (segment_size=2)"),
				"node_resource_constraints": knownvalue.ListExact([]knownvalue.Check{domainConstraint("nvlink_domain_A"), domainConstraint("nvlink_domain_A")}),
				"selected_node_ids":         stringList("n2", "n1"),
				"remaining_node_ids":        stringList("n3", "n4"),
			})),
			statecheck.ExpectKnownOutputValue("off", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"message":                   knownvalue.StringExact(""),
				"node_resource_constraints": knownvalue.Null(),
				"selected_node_ids":         stringList(),
				"remaining_node_ids":        stringList(),
			})),
			statecheck.ExpectKnownOutputValue("no_topology", knownvalue.ObjectPartial(map[string]knownvalue.Check{
				"node_resource_constraints": knownvalue.Null(),
				"selected_node_ids":         stringList(),
				"remaining_node_ids":        stringList("a"),
				"message":                   knownvalue.StringRegexp(regexp.MustCompile(`no NVLink domain info`)),
			})),
		},
	}
	functionTest(t, results,
		errorStep("provider::ray::prepare_segment_topology(local.topo, 0, 2)", `segment_size must be at least 1, or null`),
	)
}
