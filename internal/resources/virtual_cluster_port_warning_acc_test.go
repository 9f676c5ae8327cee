package resources_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// portOverlapWarning is the summary of the port-range warning (claimPorts).
const portOverlapWarning = "Port range overlaps another virtual cluster"

// Chained select_nodes clusters on disjoint nodes share a port range without
// a warning, at apply and on every later plan; two clusters that may land on
// the same node (neither pinned) are warned about. Ray is checked for the
// chained clusters' groups on disjoint nodes.
func TestAccVirtualCluster_portWarningOnlyOnSharedNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("ports")
	removeGroupsAtCleanup(t, name)
	chained := acctest.NewWorkDir(t, acctest.HCL(
		acctest.VirtualCluster{Label: "train", Name: name + "-train", Counts: []int{1}, SelectNodes: true},
		acctest.VirtualCluster{Label: "inference", Name: name + "-inference", Counts: []int{1}, SelectNodes: true,
			ExcludeNodeIDs: "ray_virtual_cluster.train.selected_node_ids"}))
	for _, args := range [][]string{{"apply", "-auto-approve"}, {"plan"}} {
		if out := chained.MustRun(args...); strings.Contains(out, portOverlapWarning) {
			t.Errorf("%s of chained clusters on disjoint nodes warned about ports:\n%s", args[0], out)
		}
	}
	groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
	if err != nil || len(groups) != 2 {
		t.Fatalf("Ray holds %d groups of %s (%v), want 2", len(groups), name, err)
	}
	nodes := map[string]bool{}
	for _, g := range groups {
		for _, b := range g.Bundles {
			nodes[b.NodeID] = true
		}
	}
	if len(nodes) != 2 {
		t.Errorf("the chained clusters share a node in Ray: %v", nodes)
	}
	chained.MustRun("destroy", "-auto-approve")

	loose := acctest.NewWorkDir(t, acctest.HCL(
		acctest.VirtualCluster{Label: "a", Name: name + "-a", Counts: []int{1}},
		acctest.VirtualCluster{Label: "b", Name: name + "-b", Counts: []int{1}}))
	if out := loose.MustRun("plan"); !strings.Contains(out, portOverlapWarning) {
		t.Errorf("plan of two unpinned clusters with one port range did not warn:\n%s", out)
	}
}
