package resources

import (
	"context"
	"fmt"
	"sort"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// ClusterSnapshot is what the state API says about the cluster at one moment:
// alive nodes (sorted by node id so plans are stable) and live placement groups.
type ClusterSnapshot struct {
	Nodes  []rayclient.Node
	Groups []rayclient.PlacementGroup
}

// aliveFilter and liveGroupFilter are applied by Ray, not by the provider.
var (
	aliveFilter     = []rayclient.Filter{{Key: "state", Op: "=", Value: "ALIVE"}}
	liveGroupFilter = []rayclient.Filter{{Key: "state", Op: "!=", Value: "REMOVED"}}
)

// FetchSnapshot lists alive nodes and non-removed placement groups: two calls.
func FetchSnapshot(ctx context.Context, client *rayclient.Client) (*ClusterSnapshot, error) {
	nodes, err := ListAliveNodes(ctx, client)
	if err != nil {
		return nil, err
	}
	groups, err := ListLiveGroups(ctx, client)
	if err != nil {
		return nil, err
	}
	return &ClusterSnapshot{Nodes: nodes, Groups: groups}, nil
}

// ListAliveNodes returns Ray's alive nodes sorted by node id.
func ListAliveNodes(ctx context.Context, client *rayclient.Client) ([]rayclient.Node, error) {
	nodes, err := client.ListNodes(ctx, rayclient.ListOptions{Filters: aliveFilter, Detail: true})
	if err != nil {
		return nil, fmt.Errorf("listing Ray nodes at %s: %w", client.Address(), err)
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].NodeID < nodes[j].NodeID })
	return nodes, nil
}

// ListLiveGroups returns every placement group Ray has not removed.
func ListLiveGroups(ctx context.Context, client *rayclient.Client) ([]rayclient.PlacementGroup, error) {
	groups, err := client.ListPlacementGroups(ctx, rayclient.ListOptions{Filters: liveGroupFilter, Detail: true})
	if err != nil {
		return nil, fmt.Errorf("listing Ray placement groups at %s: %w", client.Address(), err)
	}
	return groups, nil
}

// Topology is the (domain, topo_rank) view of the alive nodes, in node-id order.
func (s *ClusterSnapshot) Topology() []topology.Node {
	out := make([]topology.Node, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		domain, rank := topology.ParseNodeTopology(n.ResourcesTotal)
		out = append(out, topology.Node{ID: n.NodeID, Domain: domain, TopoRank: rank})
	}
	return out
}

// Capacity gives each node's total resources and what is left after the
// bundles of live placement groups, except the groups named in ignore (the
// cluster being planned, whose own groups are replaced).
func (s *ClusterSnapshot) Capacity(ignore map[string]bool) []topology.NodeCapacity {
	reserved := map[string]topology.Resources{}
	for _, g := range s.Groups {
		if ignore[g.Name] || g.State != "CREATED" {
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
