package planning

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// CheckSegments reports whether the live topology can supply the spec's
// segments (SelectSegmentNodes over len(BundleCtPerNode) nodes). It returns
// nil when SegmentSize is nil or the topology has no NVLink info.
func CheckSegments(s clusterspec.Spec, topo []topology.Node) error {
	if s.SegmentSize == nil || !topology.HasTopology(topo) {
		return nil
	}
	_, _, err := topology.SelectSegmentNodes(topo, *s.SegmentSize, len(s.BundleCtPerNode))
	return err
}
