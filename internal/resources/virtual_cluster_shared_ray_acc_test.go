package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Acceptance tests of a Ray cluster shared with other tenants:
// capacity_check modes and node selection that sees other groups. Other
// tenants' groups are made out of band with plain ray.util calls.

// holderNamespace is the Ray namespace of the out-of-band groups.
const holderNamespace = "terraform-ray-acc-tenants"

// gpuHolder is a group of another tenant holding every GPU of the five GPU
// nodes (one STRICT_SPREAD bundle of 4 GPUs per node).
func gpuHolder(name string) plainray.Group {
	bundles := make([]map[string]float64, 5)
	for i := range bundles {
		bundles[i] = map[string]float64{"GPU": 4}
	}
	return plainray.Group{Name: name, Strategy: "STRICT_SPREAD", Bundles: bundles}
}

// capacityConfig is a per-node cluster of counts bundles per logical node
// (one GPU each) with capacity_check (none when ""), and an optional
// provider capacity_check.
func capacityConfig(name string, counts []int, resourceMode, providerMode, readyTimeout string) string {
	var blocks []fmt.Stringer
	if providerMode != "" {
		blocks = append(blocks, acctest.Provider{CapacityCheck: providerMode})
	}
	return acctest.HCL(append(blocks, acctest.VirtualCluster{Name: name, Counts: counts, GPUsPerNode: 4,
		PortLow: 1700, PortHigh: 1800, ReadyTimeout: readyTimeout, CapacityCheck: resourceMode})...)
}

// goroutineTB lets a helper that fails with Fatal run off the test
// goroutine: Fatal records the failure with Errorf and ends the goroutine.
type goroutineTB struct{ testing.TB }

func (g goroutineTB) Fatal(args ...any) { g.Error(args...); runtime.Goexit() }
func (g goroutineTB) Fatalf(format string, args ...any) {
	g.Errorf(format, args...)
	runtime.Goexit()
}

// removeWhenPending removes the holder group once Ray lists a group of
// cluster name as PENDING (the apply is waiting for it), in the background;
// the returned func waits until it has.
func removeWhenPending(t *testing.T, name, holder string) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := acctest.Client(t)
		for bound := time.Now().Add(3 * time.Minute); time.Now().Before(bound); time.Sleep(500 * time.Millisecond) {
			groups, err := acctest.LiveGroups(context.Background(), client, name)
			if err == nil && slices.ContainsFunc(groups, func(g raystate.PlacementGroup) bool {
				return g.State == raystate.PlacementGroupStatePending
			}) {
				t.Logf("%s is pending: removing the other tenant's group %s", name, holder)
				break
			}
		}
		plainray.RemoveGroups(goroutineTB{t}, holderNamespace, holder)
	}()
	return func() { <-done }
}

// With another tenant's group holding every GPU: "free" (the default) fails
// the plan; "total", from the provider or the resource, plans, and its apply
// waits until the holder is removed during the wait, then succeeds.
func TestAccVirtualCluster_capacityCheckTotal(t *testing.T) {
	name := acctest.Name("captotal")
	holder := "tenant-" + name
	counts := []int{2, 2}
	groups := map[string]int{name + "-node0": 2, name + "-node1": 2}
	var waitRemoved func()
	vcTest(t, name,
		resource.TestStep{
			PreConfig: func() {
				plainray.CreateGroups(t, holderNamespace, gpuHolder(holder))
				t.Cleanup(func() {
					if waitRemoved != nil {
						waitRemoved()
					}
					plainray.RemoveGroups(t, holderNamespace, holder)
				})
			},
			Config:      capacityConfig(name, counts, "", "", "120s"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)cannot hold this virtual cluster.*not enough GPU: requested 4 GPU, 0 available`),
		},
		resource.TestStep{ // "total" from the provider plans the create the default mode refused
			Config:             capacityConfig(name, counts, "", "total", "120s"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionCreate),
			}},
		},
		resource.TestStep{
			PreConfig: func() { waitRemoved = removeWhenPending(t, name, holder) },
			Config:    capacityConfig(name, counts, "total", "", "120s"),
			Check: resource.ComposeAggregateTestCheckFunc(
				func(*terraform.State) error { waitRemoved(); return nil },
				acctest.CheckGroupsInRay(t, name, groups),
			),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(vcName, tfjsonpath.New("capacity_check"), knownvalue.StringExact("total")),
			},
		},
	)
}

// "none" plans a cluster larger than the Ray cluster (24 GPUs of 20); its
// apply waits ready_timeout, fails, and leaves no group behind in Ray.
func TestAccVirtualCluster_capacityCheckNone(t *testing.T) {
	name := acctest.Name("capnone")
	counts := []int{4, 4, 4, 4, 4, 4}
	noGroups := func() {
		if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
			t.Errorf("after the failed apply: %v", err)
		}
	}
	vcTest(t, name,
		resource.TestStep{
			Config:      capacityConfig(name, counts, "", "", "5s"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)cannot hold this virtual cluster.*requested 24 GPU, 20 available`),
		},
		resource.TestStep{
			Config:      capacityConfig(name, counts, "total", "", "5s"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)cannot hold this virtual cluster.*requested 24 GPU, 20 available`),
		},
		resource.TestStep{ // "none" plans the create the other modes refused
			Config:             capacityConfig(name, counts, "none", "", "5s"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionCreate),
				plancheck.ExpectKnownValue(vcName, tfjsonpath.New("capacity_check"), knownvalue.StringExact("none")),
			}},
		},
		resource.TestStep{
			Config: capacityConfig(name, counts, "none", "", "5s"),
			ExpectError: regexp.MustCompile(`(?s)Cannot create the virtual cluster.*not\s+ready\s+after\s+5s` +
				`.*No\s+placement\s+group\s+of\s+this\s+cluster\s+was\s+left\s+behind`),
		},
		resource.TestStep{
			PreConfig:   noGroups,
			Config:      capacityConfig(name, counts, "sometimes", "", "5s"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)capacity_check.*value must be one of`),
		},
	)
}

