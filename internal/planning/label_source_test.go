package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestLabelSourceSelectsLikeResourceSource(t *testing.T) {
	nodes := clusterspectest.Nodes()
	byResource := clusterspec.TopologySource{}.NodeTopology(nodes)
	byLabel := clusterspectest.LabelSource.NodeTopology(nodes)
	for i := range byLabel {
		if byLabel[i].TopoRank != byResource[i].TopoRank {
			t.Fatalf("rank of %s: label %d, resource %d", byLabel[i].ID, byLabel[i].TopoRank, byResource[i].TopoRank)
		}
	}
	if byLabel[0].Domain != topology.NVLinkDomainUnknown || byLabel[1].Domain != "rackA" {
		t.Fatalf("label domains are the label values: %+v", byLabel)
	}
	if diff := cmp.Diff(topology.TopologicalOrder(byResource), topology.TopologicalOrder(byLabel)); diff != "" {
		t.Fatalf("topological order differs between the sources (-want +got):\n%s", diff)
	}
	for _, seg := range []int{1, 2} {
		s := clusterspectest.SelectingSpec(1, 1)
		s.SegmentSize = clusterspectest.Ptr(seg)
		idsR, _, errR := ChooseNodes(s, byResource, nil)
		idsL, domainsL, errL := ChooseNodes(s, byLabel, nil)
		if errR != nil || errL != nil || !cmp.Equal(idsR, idsL) {
			t.Fatalf("segment %d: resource %v %v, label %v %v", seg, idsR, errR, idsL, errL)
		}
		if domainsL[0] != "rackA" {
			t.Fatalf("label domains: %v", domainsL)
		}
	}
}

func TestLabelDomainPinning(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 2)
	s.Pinning = clusterspec.PinningDomain
	s.Topology = clusterspectest.LabelSource
	s.SelectedNodeIDs = []string{"a2", "b2"}
	s.SelectedNodeDomains = []string{"rackA", "rackB"}
	req := contract.RequestFor(s, contract.ActionCreate)
	if diff := cmp.Diff(clusterspectest.LabelSource, req.Probe.Topology); diff != "" {
		t.Fatalf("probe topology (-want +got):\n%s", diff)
	}
	want := [][]map[string]string{{{clusterspectest.DomainLabel: "rackA"}}, {{clusterspectest.DomainLabel: "rackB"}, {clusterspectest.DomainLabel: "rackB"}}}
	for i, g := range req.Groups {
		if diff := cmp.Diff(want[i], g.BundleLabelSelector); diff != "" {
			t.Fatalf("group %d selectors (-want +got):\n%s", i, diff)
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
	nodes := clusterspectest.Nodes()
	snap := &Snapshot{Nodes: nodes}
	if sh, _ := CheckSnapshotCapacity(s, snap, nil); len(sh.Errors) != 0 {
		t.Fatalf("fits: %+v", sh)
	}
	for i := range nodes {
		if nodes[i].Labels[clusterspectest.DomainLabel] == "rackB" {
			nodes[i].ResourcesTotal["GPU"] = 0
		}
	}
	if sh, _ := CheckSnapshotCapacity(s, snap, nil); len(sh.Errors) == 0 {
		t.Fatal("rackB has no GPU: logical node 1 must not fit")
	}
}
