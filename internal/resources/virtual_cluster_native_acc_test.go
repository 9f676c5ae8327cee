package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Acceptance tests of Ray-native placement: node label
// selectors, topology_strategy and the Ray-version gate. They need the node
// labels scripts/ray-cluster.sh gives (raytf.io/nvlink-domain,
// raytf.io/topo-rank) and detect the server's Ray version, never pin it.

// domainLabel and rankLabel are topology_labels_acc_test.go's.

// parsedRayVersion is the connected Ray's version (serverRayVersion, parsed).
func parsedRayVersion(t *testing.T) clusterspec.RayVersion {
	t.Helper()
	v, err := clusterspec.ParseRayVersion(serverRayVersion(t))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func hasTopologyStrategy(t *testing.T) bool {
	t.Helper()
	need, _ := clusterspec.ParseRayVersion(clusterspec.TopologyStrategyMinRayVersion)
	return !parsedRayVersion(t).Less(need)
}

// nodeLabelsByID lists the alive nodes' labels by node id.
func nodeLabelsByID(t *testing.T) map[string]map[string]string {
	t.Helper()
	nodes, err := acctest.Client(t).ListNodes(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}})
	if err != nil {
		t.Fatal(err)
	}
	return planning.NodeLabels(nodes)
}

// liveGroup is the named placement group as Ray's state API reports it.
func liveGroup(t *testing.T, name string) (raystate.PlacementGroup, error) {
	groups, err := acctest.Client(t).ListPlacementGroups(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("name", name), rayclient.Ne("state", raystate.PlacementGroupStateRemoved)}, Detail: true})
	if err != nil {
		return raystate.PlacementGroup{}, err
	}
	if len(groups) != 1 {
		return raystate.PlacementGroup{}, fmt.Errorf("Ray has %d live groups named %s, want 1", len(groups), name)
	}
	return groups[0], nil
}

// selectorConfig is a CPU-only cluster (it never competes for the shared
// GPUs) with extra attributes (the native ones).
func selectorConfig(name string, counts []int, extra ...acctest.Attr) string {
	return acctest.VirtualCluster{Name: name, Counts: counts, NoGPUs: true, Extra: extra}.String()
}

// labelSelectors is node_label_selectors = expr.
func labelSelectors(expr string) acctest.Attr {
	return acctest.Attr{Key: "node_label_selectors", Expr: expr}
}

// checkBundlesOnLabel checks in Ray (not in state) that every bundle of
// group sits on a node whose label key has the wanted value.
func checkBundlesOnLabel(t *testing.T, group, key, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		labels := nodeLabelsByID(t)
		g, err := liveGroup(t, group)
		if err != nil {
			return err
		}
		for _, b := range g.Bundles {
			if got := labels[b.NodeID][key]; got != want {
				return fmt.Errorf("%s bundle %d is on node %s with %s=%q, want %q", group, b.BundleIndex, b.NodeID, key, got, want)
			}
		}
		return nil
	}
}

// twoFreeRanks picks the topo-rank labels of two nodes with a free CPU, so
// that other clusters on the shared Ray do not fail the plan's live check.
func twoFreeRanks(t *testing.T) (string, string) {
	t.Helper()
	snap, err := liveview.FetchSnapshot(context.Background(), acctest.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	labels := planning.NodeLabels(snap.Nodes)
	var ranks []string
	for _, c := range snap.Capacity(nil) {
		if rank, ok := labels[c.ID][rankLabel]; ok && c.Available["CPU"] >= 1 {
			ranks = append(ranks, rank)
		}
	}
	if len(ranks) < 2 {
		t.Skipf("fewer than two labelled nodes with a free CPU (%v)", ranks)
	}
	sort.Strings(ranks)
	return ranks[len(ranks)-1], ranks[0]
}

// Per-node selectors land where they say: logical node 0 on the node with
// one topo-rank label, node 1 on another (with an "in" and a "!" selector),
// checked with the node ids Ray reports; impossible or malformed selectors
// fail the plan, and an import reads the selectors back from Ray.
func TestAccVirtualCluster_nodeLabelSelectors(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("native-sel")
	first, second := twoFreeRanks(t)
	selectors := labelSelectors(fmt.Sprintf(`[{ %q = %q }, { %q = "in(%s, 999)", %q = "!rackZ" }]`,
		rankLabel, first, rankLabel, second, domainLabel))
	vcTest(t, name,
		resource.TestStep{
			Config:      selectorConfig(name, []int{1, 1}, labelSelectors(fmt.Sprintf(`[{ %q = "99" }, {}]`, rankLabel))),
			ExpectError: regexp.MustCompile(`(?s)No node matches the label selector.*node_label_selectors\[0\]`),
		},
		resource.TestStep{
			Config:      selectorConfig(name, []int{1, 1}, labelSelectors(fmt.Sprintf(`[{ %q = "in(2," }, {}]`, rankLabel))),
			ExpectError: regexp.MustCompile(`(?s)Invalid label selector.*node_label_selectors\[0\].*not\s+a\s+value\s+Ray\s+accepts`),
		},
		resource.TestStep{
			Config:      selectorConfig(name, []int{1, 1}, labelSelectors(fmt.Sprintf(`[{ %q = "3" }]`, rankLabel))),
			ExpectError: regexp.MustCompile(`(?s)Selector count mismatch.*node_label_selectors\s+length\s+\(1\)\s+must\s+match`),
		},
		resource.TestStep{
			Config: selectorConfig(name, []int{1, 1}, selectors),
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
				checkBundlesOnLabel(t, name+"-node0", rankLabel, first),
				checkBundlesOnLabel(t, name+"-node1", rankLabel, second),
				func(*terraform.State) error {
					g, err := liveGroup(t, name+"-node1")
					if err != nil {
						return err
					}
					if sel := g.Bundles[0].LabelSelector; sel != nil && sel[domainLabel] != "!rackZ" {
						return fmt.Errorf("Ray keeps node 1's selector as %v", sel)
					}
					return nil
				},
			),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0, "drift"), knownvalue.StringExact("")),
				expectVC(at("placement_groups", 1, "drift"), knownvalue.StringExact("")),
				expectVC(at("topology_assignments"), knownvalue.Null()),
			},
		},
		resource.TestStep{ // import reads the selectors back from Ray
			ResourceName:            vcName,
			ImportState:             true,
			ImportStateId:           name,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: importIgnore,
		},
		// The verifying import took ownership for a state the test discards:
		// recreate, so the final destroy is this state's again.
		resource.TestStep{
			PreConfig: func() { acctest.RemoveGroupsOutOfBand(t, name+"-node0", name+"-node1") },
			Config:    selectorConfig(name, []int{1, 1}, selectors),
		},
	)
}

