package provider_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// The functions are pure: these tests need a CLI but no Ray, and run once per
// installed CLI (Terraform and OpenTofu), because the two send null arguments
// differently. Driving a CLI makes them acceptance tests (TF_ACC, make
// testacc), so `make test` stays "no Ray, no CLI"; the functions' Go code has
// unit tests in internal/topology.

// functionTest runs steps as an acceptance test on every installed CLI.
func functionTest(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	acctest.EachCLI(t, func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheckCLI(t) },
			TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			Steps:                    steps,
		})
	})
}

// testTopology is a four-node topology local: two nodes in domain A (ranks 3
// and 2), one in B (rank 1), one without a domain.
const testTopology = `
locals {
  topo = {
    n1 = { nvlink_domain = "nvlink_domain_A", topo_rank = 3 }
    n2 = { nvlink_domain = "nvlink_domain_A", topo_rank = 2 }
    n3 = { nvlink_domain = "nvlink_domain_B", topo_rank = 1 }
    n4 = { nvlink_domain = "unknown", topo_rank = -1 }
  }
}
`

// testBundle is one element of sort_bundles' bundles argument.
type testBundle struct {
	gpu      int
	domain   string
	topoRank int
	node     string
}

func bundlesHCL(bundles ...testBundle) string {
	items := make([]string, len(bundles))
	for i, b := range bundles {
		items[i] = fmt.Sprintf("    { gpu_id = %d, nvlink_domain = %q, topo_rank = %d, node_id = %q },", b.gpu, b.domain, b.topoRank, b.node)
	}
	return "[\n" + strings.Join(items, "\n") + "\n  ]"
}

// outputConfig renders one output per name = expression, after the topology local.
func outputConfig(outputs map[string]string) string {
	var b strings.Builder
	b.WriteString(testTopology)
	for name, expr := range outputs {
		fmt.Fprintf(&b, "output %q {\n  value = %s\n}\n", name, expr)
	}
	return b.String()
}

func stringList(values ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(values))
	for i, v := range values {
		checks[i] = knownvalue.StringExact(v)
	}
	return knownvalue.ListExact(checks)
}

func intList(values ...int64) knownvalue.Check {
	checks := make([]knownvalue.Check, len(values))
	for i, v := range values {
		checks[i] = knownvalue.Int64Exact(v)
	}
	return knownvalue.ListExact(checks)
}

func domainConstraint(domain string) knownvalue.Check {
	return knownvalue.MapExact(map[string]knownvalue.Check{domain: knownvalue.Float64Exact(0.001)})
}

func TestFunctionSelectSegmentNodes(t *testing.T) {
	functionTest(t, resource.TestStep{
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
	})
}

func TestFunctionPrepareSegmentTopology(t *testing.T) {
	functionTest(t, resource.TestStep{
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
	})
}

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
	functionTest(t, resource.TestStep{
		Config: outputConfig(map[string]string{
			"by_topology":    fmt.Sprintf("provider::ray::sort_bundles(%s, null, null)", ranked),
			"by_node":        fmt.Sprintf("provider::ray::sort_bundles(%s, null, null)", unranked),
			"trimmed":        fmt.Sprintf("provider::ray::sort_bundles(%s, 2, 1)", segmented),
			"untrimmed":      fmt.Sprintf("provider::ray::sort_bundles(%s, null, 1)", segmented),
			"null_variables": fmt.Sprintf("provider::ray::sort_bundles(%s, var.segment_size, var.gpus_per_node)", ranked),
		}) + `
variable "segment_size" {
  type    = number
  default = null
}
variable "gpus_per_node" {
  type    = number
  default = null
}
`,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("by_topology", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("by_node", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("trimmed", intList(1, 0)),
			statecheck.ExpectKnownOutputValue("untrimmed", intList(2, 1, 0)),
			statecheck.ExpectKnownOutputValue("null_variables", intList(2, 1, 0)),
		},
	})
}

func TestFunctionPortRanges(t *testing.T) {
	portRange := func(low, high int64) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{"low": knownvalue.Int64Exact(low), "high": knownvalue.Int64Exact(high)})
	}
	functionTest(t, resource.TestStep{
		Config: outputConfig(map[string]string{
			"defaults":      "provider::ray::port_ranges()",
			"vllm_engine_0": "provider::ray::vllm_engine_port_range(0)",
			"vllm_engine_2": "provider::ray::vllm_engine_port_range(2)",
		}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("defaults", knownvalue.ObjectPartial(map[string]knownvalue.Check{
				"master":                portRange(1400, 1999),
				"dynamo_control":        portRange(1313, 1400),
				"sglang_prometheus":     portRange(8800, 8999),
				"vllm_ports_per_engine": knownvalue.Int64Exact(100),
			})),
			statecheck.ExpectKnownOutputValue("vllm_engine_0", portRange(7000, 7100)),
			statecheck.ExpectKnownOutputValue("vllm_engine_2", knownvalue.ObjectExact(map[string]knownvalue.Check{
				"low": knownvalue.Int64Exact(7200), "high": knownvalue.Int64Exact(7300),
				"description": knownvalue.StringExact("vLLM engine rendezvous"),
			})),
		},
	})
}

// errorStep expects expr to fail the plan with an error matching want; any
// space in want may be a line break of the CLI's wrapping.
func errorStep(expr, want string) resource.TestStep {
	return resource.TestStep{
		Config:      outputConfig(map[string]string{"x": expr}),
		ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(want, " ", `\s+`)),
	}
}

func TestFunctionErrors(t *testing.T) {
	one := bundlesHCL(testBundle{0, "a", 1, "n"})
	functionTest(t,
		errorStep("provider::ray::select_segment_nodes(local.topo, 2, 3)", `num_nodes.*must be divisible`),
		errorStep("provider::ray::select_segment_nodes(local.topo, 2, 4)", `cannot form 2 complete segments`),
		errorStep("provider::ray::select_segment_nodes(local.topo, null, 2)", `segment_size.*null`),
		errorStep("provider::ray::prepare_segment_topology(local.topo, 0, 2)", `segment_size must be at least 1, or null`),
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, 2, null)", one), `gpus_per_node is required when segment_size is set`),
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, 0, 0)", one), `segment_size must be at least 1, or null`),
		errorStep(fmt.Sprintf("provider::ray::sort_bundles(%s, null, 0)", one), `gpus_per_node must be at least 1, or null`),
		errorStep("provider::ray::vllm_engine_port_range(501)", `engine_index must be between 0 and 500`),
	)
}
