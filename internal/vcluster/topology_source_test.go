package vcluster

import (
	"reflect"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

const (
	testDomainLabel = "raytf.io/nvlink-domain"
	testRankLabel   = "raytf.io/topo-rank"
)

var labelSource = TopologySource{DomainLabel: testDomainLabel, RankLabel: testRankLabel}

// testNodes is testTopo as Ray reports it: every node carries both the
// reference's resources and the labels that mirror them (as
// scripts/ray-cluster.sh starts them), except the head, which has no domain.
func testNodes() []raystate.Node {
	out := make([]raystate.Node, 0, len(testTopo))
	for _, n := range testTopo {
		res := map[string]float64{"CPU": 4, "GPU": 4, topology.TopoRankKey: float64(n.TopoRank)}
		labels := map[string]string{NodeIDLabel: n.ID, testRankLabel: itoa(n.TopoRank)}
		if n.Domain != topology.NVLinkDomainUnknown {
			res[n.Domain] = 1
			labels[testDomainLabel] = n.Domain[len(topology.NVLinkDomainPrefix):]
		}
		out = append(out, raystate.Node{NodeID: n.ID, ResourcesTotal: res, Labels: labels})
	}
	return out
}

func itoa(i int) string { return string(rune('0' + i)) }

func TestLabelSourceSelectsLikeResourceSource(t *testing.T) {
	nodes := testNodes()
	byResource := TopologySource{}.NodeTopology(nodes)
	byLabel := labelSource.NodeTopology(nodes)
	for i := range byLabel {
		if byLabel[i].TopoRank != byResource[i].TopoRank {
			t.Fatalf("rank of %s: label %d, resource %d", byLabel[i].ID, byLabel[i].TopoRank, byResource[i].TopoRank)
		}
	}
	if byLabel[0].Domain != topology.NVLinkDomainUnknown || byLabel[1].Domain != "rackA" {
		t.Fatalf("label domains are the label values: %+v", byLabel)
	}
	if !reflect.DeepEqual(topology.TopologicalOrder(byLabel), topology.TopologicalOrder(byResource)) {
		t.Fatal("topological order differs between the sources")
	}
	for _, seg := range []int{1, 2} {
		s := selectingSpec(1, 1)
		s.SegmentSize = ptr(seg)
		idsR, _, errR := s.ChooseNodes(byResource, nil)
		idsL, domainsL, errL := s.ChooseNodes(byLabel, nil)
		if errR != nil || errL != nil || !reflect.DeepEqual(idsR, idsL) {
			t.Fatalf("segment %d: resource %v %v, label %v %v", seg, idsR, errR, idsL, errL)
		}
		if domainsL[0] != "rackA" {
			t.Fatalf("label domains: %v", domainsL)
		}
	}
}

func TestLabelSourceSentinels(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		domain string
		rank   int
	}{
		{nil, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testDomainLabel: "", testRankLabel: ""}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testDomainLabel: "r1", testRankLabel: "12"}, "r1", 12},
		{map[string]string{testRankLabel: "007"}, topology.NVLinkDomainUnknown, 7},
		{map[string]string{testRankLabel: "-3"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testRankLabel: "+3"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testRankLabel: "3.0"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testRankLabel: "rack"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{testRankLabel: "1234567890123456789"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
	} {
		// The resources say otherwise: a label source ignores them.
		res := map[string]float64{"nvlink_domain_X": 1, topology.TopoRankKey: 9}
		d, r := labelSource.Node(res, tc.labels)
		if d != tc.domain || r != tc.rank {
			t.Errorf("labels %v: got (%q, %d), want (%q, %d)", tc.labels, d, r, tc.domain, tc.rank)
		}
	}
	// One field from a label, the other from its resource.
	d, r := TopologySource{RankLabel: testRankLabel}.Node(map[string]float64{"nvlink_domain_X": 1}, map[string]string{testRankLabel: "4"})
	if d != "nvlink_domain_X" || r != 4 {
		t.Fatalf("mixed source: %q %d", d, r)
	}
}

func TestMissingLabelSupport(t *testing.T) {
	nodes := testNodes()
	if err := labelSource.MissingLabelSupport(nodes, "2.60.0"); err != nil {
		t.Fatal(err)
	}
	nodes[2].Labels = nil
	if err := labelSource.MissingLabelSupport(nodes, "2.40.0"); err == nil {
		t.Fatal("a node without labels must be an error")
	}
	if err := (TopologySource{}).MissingLabelSupport(nodes, "2.40.0"); err != nil {
		t.Fatal("the resource source needs no labels")
	}
}

func TestValidateLabelKey(t *testing.T) {
	for _, ok := range []string{"rack", "raytf.io/nvlink-domain", "a.b-c/x_y.z", "ray.io/node-id"} {
		if err := ValidateLabelKey(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/x", "x/", "a b", "-x", "x-", "a/b/c", "a..b/x"} {
		if ValidateLabelKey(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	issues := TopologySource{DomainLabel: "bad key"}.Validate(AttrTopologyLabels)
	if len(issues) != 1 || issues[0].Path != "topology_labels.nvlink_domain" {
		t.Fatalf("issues: %+v", issues)
	}
}

func TestLabelDomainPinning(t *testing.T) {
	s := selectingSpec(1, 2)
	s.Pinning = PinningDomain
	s.Topology = labelSource
	s.SelectedNodeIDs = []string{"a2", "b2"}
	s.SelectedNodeDomains = []string{"rackA", "rackB"}
	req := s.Request(ActionCreate)
	if !reflect.DeepEqual(req.Probe.Topology, labelSource) {
		t.Fatalf("probe topology: %+v", req.Probe.Topology)
	}
	want := [][]map[string]string{{{testDomainLabel: "rackA"}}, {{testDomainLabel: "rackB"}, {testDomainLabel: "rackB"}}}
	for i, g := range req.Groups {
		if !reflect.DeepEqual(g.BundleLabelSelector, want[i]) {
			t.Fatalf("group %d selectors: %+v", i, g.BundleLabelSelector)
		}
		for _, b := range g.Bundles {
			if len(b) != 2 {
				t.Fatalf("no domain resource with a label source: %v", b)
			}
		}
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}

	// Feasibility: a node of rackB has room, so the cluster fits; when rackB
	// is full, it does not, even though rackA has room.
	nodes := testNodes()
	snap := &Snapshot{Nodes: nodes}
	if sh, _ := s.CheckSnapshotCapacity(snap, nil); len(sh.Errors) != 0 {
		t.Fatalf("fits: %+v", sh)
	}
	for i := range nodes {
		if nodes[i].Labels[testDomainLabel] == "rackB" {
			nodes[i].ResourcesTotal["GPU"] = 0
		}
	}
	if sh, _ := s.CheckSnapshotCapacity(snap, nil); len(sh.Errors) == 0 {
		t.Fatal("rackB has no GPU: logical node 1 must not fit")
	}
}

func TestRequestValidateRejectsBadLabelKeys(t *testing.T) {
	s := selectingSpec(1)
	s.Topology = TopologySource{RankLabel: "not a key"}
	if err := s.Request(ActionCreate).Validate(); err == nil {
		t.Fatal("bad rank label key accepted")
	}
}
