package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

func TestRequestCarriesSelectorsAndTopologyStrategy(t *testing.T) {
	s := clusterspectest.LabelledSpec()
	req := RequestFor(s, ActionCreate)
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]map[string]string{{"raytf.io/nvlink-domain": "rackA"}, {"raytf.io/nvlink-domain": "rackA"}}, req.Groups[0].BundleLabelSelector); diff != "" {
		t.Fatalf("node 0 selectors (-want +got):\n%s", diff)
	}
	if got := req.Groups[1].BundleLabelSelector; got != nil {
		t.Fatalf("node 1 has no selector, got %v", got)
	}
	if req.Groups[0].TopologyStrategy != nil {
		t.Fatal("per-node group got a topology strategy")
	}
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"raytf.io/nvlink-domain": clusterspec.TopologyLabelStrategy}
	req = RequestFor(s, ActionCreate)
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	g := req.Groups[0]
	if len(g.BundleLabelSelector) != 3 || len(g.BundleLabelSelector[2]) != 0 || g.BundleLabelSelector[0]["raytf.io/nvlink-domain"] != "rackA" {
		t.Fatalf("unified selectors: %v", g.BundleLabelSelector)
	}
	if diff := cmp.Diff(map[string]string{clusterspec.NodeIDLabel: s.Strategy, "raytf.io/nvlink-domain": clusterspec.TopologyLabelStrategy}, g.TopologyStrategy); diff != "" {
		t.Fatalf("topology strategy (-want +got):\n%s", diff)
	}
	// Without selectors or pins, requests stay as before (Ray 2.55.1 gets no new argument).
	plain := RequestFor(clusterspectest.ValidSpec(), ActionCreate)
	for _, g := range plain.Groups {
		if g.BundleLabelSelector != nil || g.TopologyStrategy != nil {
			t.Fatalf("plain spec sends native arguments: %+v", g)
		}
	}
}

func TestPinsReplaceSelectorOnNodeID(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.SelectedNodeIDs = []string{"a1", "a2"}
	s.NodeLabelSelectors = []map[string]string{{clusterspec.NodeIDLabel: "!b1", "x": "y"}, nil}
	got := RequestFor(s, ActionCreate).Groups
	if !cmp.Equal(got[0].BundleLabelSelector, []map[string]string{{clusterspec.NodeIDLabel: "a1", "x": "y"}}) ||
		!cmp.Equal(got[1].BundleLabelSelector, []map[string]string{{clusterspec.NodeIDLabel: "a2"}}) {
		t.Fatalf("merged: %v / %v", got[0].BundleLabelSelector, got[1].BundleLabelSelector)
	}
}

func TestInferNativeFromLiveGroups(t *testing.T) {
	s := clusterspectest.LabelledSpec()
	s.UseUnifiedPG = true
	s.TopologyStrategy = map[string]string{"d": clusterspec.TopologyLabelStrategy}
	req := RequestFor(s, ActionCreate).Groups[0]
	live := raystate.PlacementGroup{Name: req.Name, TopologyStrategy: map[string]string{"d": clusterspec.TopologyLabelStrategy}}
	for i, sel := range req.BundleLabelSelector {
		live.Bundles = append(live.Bundles, raystate.Bundle{BundleIndex: i, LabelSelector: sel})
	}
	imported := s
	imported.NodeLabelSelectors, imported.TopologyStrategy = nil, nil
	record.InferNative(&imported, []raystate.PlacementGroup{live})
	if !cmp.Equal(imported.NodeLabelSelectors, s.NodeLabelSelectors) || !cmp.Equal(imported.TopologyStrategy, s.TopologyStrategy) {
		t.Fatalf("inferred %v %v", imported.NodeLabelSelectors, imported.TopologyStrategy)
	}
	plain := clusterspectest.ValidSpec()
	record.InferNative(&plain, []raystate.PlacementGroup{{Name: "vc-node0", Bundles: []raystate.Bundle{{LabelSelector: map[string]string{}}}}})
	if plain.NodeLabelSelectors != nil || plain.TopologyStrategy != nil {
		t.Fatalf("plain groups inferred %v %v", plain.NodeLabelSelectors, plain.TopologyStrategy)
	}
}
