package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestNodePinningUsesLabelSelectors(t *testing.T) {
	s := clusterspectest.SelectingSpec(2, 1)
	s.SelectedNodeIDs = []string{"a2", "a1"}
	req := RequestFor(s, ActionCreate)
	if len(req.Groups) != 2 {
		t.Fatal(req.Groups)
	}
	want0 := []map[string]string{{clusterspec.NodeIDLabel: "a2"}, {clusterspec.NodeIDLabel: "a2"}}
	if !cmp.Equal(req.Groups[0].BundleLabelSelector, want0) ||
		!cmp.Equal(req.Groups[1].BundleLabelSelector, []map[string]string{{clusterspec.NodeIDLabel: "a1"}}) {
		t.Fatalf("selectors: %+v", req.Groups)
	}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	// Unified: bundles follow their logical node.
	s.UseUnifiedPG = true
	req = RequestFor(s, ActionCreate)
	want := []map[string]string{{clusterspec.NodeIDLabel: "a2"}, {clusterspec.NodeIDLabel: "a2"}, {clusterspec.NodeIDLabel: "a1"}}
	if diff := cmp.Diff(want, req.Groups[0].BundleLabelSelector); diff != "" {
		t.Fatalf("unified selectors (-want +got):\n%s", diff)
	}
	// Resources stay the reference's: no pin resource reaches Ray.
	for _, b := range req.Groups[0].Bundles {
		if len(b) != 2 {
			t.Fatalf("bundle %v", b)
		}
	}
	// Without a selection there are no selectors.
	if r := RequestFor((clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1}, MaxColocatedWorkerGroups: 1}), ActionCreate); r.Groups[0].BundleLabelSelector != nil {
		t.Fatal("selectors without select_nodes")
	}
}

func TestDomainPinningAddsDomainConstraint(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.Pinning = clusterspec.PinningDomain
	s.SelectedNodeIDs = []string{"a2", "b2"}
	s.SelectedNodeDomains = []string{"nvlink_domain_rackA", "nvlink_domain_rackB"}
	groups := s.Groups()
	if groups[0].Bundles[0]["nvlink_domain_rackA"] != topology.DomainConstraintAmount ||
		groups[1].Bundles[0]["nvlink_domain_rackB"] != topology.DomainConstraintAmount {
		t.Fatalf("domain pins: %+v", groups)
	}
	if RequestFor(s, ActionCreate).Groups[0].BundleLabelSelector != nil {
		t.Fatal("domain pinning uses no label selector")
	}
}
