package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// Ray-native placement on the resource: node_label_selectors,
// topology_strategy, topology_assignments, and the Ray version they need.

// selectorType is one logical node's entry of node_label_selectors.
var selectorType = types.MapType{ElemType: types.StringType}

// checkRayVersion adds the spec's version issues (session.VersionIssues).
// An unreachable dashboard adds nothing here (the live check warns about
// it); the error is returned for the plan's deadline.
func checkRayVersion(ctx context.Context, data *session.Session, spec clusterspec.Spec, diags *diag.Diagnostics) error {
	issues, err := data.VersionIssues(ctx, spec)
	addIssues(diags, issues)
	return err
}

// topologyAssignments is Ray's topology_assignments of the spec's unified
// group in live; null without topology_strategy.
func topologyAssignments(spec clusterspec.Spec, live []raystate.PlacementGroup, recordedID string) types.Map {
	if len(spec.TopologyStrategy) == 0 || !spec.UseUnifiedPG {
		return types.MapNull(types.StringType)
	}
	name := clusterspec.UnifiedGroupName(spec.Name)
	var found *raystate.PlacementGroup
	for i, g := range live {
		if g.Name == name && (found == nil || g.PlacementGroupID == recordedID) {
			found = &live[i]
		}
	}
	if found == nil {
		return types.MapNull(types.StringType)
	}
	elems := make(map[string]string, len(found.TopologyAssignments))
	for k, v := range found.TopologyAssignments {
		elems[k] = v
	}
	m, _ := types.MapValueFrom(context.Background(), types.StringType, elems)
	return m
}

// fillTopologyAssignments settles topology_assignments after a create or
// update: a value the plan already knows stays (it must), else it is read
// from Ray (one list call, only with topology_strategy).
func (r *virtualClusterResource) fillTopologyAssignments(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, diags *diag.Diagnostics) {
	if !m.TopologyAssignments.IsUnknown() && !m.TopologyAssignments.IsNull() {
		return
	}
	if len(spec.TopologyStrategy) == 0 {
		m.TopologyAssignments = types.MapNull(types.StringType)
		return
	}
	live, err := r.data.LiveGroups(ctx)
	if err != nil {
		diags.AddWarning("Cannot read Ray's topology assignments", err.Error())
		m.TopologyAssignments = types.MapNull(types.StringType)
		return
	}
	m.TopologyAssignments = topologyAssignments(spec, live, "")
}
