package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// applyOwnedResult fills the computed attributes from a create or inspect
// result and has the cluster's record follow the provider's rank order
// (session.RecordRankOrder).
func (r *virtualClusterResource) applyOwnedResult(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, res *contract.Result) diag.Diagnostics {
	diags := applyResult(m, spec, res)
	if diags.HasError() {
		return diags
	}
	if err := r.data.RecordRankOrder(ctx, spec, m.OwnerID.ValueString(), res); err != nil {
		diags.AddWarning("Cannot record the cluster's rank order in Ray",
			fmt.Sprintf("The cluster is ready, but its record in Ray's KV still lists bundles in creation order: %v", err))
	}
	return diags
}
