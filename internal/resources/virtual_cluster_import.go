package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// readImported rebuilds the configuration attributes of an imported cluster
// from the groups Ray holds, then probes them like a create would. It returns
// false (with an error) when Ray has no group of that name.
func (r *virtualClusterResource) readImported(ctx context.Context, m *virtualClusterModel, diags *diag.Diagnostics) bool {
	name := m.Name.ValueString()
	live, err := r.data.Live.Groups(ctx)
	if err != nil {
		diags.AddError("Cannot read placement groups for import", err.Error())
		return false
	}
	var counts []int
	if !m.BundleCtPerNodeList.IsNull() {
		var raw []int64
		diags.Append(m.BundleCtPerNodeList.ElementsAs(ctx, &raw, false)...)
		for _, c := range raw {
			counts = append(counts, int(c))
		}
	}
	spec, found, err := vcluster.InferSpec(name, live, counts)
	if !found {
		diags.AddError("Nothing to import", fmt.Sprintf("Ray has no live placement group named %q or %q.",
			vcluster.UnifiedGroupName(name), name+"-node<i>"))
		return false
	}
	if err != nil {
		diags.AddError("Cannot import the virtual cluster", err.Error())
		return false
	}
	spec.Namespace = m.Namespace.ValueString()
	spec.InferNative(live)
	spec.Topology = sourceOrDefault(r.data.TopologyLabels)
	m.ID = types.StringValue(name)
	setConfigFromSpec(ctx, m, spec, diags)
	m.TopologyLabels = topologyLabelsObject(r.data.TopologyLabels)
	if diags.HasError() {
		return false
	}
	owner, err := vcluster.NewOwnerToken()
	if err != nil {
		diags.AddError("Cannot import the virtual cluster", err.Error())
		return false
	}
	// Import takes ownership: the record now names this state.
	template := vcluster.NewManifest(spec, owner, r.data.Version, vcluster.Placement{})
	res, err := r.runDriver(ctx, spec.Request(vcluster.ActionInspect).Owned(spec, owner, true, &template))
	if err != nil {
		diags.AddError("Cannot probe the imported placement groups", err.Error())
		return false
	}
	if spec.UseUnifiedPG && len(res.Groups) == 1 && res.Groups[0].Strategy != "" {
		spec.Strategy = res.Groups[0].Strategy
		m.PlacementGroupStrategy = types.StringValue(spec.Strategy)
	}
	m.OwnerID = types.StringValue(owner)
	diags.Append(r.applyOwnedResult(ctx, m, spec, res)...)
	m.TopologyAssignments = topologyAssignments(spec, live, "")
	if !diags.HasError() && res.PreviousOwner != nil {
		diags.AddWarning("Import took ownership of the virtual cluster",
			fmt.Sprintf("This state now owns %q in namespace %s (owner %s…). It belonged to %s, which can no longer "+
				"change or destroy it: its destroy will only forget the cluster.", name, spec.Namespace,
				vcluster.OwnerPrefix(owner), res.PreviousOwner.Describe()))
	}
	return !diags.HasError()
}
