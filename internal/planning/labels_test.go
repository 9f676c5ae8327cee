package planning

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

var testLabels = map[string]map[string]string{
	"head": {clusterspec.NodeIDLabel: "head"},
	"a1":   {clusterspec.NodeIDLabel: "a1", "d": "rackA", "r": "3"},
	"a2":   {clusterspec.NodeIDLabel: "a2", "d": "rackA", "r": "2"},
	"b1":   {clusterspec.NodeIDLabel: "b1", "d": "rackB", "r": "5"},
	"b2":   {clusterspec.NodeIDLabel: "b2", "d": "rackB", "r": "4"},
	"c1":   {clusterspec.NodeIDLabel: "c1", "d": "rackC", "r": "6"},
}

func TestChooseLabelledNodes(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.NodeLabelSelectors = []map[string]string{{"d": "rackB"}, {"d": "rackB"}}
	ids, _, issues := ChooseLabelledNodes(s, clusterspectest.Topo, nil, testLabels)
	if len(issues) != 0 || !cmp.Equal(ids, []string{"b2", "b1"}) {
		t.Fatalf("rackB only: %v %+v", ids, issues)
	}
	// A node-id selector the choice contradicts is an error naming the entry and pinning.
	s.NodeLabelSelectors = []map[string]string{{"d": "rackB"}, {clusterspec.NodeIDLabel: "c1"}}
	_, _, issues = ChooseLabelledNodes(s, clusterspectest.Topo, nil, testLabels)
	if len(issues) != 1 || issues[0].Path != "node_label_selectors[0]" && issues[0].Path != "node_label_selectors[1]" {
		t.Fatalf("contradiction: %+v", issues)
	}
	if !strings.Contains(issues[len(issues)-1].Detail, "does not satisfy") {
		t.Fatalf("detail: %s", issues[0].Detail)
	}
	s.NodeLabelSelectors = []map[string]string{{"d": "rackZ"}, {"d": "rackZ"}}
	if _, _, issues = ChooseLabelledNodes(s, clusterspectest.Topo, nil, testLabels); len(issues) != 1 || issues[0].Path != clusterspec.AttrSelectNodes {
		t.Fatalf("nothing matches: %+v", issues)
	}
}

func capacityOf(gpus float64) []topology.NodeCapacity {
	var out []topology.NodeCapacity
	for _, n := range clusterspectest.Topo {
		r := topology.Resources{"CPU": 4, "GPU": gpus}
		if n.ID == "head" {
			r["GPU"] = 0
		}
		out = append(out, topology.NodeCapacity{ID: n.ID, Total: r, Available: r})
	}
	return out
}

func TestLiveChecksHonourSelectors(t *testing.T) {
	s := clusterspectest.ValidSpec()
	s.NumGPUsPerNode = 4
	s.BundleCtPerNode = []int{4, 4}
	s.NodeLabelSelectors = []map[string]string{{"d": "rackC"}, {"d": "rackC"}}
	s = s.WithDefaults()
	if issues := CheckSelectors(s, testLabels); len(issues) != 0 {
		t.Fatalf("rackC exists: %+v", issues)
	}
	// Both logical nodes need rackC's one 4-GPU node: capacity fails only with labels.
	if sh, _ := CheckCapacity(s, capacityOf(4), testLabels, nil); len(sh.Errors) == 0 {
		t.Fatal("two rackC-only nodes fit one rackC node")
	}
	if sh, _ := CheckCapacity(s, capacityOf(4), nil, nil); len(sh.Errors) != 0 {
		t.Fatalf("without labels the check cannot judge selectors: %v", sh.Errors)
	}
	if sh, _ := CheckSnapshotCapacity(s, snapshotOf(4), nil); len(sh.Errors) == 0 {
		t.Fatal("snapshot check: two rackC-only nodes fit one rackC node")
	}
	s.NodeLabelSelectors[1] = map[string]string{"d": "rackA"}
	if sh, _ := CheckCapacity(s, capacityOf(4), testLabels, nil); len(sh.Errors) != 0 {
		t.Fatalf("rackC + rackA fits: %v", sh.Errors)
	}
	s.NodeLabelSelectors[1] = map[string]string{"d": "rackZ"}
	if issues := CheckSelectors(s, testLabels); len(issues) != 1 || issues[0].Path != "node_label_selectors[1]" {
		t.Fatalf("rackZ: %+v", issues)
	}
}

// snapshotOf is testTopo as a snapshot: 4 CPUs each, gpus GPUs on every
// node but the head, testLabels as labels.
func snapshotOf(gpus float64) *Snapshot {
	snap := &Snapshot{}
	for _, n := range clusterspectest.Topo {
		total := map[string]float64{"CPU": 4, "GPU": gpus}
		if n.ID == "head" {
			total["GPU"] = 0
		}
		snap.Nodes = append(snap.Nodes, raystate.Node{NodeID: n.ID, ResourcesTotal: total, Labels: testLabels[n.ID]})
	}
	return snap
}

func TestCheckTopologyStrategy(t *testing.T) {
	s := clusterspectest.ValidSpec()
	s.NumGPUsPerNode = 4
	s.UseUnifiedPG = true
	s.BundleCtPerNode = []int{4, 4}
	s.TopologyStrategy = map[string]string{"d": clusterspec.TopologyLabelStrategy}
	s = s.WithDefaults()
	if why := CheckTopologyStrategy(s, snapshotOf(4)); why != "" {
		t.Fatalf("8 GPUs fit rackA: %s", why)
	}
	s.BundleCtPerNode = []int{4, 4, 4}
	if why := CheckTopologyStrategy(s, snapshotOf(4)); !strings.Contains(why, `label "d"`) {
		t.Fatalf("12 GPUs fit no rack: %q", why)
	}
	if issues := CheckSelectors(s, map[string]map[string]string{"a1": {"x": "y"}}); len(issues) != 1 || issues[0].Path != clusterspec.AttrTopologyStrategy {
		t.Fatalf("no node has the label: %+v", issues)
	}
}
