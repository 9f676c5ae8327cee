package resources_test

import (
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// The scale tests plan against the stand-in dashboard (internal/standin)
// serving 10,000 alive NVL72 nodes: the real CLI and provider, no Ray. They
// assert sizes and content, never time.
const scaleNodes = 10000

// One root cause (each bundle asks 100 CPUs, no node has more than 72) on
// 10,000 nodes is one error of a few dozen lines naming
// max_colocated_worker_groups, with the node summary once.
func TestAccVirtualCluster_scaleDiagnosticsBounded(t *testing.T) {
	srv := httptest.NewServer(standin.New(standin.Generate(standin.NVL72(scaleNodes))))
	defer srv.Close()
	var planErr error
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.HCL(acctest.Provider{Address: srv.URL, MaxRetries: acctest.Retries(0)}, acctest.VirtualCluster{
				Name: "scale-diag", Counts: []int{4, 4}, GPUsPerNode: 4, Colocated: 100}),
			PlanOnly: true,
		}},
		ErrorCheck: func(err error) error { planErr = err; return nil },
	})
	if planErr == nil {
		t.Fatal("the plan succeeded; want a capacity error")
	}
	out := planErr.Error()
	lines := strings.Count(out, "\n") + 1
	errorsShown := regexp.MustCompile(`(?m)^\s*(│\s*)?Error: `).FindAllStringIndex(out, -1)
	t.Logf("plan error: %d lines, %d errors", lines, len(errorsShown))
	switch {
	case len(errorsShown) != 1:
		t.Fatalf("want one error, got %d:\n%s", len(errorsShown), out)
	case lines > 60:
		t.Fatalf("error output has %d lines, want a few dozen:\n%s", lines, head(out, 80))
	case !strings.Contains(out, "max_colocated_worker_groups = 100"):
		t.Fatalf("the error does not point at max_colocated_worker_groups:\n%s", out)
	case !regexp.MustCompile(`needs\s+\{"CPU":100,"GPU":1\}`).MatchString(out),
		!regexp.MustCompile(`and\s+9984\s+more`).MatchString(out),
		!regexp.MustCompile(`10000\s+alive\s+nodes\s+in\s+139\s+NVLink`).MatchString(out):
		t.Fatalf("the error lacks the cause or the bounded node summary:\n%s", out)
	}
}

// A 2,048 x 8 unified cluster (16,384 GPU bundles, beyond the old 1,024
// logical-node cap) plans against 10,000 nodes: the plan succeeds and knows
// its world size and node count.
func TestAccVirtualCluster_scaleUnifiedPlan(t *testing.T) {
	srv := standin.New(standin.Generate(standin.NVL72(scaleNodes)))
	hs := httptest.NewServer(srv)
	defer hs.Close()
	counts := make([]int, 2048)
	for i := range counts {
		counts[i] = 8
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: acctest.HCL(acctest.Provider{Address: hs.URL, MaxRetries: acctest.Retries(0)}, acctest.VirtualCluster{
				Name: "scale-2048x8", Counts: counts, GPUsPerNode: 8, Unified: true}),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue(vcName, tfjsonpath.New("world_size"), knownvalue.Int64Exact(16384)),
				plancheck.ExpectKnownValue(vcName, tfjsonpath.New("node_count"), knownvalue.Int64Exact(2048)),
				plancheck.ExpectKnownValue(vcName, tfjsonpath.New("bundle_ct_per_node_list"), knownvalue.ListSizeExact(2048)),
			}},
		}},
	})
	// One node list and one group list for the whole plan (validate, plan, re-plan).
	if n := srv.Requests("/api/v0/nodes"); n == 0 || n > 3 {
		t.Fatalf("the plan listed nodes %d times", n)
	}
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more bytes)", len(lines[n])))
	}
	return strings.Join(lines, "\n")
}
