package planning

import (
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Snapshot is what the state API says about the cluster at one moment:
// alive nodes (sorted by node id so plans are stable) and live placement groups.
type Snapshot struct {
	Nodes  []raystate.Node
	Groups []raystate.PlacementGroup
	// Claims are the nodes that could not hold the cluster beside other
	// clusters' reservations (node id -> who), as a create that lost a race
	// learned them from the driver: node choice leaves them out. The state
	// API cannot list reservations.
	Claims map[string]string
	// Reserved is what other clusters' pending reservations (groups not
	// placed yet, so not in Ray's free resources) hold on each node, as the
	// driver reported them: node choice counts it as taken.
	Reserved map[string]topology.Resources
}

// Topology is the (domain, topo_rank) view of the alive nodes from the
// reference's resources, in node-id order.
func (s *Snapshot) Topology() []topology.Node { return s.TopologyFrom(clusterspec.TopologySource{}) }

// TopologyFrom is the (domain, topo_rank) view of the alive nodes from src,
// in node-id order.
func (s *Snapshot) TopologyFrom(src clusterspec.TopologySource) []topology.Node {
	return src.NodeTopology(s.Nodes)
}

// Capacity gives each node's total resources and what is left after the
// bundles of live placement groups, except the groups named in ignore (the
// cluster being planned, whose own groups are replaced).
func (s *Snapshot) Capacity(ignore map[string]bool) []topology.NodeCapacity {
	reserved := map[string]topology.Resources{}
	for _, g := range s.Groups {
		if ignore[g.Name] || g.State != raystate.PlacementGroupStateCreated {
			continue
		}
		for _, b := range g.Bundles {
			if b.NodeID == "" {
				continue
			}
			r := reserved[b.NodeID]
			if r == nil {
				r = topology.Resources{}
				reserved[b.NodeID] = r
			}
			for k, v := range b.UnitResources {
				r[k] += v
			}
		}
	}
	out := make([]topology.NodeCapacity, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		total := topology.Resources{}
		avail := topology.Resources{}
		for k, v := range n.ResourcesTotal {
			total[k] = v
			avail[k] = v - reserved[n.NodeID][k]
		}
		out = append(out, topology.NodeCapacity{ID: n.NodeID, Total: total, Available: avail})
	}
	return out
}

// UserResources drops the per-placement-group resources Ray adds to nodes
// (e.g. CPU_group_<pg id>), which are not the node's own capacity. It copies
// only when there is something to drop (10,000-node reads), so callers must
// not modify the result.
func UserResources(res map[string]float64) map[string]float64 {
	for k := range res {
		if strings.Contains(k, raystate.GroupResourceMarker) {
			out := make(map[string]float64, len(res))
			for k, v := range res {
				if !strings.Contains(k, raystate.GroupResourceMarker) {
					out[k] = v
				}
			}
			return out
		}
	}
	return res
}
