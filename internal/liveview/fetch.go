package liveview

import (
	"context"
	"fmt"
	"sort"

	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// FetchSnapshot lists alive nodes and non-removed placement groups: two calls.
func FetchSnapshot(ctx context.Context, client *rayclient.Client) (*planning.Snapshot, error) {
	nodes, err := ListAliveNodes(ctx, client)
	if err != nil {
		return nil, err
	}
	groups, err := ListLiveGroups(ctx, client)
	if err != nil {
		return nil, err
	}
	return &planning.Snapshot{Nodes: nodes, Groups: groups}, nil
}

// ListAliveNodes returns Ray's alive nodes sorted by node id.
func ListAliveNodes(ctx context.Context, client *rayclient.Client) ([]raystate.Node, error) {
	nodes, err := client.ListNodes(ctx, rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}, Detail: true})
	if err != nil {
		return nil, fmt.Errorf("listing Ray nodes at %s: %w", client.Address(), err)
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].NodeID < nodes[j].NodeID })
	return nodes, nil
}

// ListLiveGroups returns every placement group Ray has not removed.
func ListLiveGroups(ctx context.Context, client *rayclient.Client) ([]raystate.PlacementGroup, error) {
	groups, err := client.ListPlacementGroups(ctx, rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Ne("state", raystate.PlacementGroupStateRemoved)}, Detail: true})
	if err != nil {
		return nil, fmt.Errorf("listing Ray placement groups at %s: %w", client.Address(), err)
	}
	return groups, nil
}