// selectCluster is a select_nodes cluster of two logical nodes of 4 GPUs
// in one 2-node NVLink segment (a whole domain of the test cluster).
func selectCluster(label, name string) acctest.VirtualCluster {
	return acctest.VirtualCluster{Label: label, Name: name, Counts: []int{4, 4}, GPUsPerNode: 4, Unified: true,
		SegmentSize: 2, SelectNodes: true, PortLow: 1700, PortHigh: 1800}
}

// domainNodes lists the ids of the alive nodes of NVLink domain rack (the
// test cluster's nvlink_domain_<rack> resource).
func domainNodes(t *testing.T, rack string) []string {
	t.Helper()
	nodes, err := acctest.Client(t).ListNodes(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range nodes {
		if n.ResourcesTotal["nvlink_domain_"+rack] > 0 {
			ids = append(ids, n.NodeID)
		}
	}
	return ids
}

// checkOnDomain asserts through Ray's state API that every bundle of
// cluster name sits on a node of NVLink domain rack.
func checkOnDomain(t *testing.T, name, rack string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		want := domainNodes(t, rack)
		groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
		if err != nil {
			return err
		}
		n := 0
		for _, g := range groups {
			for _, b := range g.Bundles {
				n++
				if !slices.Contains(want, b.NodeID) {
					return fmt.Errorf("bundle %d of %s is on node %s, want a node of %s %v", b.BundleIndex, g.Name, b.NodeID, rack, want)
				}
			}
		}
		if n == 0 {
			return fmt.Errorf("no bundle of %s in Ray", name)
		}
		return nil
	}
}

// Cluster A (select_nodes) fills rackA; cluster B, another name that does
// not exclude A's nodes, plans onto the free rackB and applies; cluster C
// then finds no free complete segment, and the plan error names the groups
// holding each domain's nodes.
func TestAccVirtualCluster_selectNodesSeesOtherClusters(t *testing.T) {
	name := acctest.Name("tenants")
	a, b := selectCluster("a", name+"-a"), selectCluster("b", name+"-b")
	vcTest(t, name,
		resource.TestStep{
			Config: a.String(),
			Check:  checkOnDomain(t, name+"-a", "rackA"),
		},
		resource.TestStep{
			Config: acctest.HCL(a, b),
			// B's choice goes around A's groups: final only at apply.
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("ray_virtual_cluster.b", tfjsonpath.New("selected_node_ids")),
			}},
			Check: resource.ComposeAggregateTestCheckFunc(
				checkOnDomain(t, name+"-a", "rackA"),
				checkOnDomain(t, name+"-b", "rackB"),
			),
		},
		resource.TestStep{
			Config:   acctest.HCL(a, b, selectCluster("c", name+"-c")),
			PlanOnly: true,
			ExpectError: regexp.MustCompile(`(?s)Cannot select nodes.*cannot form 1 complete segments of 2 nodes` +
				`.*4 node\(s\) were left out: their free resources.*nvlink_domain_rackA:` +
				`.*held by "` + name + `-a-unified".*nvlink_domain_rackB:.*held by "` + name + `-b-unified"`),
		},
	)
}

// A saved plan leaves the node choice to the apply (Terraform gives that
// apply nothing to tell it from a new plan, so a choice known at plan could
// not be kept). Another tenant (plain ray.util) takes both complete segments
// before the apply: it fails at once with the provider's own error naming
// the holder, creates nothing, and never hits Terraform's "inconsistent
// final plan".
func TestAccVirtualCluster_selectNodesSavedPlanTaken(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("saved")
	holder := "tenant-" + name
	w := acctest.NewWorkDirDestroyed(t, selectCluster("b", name).String())
	w.MustRun("plan", "-out=tfplan")
	var both []map[string]float64
	for _, rack := range []string{"rackA", "rackB"} {
		for range 2 {
			both = append(both, map[string]float64{"GPU": 4, "nvlink_domain_" + rack: 0.001})
		}
	}
	plainray.CreateGroups(t, holderNamespace, plainray.Group{Name: holder, Strategy: "STRICT_SPREAD", Bundles: both})
	t.Cleanup(func() { plainray.RemoveGroups(t, holderNamespace, holder) })
	start := time.Now()
	out, err := w.Run("apply", "tfplan")
	t.Logf("the apply of the stale plan returned after %s", time.Since(start).Round(100*time.Millisecond))
	flat := strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, fmt.Sprintf(`held by "%s"`, holder)) {
		t.Errorf("apply of the stale plan: err=%v; want the provider's error naming holder %s", err, holder)
	}
	if strings.Contains(flat, "inconsistent final plan") {
		t.Errorf("the apply hit Terraform's inconsistent final plan:\n%s", out)
	}
	if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
		t.Errorf("the failed apply left groups: %v", err)
	}
}
