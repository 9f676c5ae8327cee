package clusterspec_test

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestLabelSourceSentinels(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		domain string
		rank   int
	}{
		{nil, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.DomainLabel: "", clusterspectest.RankLabel: ""}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.DomainLabel: "r1", clusterspectest.RankLabel: "12"}, "r1", 12},
		{map[string]string{clusterspectest.RankLabel: "007"}, topology.NVLinkDomainUnknown, 7},
		{map[string]string{clusterspectest.RankLabel: "-3"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.RankLabel: "+3"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.RankLabel: "3.0"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.RankLabel: "rack"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
		{map[string]string{clusterspectest.RankLabel: "1234567890123456789"}, topology.NVLinkDomainUnknown, topology.TopoRankUnknown},
	} {
		// The resources say otherwise: a label source ignores them.
		res := map[string]float64{"nvlink_domain_X": 1, topology.TopoRankKey: 9}
		d, r := clusterspectest.LabelSource.Node(res, tc.labels)
		if d != tc.domain || r != tc.rank {
			t.Errorf("labels %v: got (%q, %d), want (%q, %d)", tc.labels, d, r, tc.domain, tc.rank)
		}
	}
	// One field from a label, the other from its resource.
	d, r := clusterspec.TopologySource{RankLabel: clusterspectest.RankLabel}.Node(map[string]float64{"nvlink_domain_X": 1}, map[string]string{clusterspectest.RankLabel: "4"})
	if d != "nvlink_domain_X" || r != 4 {
		t.Fatalf("mixed source: %q %d", d, r)
	}
}

func TestMissingLabelSupport(t *testing.T) {
	nodes := clusterspectest.Nodes()
	if err := clusterspectest.LabelSource.MissingLabelSupport(nodes, "2.60.0"); err != nil {
		t.Fatal(err)
	}
	nodes[2].Labels = nil
	if err := clusterspectest.LabelSource.MissingLabelSupport(nodes, "2.40.0"); err == nil {
		t.Fatal("a node without labels must be an error")
	}
	if err := (clusterspec.TopologySource{}).MissingLabelSupport(nodes, "2.40.0"); err != nil {
		t.Fatal("the resource source needs no labels")
	}
}

func TestValidateLabelKey(t *testing.T) {
	for _, ok := range []string{"rack", "raytf.io/nvlink-domain", "a.b-c/x_y.z", "ray.io/node-id"} {
		if err := clusterspec.ValidateLabelKey(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "/x", "x/", "a b", "-x", "x-", "a/b/c", "a..b/x"} {
		if clusterspec.ValidateLabelKey(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	issues := clusterspec.TopologySource{DomainLabel: "bad key"}.Validate(clusterspec.AttrTopologyLabels)
	if len(issues) != 1 || issues[0].Path != "topology_labels.nvlink_domain" {
		t.Fatalf("issues: %+v", issues)
	}
}
