package provider_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

func TestFunctionSortBundles(t *testing.T) {
	ranked := bundlesHCL(
		testBundle{1, "nvlink_domain_A", 3, "n1"},
		testBundle{0, "nvlink_domain_A", 3, "n1"},
		testBundle{0, "nvlink_domain_B", 1, "n3"},
	)
	unranked := bundlesHCL(
		testBundle{1, "unknown", -1, "b"},
		testBundle{0, "unknown", -1, "b"},
		testBundle{3, "unknown", -1, "a"},
	)
	// Domain A holds two 1-GPU nodes (one segment of 2), domain B one node.
	segmented := bundlesHCL(
		testBundle{0, "nvlink_domain_A", 3, "n1"},
		testBundle{0, "nvlink_domain_A", 2, "n2"},
		testBundle{0, "nvlink_domain_B", 1, "n3"},
	)
	one := bundlesHCL(testBundle{0, "a", 1, "n"})
	results := resource.TestStep{
		Config: outputConfig(map[string]string{
			"by_topology":    fmt.Sprintf("provider::ray::sort_bundles(%s, null, null)", ranked),
			"by_node":        fmt.Sprintf("provider::ray::sort_bundles(%s, null, null)", unranked),
			"trimmed":        fmt.Sprintf("provider::ray::sort_bundles(%s, 2, 1)", segmented),
			"untrimmed":      fmt.Sprintf("provider::ray::sort_bundles(%s, null, 1)", segmented),
			"null_variables": fmt.Sprintf("provider::ray::sort_bundles(%s, var.segment_size, var.gpus_per_node)", ranked),
		}, nullNumber("segment_size"), nullNumber("gpus_per_node")),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("by_topology", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("by_node", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("trimmed", intList(1, 0)),
			statecheck.ExpectKnownOutputValue("untrimmed", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("null_variables", intList(2, 1, 0)),
		},
	}
	functionTest(t, results,
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, 2, null)", one), `gpus_per_node is required when segment_size is set`),
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, 0, 0)", one), `segment_size must be at least 1, or null`),
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, null, 0)", one), `gpus_per_node must be at least 1, or null`),
	)
}

// nullNumber is a variable of type number that defaults to null.
func nullNumber(name string) acctest.Block {
	return acctest.Block{Type: "variable", Labels: []string{name}, Attrs: []acctest.Attr{{Key: "type", Expr: "number"}, {Key: "default", Expr: "null"}}}
}
