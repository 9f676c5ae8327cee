package resources_test

import (
	"context"
	"fmt"
	"regexp"
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
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Acceptance tests of the safe lifecycle: clusters that choose
// their nodes once, node churn, ownership across states and exact pinning.
// Node churn uses the extra node rackB-0 (nvlink_domain_rackB, topo_rank 0),
// which scripts/ray-cluster.sh starts only on request; the six shared nodes
// are never stopped.

const (
	extraNode  = "rackB-0"
	lcNodeWait = 90 * time.Second
)

var extraIP = acctest.NodeIP(extraNode)

// selectConfig is a cluster that selects its own nodes: one {CPU: 1} bundle
// per logical node (no GPUs, so it never competes for the shared GPUs).
func selectConfig(name string, nodes int, more func(*acctest.VirtualCluster)) string {
	c := acctest.VirtualCluster{Name: name, Counts: slices.Repeat([]int{1}, nodes), NoGPUs: true, SelectNodes: true,
		PortLow: 1700, PortHigh: 1800}
	more(&c)
	return c.String()
}

// nodeIDs maps the IPs of the alive nodes to their ids.
func nodeIDs(t *testing.T) map[string]string {
	t.Helper()
	nodes, err := acctest.Client(t).ListNodes(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes {
		out[n.NodeIP] = n.NodeID
	}
	return out
}

// startExtraNode starts rackB-0 and waits until Ray lists it alive; a
// cleanup stops it again.
func startExtraNode(t *testing.T) string {
	t.Helper()
	t.Cleanup(func() { stopExtraNode(t) })
	// On a loaded machine a raylet can time out waiting for its agents: retry.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = acctest.ClusterScript(t, 3*time.Minute, "start-node", extraNode); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting %s: %v", extraNode, err)
	}
	deadline := time.Now().Add(lcNodeWait)
	for time.Now().Before(deadline) {
		if id := nodeIDs(t)[extraIP]; id != "" {
			return id
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("%s did not show up alive within %s", extraNode, lcNodeWait)
	return ""
}

// stopExtraNode stops rackB-0 and waits until Ray no longer lists it alive.
func stopExtraNode(t *testing.T) {
	t.Helper()
	if nodeIDs(t)[extraIP] == "" {
		return
	}
	if _, err := acctest.ClusterScript(t, 3*time.Minute, "stop-node", extraNode); err != nil {
		t.Errorf("stopping %s: %v", extraNode, err)
		return
	}
	deadline := time.Now().Add(lcNodeWait)
	for time.Now().Before(deadline) {
		if nodeIDs(t)[extraIP] == "" {
			return
		}
		time.Sleep(time.Second)
	}
	t.Errorf("%s still alive %s after stop-node", extraNode, lcNodeWait)
}

// excludeAllBut is an exclude_node_ids value holding every alive node except keep.
func excludeAllBut(t *testing.T, keep ...string) string {
	var ids []string
	for _, id := range nodeIDs(t) {
		if !slices.Contains(keep, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return acctest.Strings(ids)
}

// checkBundleNodesInRay asserts through Ray's state API that bundle i of
// every group of prefix sits on nodes[i] in logical-node order (per-node
// groups: group <prefix>-node<i>; unified: bundles of each node in order).
func checkBundleNodesInRay(t *testing.T, prefix string, perNode []int, nodes *[]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), prefix)
		if err != nil {
			return err
		}
		var placed []string
		for _, g := range groups {
			for _, b := range g.Bundles {
				placed = append(placed, b.NodeID)
			}
		}
		var want []string
		for i, c := range perNode {
			for j := 0; j < c; j++ {
				want = append(want, (*nodes)[i])
			}
		}
		slices.Sort(placed)
		slices.Sort(want)
		if !slices.Equal(placed, want) {
			return fmt.Errorf("bundles sit on %v in Ray, want exactly the selected nodes %v", placed, want)
		}
		return nil
	}
}

// selectedFromState reads selected_node_ids into ids.
func selectedFromState(ids *[]string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[vcName]
		if rs == nil {
			return fmt.Errorf("%s not in state", vcName)
		}
		*ids = nil
		for i := 0; ; i++ {
			v, ok := rs.Primary.Attributes[fmt.Sprintf("selected_node_ids.%d", i)]
			if !ok {
				break
			}
			*ids = append(*ids, v)
		}
		return nil
	}
}

// A node joining in a domain of lower topo_rank (which select_segment_nodes
// would now prefer) and a node the cluster does not use leaving both give an
// empty plan: the selection lives in state.
func TestAccLifecycle_churnElsewhereKeepsPlanEmpty(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("churn")
	ids := nodeIDs(t)
	cfg := selectConfig(name, 2, func(c *acctest.VirtualCluster) { c.SegmentSize = 2 })
	var selected []string
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(vcName, tfjsonpath.New("selected_node_ids"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact(ids[acctest.NodeIP("rackA-2")]), knownvalue.StringExact(ids[acctest.NodeIP("rackA-1")]),
				})),
				statecheck.ExpectKnownValue(vcName, tfjsonpath.New("owner_id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{32}$`))),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				selectedFromState(&selected),
				acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
				checkBundleNodesInRay(t, name, []int{1, 1}, &selected),
			),
		},
		resource.TestStep{
			PreConfig:        func() { startExtraNode(t) },
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			PreConfig:        func() { stopExtraNode(t) },
			Config:           cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			Check:            checkBundleNodesInRay(t, name, []int{1, 1}, &selected),
		},
	)
}

