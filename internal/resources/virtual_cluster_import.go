package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// readImported restores the configuration attributes of an imported
// cluster from its record in Ray's KV (every declared argument, schema
// version 2), or, for groups without such a record, rebuilds what it can
// from the groups Ray holds and warns about the rest; then it probes the
// groups like a create would. It writes nothing: the state it fills owns
// nothing yet (importPendingOwner), and formerOwner describes the owner the
// record names, for the plan. It returns false (with an error) when the
// import id names no cluster.
func (r *virtualClusterResource) readImported(ctx context.Context, m *virtualClusterModel, formerOwner *string, diags *diag.Diagnostics) bool {
	name := m.Name.ValueString()
	live, err := r.data.SharedGroups(ctx)
	if err != nil {
		diags.AddError("Cannot read placement groups for import", session.ErrorDetail(err))
		return false
	}
	read, err := r.data.Run(ctx, contract.ReadRequest(m.Namespace.ValueString(), name))
	if err == nil {
		err = read.Err()
	}
	if err != nil {
		diags.AddError("Cannot read the virtual cluster's record for import", session.ErrorDetail(err))
		return false
	}
	rec := read.Record
	if rec != nil && rec.Name != name { // not a record this provider wrote for the name
		rec = nil
	}
	spec, unrecovered, ok := restoreDeclaration(ctx, r.data, m, live, rec, diags)
	if !ok {
		return false
	}
	if len(unrecovered) > 0 {
		diags.AddWarning("Import could not recover every argument",
			fmt.Sprintf("%q was imported from its placement groups because %s. These arguments were set to their defaults or to "+
				"what Ray reports, not necessarily to what was declared: %s. Compare the next plan with your configuration; "+
				"the record this import's apply writes keeps them from now on.", name, session.UnrecoveredWhy(rec), strings.Join(unrecovered, ", ")))
	}
	// A plan or refresh changes nothing in Ray: the record keeps naming its
	// owner until an apply takes it (session.TakeImported).
	res, err := r.data.InspectImported(ctx, spec)
	if err != nil {
		diags.AddError("Cannot probe the imported placement groups", session.ErrorDetail(err))
		return false
	}
	if spec.UseUnifiedPG && len(res.Groups) == 1 && res.Groups[0].Strategy != "" {
		spec.Strategy = res.Groups[0].Strategy
		m.PlacementGroupStrategy = types.StringValue(spec.Strategy)
	}
	m.OwnerID = types.StringValue(importPendingOwner)
	diags.Append(applyResult(m, spec, res)...)
	m.TopologyAssignments = topologyAssignments(spec, live, "")
	if rec != nil && rec.Owner != "" {
		*formerOwner = record.OtherOwner{Owner: rec.Owner, CreatedAt: rec.CreatedAt, HasRecord: true}.Describe()
	}
	return !diags.HasError()
}

// restoreDeclaration sets the configuration attributes of m (name and
// namespace set, bundle_ct_per_node_list when an import id split a unified
// group) to the declaration an import recovers (session.RestoreDeclaration)
// from the record rec (nil when it has none) and the live groups. It only
// reads what it is given, so listing uses it too (terraform query): the
// configuration it generates is the one import restores. It returns the
// spec and the arguments it could not recover; false with an error when
// Ray has no group of the cluster or the groups form none.
func restoreDeclaration(ctx context.Context, data *session.Session, m *virtualClusterModel, live []raystate.PlacementGroup,
	rec *record.Manifest, diags *diag.Diagnostics,
) (spec clusterspec.Spec, unrecovered []string, ok bool) {
	var counts []int
	if !m.BundleCtPerNodeList.IsNull() {
		var raw []int64
		diags.Append(m.BundleCtPerNodeList.ElementsAs(ctx, &raw, false)...)
		for _, c := range raw {
			counts = append(counts, int(c))
		}
	}
	declared, issues := data.RestoreDeclaration(m.Name.ValueString(), m.Namespace.ValueString(), counts, live, rec)
	if addIssues(diags, issues); clusterspec.HasError(issues) {
		return declared.Spec, nil, false
	}
	m.ID = types.StringValue(m.Name.ValueString())
	setConfigFromSpec(ctx, m, declared.Spec, diags)
	m.TopologyLabels = topologyLabelsObject(declared.TopologyLabels)
	return declared.Spec, declared.Unrecovered, !diags.HasError()
}
