package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// readImported restores the configuration attributes of an imported
// cluster and the placement Ray holds (session.ReadImported). It writes
// nothing: the state it fills owns nothing yet (importPendingOwner), and
// formerOwner describes the owner the record names, for the plan. It
// returns false (with an error) when the import id names no cluster.
func (r *virtualClusterResource) readImported(ctx context.Context, m *virtualClusterModel, formerOwner *string, diags *diag.Diagnostics) bool {
	imported, issues := r.data.ReadImported(ctx, m.Name.ValueString(), m.Namespace.ValueString(), importCounts(ctx, *m, diags))
	if addIssues(diags, issues); diags.HasError() {
		return false
	}
	spec := imported.Spec
	setDeclaration(ctx, m, imported.Declaration, diags)
	m.OwnerID = types.StringValue(importPendingOwner)
	diags.Append(applyResult(m, spec, imported.Result)...)
	m.TopologyAssignments = topologyAssignments(spec, imported.Live, "")
	*formerOwner = imported.FormerOwner
	return !diags.HasError()
}

// importCounts is the split of a unified group an import id gave
// ("vc:2,2"), nil for none.
func importCounts(ctx context.Context, m virtualClusterModel, diags *diag.Diagnostics) []int {
	if m.BundleCtPerNodeList.IsNull() {
		return nil
	}
	var raw []int64
	diags.Append(m.BundleCtPerNodeList.ElementsAs(ctx, &raw, false)...)
	counts := make([]int, len(raw))
	for i, c := range raw {
		counts[i] = int(c)
	}
	return counts
}

// setDeclaration sets the configuration attributes of m to what an import
// recovers.
func setDeclaration(ctx context.Context, m *virtualClusterModel, declared session.Declaration, diags *diag.Diagnostics) {
	m.ID = types.StringValue(m.Name.ValueString())
	setConfigFromSpec(ctx, m, declared.Spec, diags)
	m.TopologyLabels = topologyLabelsObject(declared.TopologyLabels)
}

// restoreDeclaration sets the configuration attributes of m (name and
// namespace set, bundle_ct_per_node_list when an import id split a unified
// group) to the declaration an import recovers (session.RestoreDeclaration)
// from the record rec (nil when it has none) and the live groups. It only
// reads what it is given, so listing uses it too (terraform query): the
// configuration it generates is the one import restores. It returns the
// spec; false with an error when Ray has no group of the cluster or the
// groups form none.
func restoreDeclaration(ctx context.Context, data *session.Session, m *virtualClusterModel, live []raystate.PlacementGroup,
	rec *record.Manifest, diags *diag.Diagnostics,
) (spec clusterspec.Spec, ok bool) {
	declared, issues := data.RestoreDeclaration(m.Name.ValueString(), m.Namespace.ValueString(), importCounts(ctx, *m, diags), live, rec)
	if addIssues(diags, issues); clusterspec.HasError(issues) {
		return declared.Spec, false
	}
	setDeclaration(ctx, m, declared, diags)
	return declared.Spec, !diags.HasError()
}
