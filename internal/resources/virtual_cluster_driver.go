package resources

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// runDriver runs one driver action as a Ray job and reports its progress.
// After a write the shared group list is stale, so it is dropped.
func (r *virtualClusterResource) runDriver(ctx context.Context, req contract.Request) (*contract.Result, error) {
	if req.Writes() {
		defer r.data.Live.InvalidateGroups()
	}
	tflog.Info(ctx, "submitting placement-group driver job", map[string]any{"action": req.Action, "groups": len(req.Groups)})
	return r.data.Jobs.Run(ctx, req, func(p driver.Progress) {
		tflog.Info(ctx, "placement progress", progressFields(p))
	})
}

func progressFields(p driver.Progress) map[string]any {
	fields := map[string]any{"phase": p.Phase}
	for k, v := range p.Raw {
		fields[k] = v
	}
	return fields
}

// placementEnv is what placement.Place needs of this provider process.
func (r *virtualClusterResource) placementEnv() placement.Env {
	return placement.Env{
		Run: r.runDriver,
		Snapshot: func(ctx context.Context) (*planning.Snapshot, error) {
			r.data.Live.InvalidateGroups()
			return liveview.FetchSnapshot(ctx, r.data.Client)
		},
		Choose: r.data.ChooseNodes, Forget: r.data.ForgetChosen, Version: r.data.Version,
	}
}

// applyOwnedResult fills the computed attributes from a create or inspect
// result and, when the order the driver recorded differs from the provider's
// rank order, rewrites the cluster's record with the provider's. driver.py
// records topology_order (Go's sort, mirrored) when the request asks for it
// and the sort keeps every bundle, else creation order; so a rewrite is rare.
func (r *virtualClusterResource) applyOwnedResult(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, res *contract.Result) diag.Diagnostics {
	diags := applyResult(m, spec, res)
	owner := m.OwnerID.ValueString()
	if diags.HasError() || owner == "" || res.Record == nil {
		return diags
	}
	p, _ := contract.NewPlacement(spec, res)
	if slices.Equal(p.SortedBundleIndices(), res.Record.SortedBundleIndices) {
		return diags
	}
	manifest := record.NewManifest(spec, owner, r.data.Version, p)
	if _, err := r.runDriver(ctx, contract.RequestFor(spec, contract.ActionRecord).Owned(spec, owner, false, &manifest)); err != nil {
		diags.AddWarning("Cannot record the cluster's rank order in Ray",
			fmt.Sprintf("The cluster is ready, but its record in Ray's KV still lists bundles in creation order: %v", err))
	}
	return diags
}

// explainGone says why every group of a cluster in state is gone: destroyed
// by another state that had imported it (its tombstone says so), or removed
// outside Terraform. It costs one inspect job, only in this rare case.
func (r *virtualClusterResource) explainGone(ctx context.Context, m virtualClusterModel, spec clusterspec.Spec) string {
	removed := fmt.Sprintf("Every placement group of %q in namespace %s", spec.Name, spec.Namespace)
	const forgot = " This state forgets it; the next apply creates it again."
	res, err := r.runDriver(ctx, contract.RequestFor(spec, contract.ActionInspect).Owned(spec, m.OwnerID.ValueString(), false, nil))
	if err != nil || res.Tombstone == nil || res.Tombstone.DeletedBy == "" || res.Tombstone.DeletedBy == m.OwnerID.ValueString() {
		return removed + " was removed outside Terraform." + forgot
	}
	t := res.Tombstone
	return fmt.Sprintf("%s was destroyed at %s by another Terraform state (owner %s…) that had imported it and so owned it.%s",
		removed, t.DeletedAt, record.OwnerPrefix(t.DeletedBy), forgot)
}