// Losing a node the cluster holds plans a replacement (onto a node still
// alive), and Ray ends up with the groups on the new node.
func TestAccLifecycle_heldNodeGoneReplaces(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("held")
	extra := startExtraNode(t)
	spare := nodeIDs(t)[acctest.NodeIP("rackB-2")]
	cfg := selectConfig(name, 1, func(c *acctest.VirtualCluster) { c.ExcludeNodeIDs = excludeAllBut(t, extra, spare) })
	var selected []string
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(vcName, tfjsonpath.New("selected_node_ids"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(extra)})),
			},
			Check: resource.ComposeAggregateTestCheckFunc(selectedFromState(&selected), checkBundleNodesInRay(t, name, []int{1}, &selected)),
		},
		resource.TestStep{
			PreConfig: func() { stopExtraNode(t) },
			Config:    cfg,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(vcName, tfjsonpath.New("selected_node_ids"),
					knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(spare)})),
			},
			Check: resource.ComposeAggregateTestCheckFunc(selectedFromState(&selected),
				acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
				checkBundleNodesInRay(t, name, []int{1}, &selected)),
		},
	)
}

// Two blocks of one configuration declaring the same name are a plan error.
func TestAccLifecycle_sameNameTwiceInOneConfiguration(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("twice")
	block := func(label string) acctest.VirtualCluster {
		return acctest.VirtualCluster{Label: label, Name: name, Counts: []int{1}, NoGPUs: true}
	}
	vcTest(t, name, resource.TestStep{
		Config:   acctest.HCL(block("a"), block("b")),
		PlanOnly: true,
		ExpectError: regexp.MustCompile(`(?s)Duplicate virtual cluster name.*` +
			strings.Join(strings.Fields(`Another ray_virtual_cluster in this configuration already declares name "`+name+`"`), `\s+`)),
	})
}

// A second working directory declaring the same cluster cannot take it:
// its plan (not only its apply) fails, naming the owner's token prefix, the
// creation time and the import command; Ray still holds the first state's
// groups and record untouched, and the second directory's destroy touches
// nothing.
func TestAccLifecycle_secondStateCannotTakeCluster(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("owned")
	var ids map[string]string
	vcTest(t, name,
		resource.TestStep{
			Config: plainCluster(name).String(),
			Check:  groupIDs(t, name, &ids),
		},
		resource.TestStep{
			PreConfig: func() {
				rec := acctest.ReadRecord(t, name)
				other := acctest.NewWorkDir(t, plainCluster(name).String())
				out, err := other.Run("plan")
				flat := strings.Join(strings.Fields(out), " ")
				for _, want := range []string{
					"Virtual cluster owned by another Terraform state",
					fmt.Sprintf(`already holds virtual cluster %q, owned by another Terraform state (owner %s…, created %s)`,
						name, record.OwnerPrefix(rec.Owner), rec.CreatedAt),
					fmt.Sprintf(`placement groups "%s-node0" (CREATED), "%s-node1" (CREATED)`, name, name),
					"terraform import ray_virtual_cluster.<label> " + name,
				} {
					if err == nil || !strings.Contains(flat, want) {
						t.Errorf("second plan: err=%v, want it to fail saying %q", err, want)
					}
				}
				other.MustRun("destroy", "-auto-approve")
				if after := acctest.ReadRecord(t, name); after == nil || after.Owner != rec.Owner || after.CreatedAt != rec.CreatedAt {
					t.Errorf("the record changed: %+v, was %+v", after, rec)
				}
			},
			Config:           plainCluster(name).String(),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			Check:            resource.ComposeAggregateTestCheckFunc(sameGroupIDs(t, name, &ids)),
		},
	)
}

