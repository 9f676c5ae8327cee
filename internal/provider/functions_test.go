package provider_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
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
var testTopology = acctest.Block{Type: "locals", Attrs: []acctest.Attr{{Key: "topo", Expr: `{
    n1 = { nvlink_domain = "nvlink_domain_A", topo_rank = 3 }
    n2 = { nvlink_domain = "nvlink_domain_A", topo_rank = 2 }
    n3 = { nvlink_domain = "nvlink_domain_B", topo_rank = 1 }
    n4 = { nvlink_domain = "unknown", topo_rank = -1 }
  }`}}}

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

// outputConfig renders the topology local, one output per name =
// expression (sorted by name) and the further blocks.
func outputConfig(outputs map[string]string, more ...fmt.Stringer) string {
	blocks := []fmt.Stringer{testTopology}
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		blocks = append(blocks, acctest.Output(name, outputs[name]))
	}
	return acctest.HCL(append(blocks, more...)...)
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

// errorStep expects expr to fail the plan with an error matching want; any
// space in want may be a line break of the CLI's wrapping.
func errorStep(expr, want string) resource.TestStep {
	return resource.TestStep{
		Config:      outputConfig(map[string]string{"x": expr}),
		ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(want, " ", `\s+`)),
	}
}
