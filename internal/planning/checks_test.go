package planning

import (
	"errors"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestCheckSegments(t *testing.T) {
	topo := []topology.Node{{ID: "a1", Domain: "nvlink_domain_A", TopoRank: 1}, {ID: "a2", Domain: "nvlink_domain_A", TopoRank: 2}, {ID: "b1", Domain: "nvlink_domain_B", TopoRank: 3}}
	s := clusterspectest.ValidSpec()
	if err := CheckSegments(s, topo); err != nil {
		t.Fatal("nil segment size:", err)
	}
	s.SegmentSize = clusterspectest.Ptr(2)
	s.BundleCtPerNode = []int{8, 8}
	if err := CheckSegments(s, topo); err != nil {
		t.Fatal(err)
	}
	s.BundleCtPerNode = []int{8, 8, 8, 8}
	if err := CheckSegments(s, topo); !errors.Is(err, topology.ErrResourceInsufficient) {
		t.Fatal(err)
	}
	s.BundleCtPerNode = []int{8, 8, 8}
	if err := CheckSegments(s, topo); !errors.Is(err, topology.ErrInvalidArgument) {
		t.Fatal(err)
	}
	if err := CheckSegments(s, []topology.Node{{ID: "u", Domain: topology.NVLinkDomainUnknown, TopoRank: 1}}); err != nil {
		t.Fatal("no topology means no check:", err)
	}
}