func topologyConfig(name string) string {
	return acctest.VirtualCluster{Name: name, Counts: []int{1, 1, 1}, NoGPUs: true, Unified: true, Strategy: "SPREAD",
		Extra: []acctest.Attr{{Key: "topology_strategy", Expr: fmt.Sprintf(`{ %q = "STRICT_PACK" }`, domainLabel)}}}.String()
}

// A unified group with topology_strategy stays inside one value of the
// domain label (every bundle's node, as Ray reports it, has the same
// value) and state shows the value Ray assigned.
func TestAccVirtualCluster_topologyStrategy(t *testing.T) {
	acctest.PreCheck(t)
	if !hasTopologyStrategy(t) {
		t.Skipf("Ray %s has no topology_strategy (needs %s); TestAccVirtualCluster_topologyStrategyNeedsNewerRay covers this server",
			parsedRayVersion(t), clusterspec.TopologyStrategyMinRayVersion)
	}
	name := acctest.Name("native-topo")
	group := clusterspec.UnifiedGroupName(name)
	var assigned string
	vcTest(t, name, resource.TestStep{
		Config: topologyConfig(name),
		Check: resource.ComposeTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{group: 3}),
			func(*terraform.State) error {
				g, err := liveGroup(t, group)
				if err != nil {
					return err
				}
				assigned = g.TopologyAssignments[domainLabel]
				if assigned == "" {
					return fmt.Errorf("Ray reports no topology assignment for %s: %v", domainLabel, g.TopologyAssignments)
				}
				return checkBundlesOnLabel(t, group, domainLabel, assigned)(nil)
			},
			func(s *terraform.State) error {
				got := s.RootModule().Resources[vcName].Primary.Attributes["topology_assignments."+domainLabel]
				if got != assigned {
					return fmt.Errorf("state topology_assignments[%s] = %q, Ray assigned %q", domainLabel, got, assigned)
				}
				return nil
			},
		),
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("topology_strategy", domainLabel), knownvalue.StringExact(clusterspec.TopologyLabelStrategy)),
			expectVC(at("topology_assignments"), knownvalue.MapSizeExact(1)),
			expectVC(at("placement_groups", 0, "drift"), knownvalue.StringExact("")),
		},
	}, resource.TestStep{ // import reads the strategy back from Ray
		ResourceName:            vcName,
		ImportState:             true,
		ImportStateId:           name + ":1,1,1",
		ImportStateVerify:       true,
		ImportStateVerifyIgnore: importIgnore,
	}, resource.TestStep{ // recreate: the import took ownership (see above)
		PreConfig: func() { acctest.RemoveGroupsOutOfBand(t, group) },
		Config:    topologyConfig(name),
	})
}

// The same configuration against a Ray without topology_strategy (2.55.1)
// fails at plan with the version message, before anything is created.
func TestAccVirtualCluster_topologyStrategyNeedsNewerRay(t *testing.T) {
	acctest.PreCheck(t)
	if hasTopologyStrategy(t) {
		t.Skipf("Ray %s has topology_strategy; this test needs a server older than %s", parsedRayVersion(t), clusterspec.TopologyStrategyMinRayVersion)
	}
	name := acctest.Name("native-oldray")
	vcTest(t, name, resource.TestStep{
		Config: topologyConfig(name),
		ExpectError: regexp.MustCompile(fmt.Sprintf(`(?s)topology_strategy\s+needs\s+Ray\s+%s\s+or\s+newer.*runs\s+Ray\s+%s`,
			regexp.QuoteMeta(clusterspec.TopologyStrategyMinRayVersion), regexp.QuoteMeta(parsedRayVersion(t).String()))),
	})
}