// Groups made out of band with plain ray.util under the cluster's group
// name (as NeMo-RL itself names them) fail the plan, named as groups
// without a record, and are left alone; once they are gone the same
// configuration applies.
func TestAccLifecycle_planRefusesGroupsWithoutRecord(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("foreign")
	unified := name + "-unified"
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1}, NoGPUs: true, Unified: true}.String()
	var ids map[string]string
	vcTest(t, name,
		resource.TestStep{
			PreConfig: func() {
				acctest.CreateGroupsOutOfBand(t, unified)
				if err := groupIDs(t, name, &ids)(nil); err != nil {
					t.Fatal(err)
				}
			},
			Config:   cfg,
			PlanOnly: true,
			ExpectError: wrappedRE("Placement groups of this name already exist",
				regexp.QuoteMeta(fmt.Sprintf(`named like virtual cluster %q: %q (CREATED)`, name, unified)), "no ownership record",
				"NeMo-RL's RayVirtualCluster", regexp.QuoteMeta("terraform import ray_virtual_cluster.<label> "+name)),
		},
		resource.TestStep{
			PreConfig: func() {
				if err := sameGroupIDs(t, name, &ids)(nil); err != nil {
					t.Fatalf("the refused plan touched the out-of-band group: %v", err)
				}
				acctest.RemoveGroupsOutOfBand(t, unified)
			},
			Config: cfg,
			Check:  acctest.CheckGroupsInRay(t, name, map[string]int{unified: 1}),
		},
	)
}

// groupIDs records the placement-group ids Ray reports for prefix.
func groupIDs(t *testing.T, prefix string, ids *map[string]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), prefix)
		if err != nil {
			return err
		}
		*ids = map[string]string{}
		for _, g := range groups {
			(*ids)[g.Name] = g.PlacementGroupID
		}
		if len(*ids) == 0 {
			return fmt.Errorf("no groups of %s in Ray", prefix)
		}
		return nil
	}
}

// sameGroupIDs asserts that Ray still holds exactly the recorded groups.
func sameGroupIDs(t *testing.T, prefix string, ids *map[string]string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		before := *ids
		var now map[string]string
		if err := groupIDs(t, prefix, &now)(s); err != nil {
			return err
		}
		if fmt.Sprint(now) != fmt.Sprint(before) {
			return fmt.Errorf("groups in Ray changed: %v, were %v", now, before)
		}
		return nil
	}
}

// With segment_size 2 over a 3-node domain, the cluster's bundles sit only
// on the two selected nodes (node pinning), checked in Ray itself.
func TestAccLifecycle_segmentIsExactlyTheSelectedNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("exact")
	extra := startExtraNode(t)
	ids := nodeIDs(t)
	rackB := []string{extra, ids[acctest.NodeIP("rackB-2")], ids[acctest.NodeIP("rackB-1")]}
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{2, 2}, NoGPUs: true, Unified: true, Strategy: "PACK",
		SelectNodes: true, SegmentSize: 2, PortLow: 1900, PortHigh: 1999, ExcludeNodeIDs: excludeAllBut(t, rackB...)}.String()
	var selected []string
	vcTest(t, name, resource.TestStep{
		Config: cfg,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(vcName, tfjsonpath.New("selected_node_ids"), knownvalue.ListExact([]knownvalue.Check{
				knownvalue.StringExact(rackB[0]), knownvalue.StringExact(rackB[1]),
			})),
		},
		Check: resource.ComposeAggregateTestCheckFunc(
			selectedFromState(&selected),
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 4}),
			checkBundleNodesInRay(t, name, []int{2, 2}, &selected),
		),
	})
}

// A forced replacement, `terraform taint` or `apply -replace`, replaces the
// cluster: Terraform plans its create half without telling the provider, and
// that half is not taken for a second cluster of the same name. Ray then
// holds new groups under the name, and nothing else.
func TestAccLifecycle_forcedReplacement(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("forced")
	var ids map[string]string
	vcTest(t, name,
		resource.TestStep{
			Config: plainCluster(name).String(),
			Check:  groupIDs(t, name, &ids),
		},
		resource.TestStep{
			Taint:            []string{vcName},
			Config:           plainCluster(name).String(),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionDestroyBeforeCreate),
			Check:            newGroupIDs(t, name, &ids),
		},
		resource.TestStep{
			PreConfig: func() {
				replaced := acctest.Name("replaced")
				other := acctest.NewWorkDirDestroyed(t, plainCluster(replaced).String())
				other.MustRun("apply", "-auto-approve")
				var before map[string]string
				if err := groupIDs(t, replaced, &before)(nil); err != nil {
					t.Fatal(err)
				}
				other.MustRun("apply", "-auto-approve", "-replace="+vcName)
				if err := newGroupIDs(t, replaced, &before)(nil); err != nil {
					t.Error(err)
				}
				other.MustRun("destroy", "-auto-approve")
			},
			Config:           plainCluster(name).String(),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	)
}

// newGroupIDs checks that Ray holds the groups of the cluster under the same
// names as before, each with a new id, and records the new ids.
func newGroupIDs(t *testing.T, prefix string, ids *map[string]string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		before := *ids
		if err := groupIDs(t, prefix, ids)(s); err != nil {
			return err
		}
		if len(*ids) != len(before) {
			return fmt.Errorf("groups in Ray after the replacement: %v, were %v", *ids, before)
		}
		for g, id := range before {
			if now, ok := (*ids)[g]; !ok || now == id {
				return fmt.Errorf("group %s was not replaced: %v, were %v", g, *ids, before)
			}
		}
		return nil
	}
}
