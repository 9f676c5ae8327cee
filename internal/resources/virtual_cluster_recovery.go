package resources

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// checkRecovery hands what state recorded of the cluster's bundles to
// session.PlanRecovery, which decides what a node's loss does to the plan,
// and shows its answer: a replacement, a warning, or the in-place update
// that re-probes bundles Ray placed again.
func (p *planCall) checkRecovery(spec clusterspec.Spec, snap *planning.Snapshot) {
	bundles, groupIDs := p.recordedPlacement()
	plan := p.r.data.PlanRecovery(p.ctx, spec, bundles, groupIDs, snap, recoveryTimeout(*p.plan))
	switch {
	case plan.Replace == clusterspec.AttrSelectedNodeIDs:
		p.plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
		p.replace(plan.Replace, plan.Summary, plan.Detail)
	case plan.Replace != "":
		p.plan.PlacementGroups = types.ListUnknown(groupObjectType)
		p.replace(plan.Replace, plan.Summary, plan.Detail)
	case plan.Reprobe:
		*p.plan = unknownComputed(*p.plan) // placement_groups too: the apply writes what Ray reports then
		p.resp.Diagnostics.AddWarning(plan.Summary, plan.Detail)
	case plan.Summary != "":
		p.resp.Diagnostics.AddWarning(plan.Summary, plan.Detail)
	}
}

// recordedPlacement is where state recorded the cluster's bundles, and the
// id of each of its groups by name; nil when state has none.
func (p *planCall) recordedPlacement() ([]session.RecordedBundle, map[string]string) {
	state := p.state
	if state.Bundles.IsNull() || state.Bundles.IsUnknown() || state.PlacementGroups.IsNull() || state.PlacementGroups.IsUnknown() {
		return nil, nil
	}
	bundles, d := objectsAs[recordedBundle](p.ctx, state.Bundles)
	groups, d2 := objectsAs[recordedGroup](p.ctx, state.PlacementGroups)
	if d.HasError() || d2.HasError() {
		return nil, nil
	}
	out := make([]session.RecordedBundle, len(bundles))
	for i, b := range bundles {
		out[i] = session.RecordedBundle{Group: b.Group, Index: int(b.Index), NodeID: b.NodeID, NodeIP: b.NodeIP}
	}
	ids := make(map[string]string, len(groups))
	for _, g := range groups {
		ids[g.Name] = g.ID
	}
	return out, ids
}

// recoveryTimeout is the plan's recovery_timeout.
func recoveryTimeout(m virtualClusterModel) session.RecoveryTimeout {
	if m.RecoveryTimeout.IsNull() || m.RecoveryTimeout.IsUnknown() {
		return session.RecoveryTimeout{}
	}
	d, err := time.ParseDuration(m.RecoveryTimeout.ValueString())
	return session.RecoveryTimeout{Limit: d, Set: err == nil}
}
