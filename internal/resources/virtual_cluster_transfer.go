package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// noteTransfer leaves the note that tells the former owner's next plan that
// this state took the cluster (driver.RecordTransfer). A failure only costs
// that warning, so it is a warning itself.
func (r *virtualClusterResource) noteTransfer(ctx context.Context, spec clusterspec.Spec, from, to string, diags *diag.Diagnostics) {
	t := driver.Transfer{Namespace: spec.Namespace, Name: spec.Name, From: from, To: to, At: time.Now()}
	if err := driver.RecordTransfer(ctx, r.data.Client, t); err != nil {
		diags.AddWarning("Cannot tell the former owner about the import",
			fmt.Sprintf("This state owns %q now, but the note that warns the former owner's next plan could not be left in Ray: %v. "+
				"Tell that state's team that its destroy will only forget the cluster.", spec.Name, err))
	}
}

// warnIfTransferred warns a state whose cluster another state has imported
// since: its destroy only forgets the cluster. It costs one GET per cluster
// in state (the note is absent for nearly all); a failed read warns nothing.
func (r *virtualClusterResource) warnIfTransferred(ctx context.Context, state virtualClusterModel, diags *diag.Diagnostics) {
	owner := state.OwnerID.ValueString()
	if owner == "" {
		return
	}
	rctx, cancel := r.data.planReadContext(ctx)
	defer cancel()
	t, err := driver.ReadTransfer(rctx, r.data.Client, state.Namespace.ValueString(), state.Name.ValueString())
	if err != nil {
		tflog.Debug(ctx, "cannot read the cluster's ownership note", map[string]any{"error": err.Error()})
		return
	}
	if t == nil || !t.TakenFrom(owner) {
		return
	}
	when := ""
	if !t.At.IsZero() {
		when = " at " + t.At.UTC().Format(time.RFC3339)
	}
	diags.AddWarning("Virtual cluster imported by another state",
		fmt.Sprintf("Another Terraform state (owner %s…) imported %q in namespace %s%s and owns it now. Only that state may change "+
			"or destroy the cluster: this state's destroy only forgets it, and its placement groups stay. Remove it from this "+
			"configuration (a `removed` block with `destroy = false`, or `terraform state rm`), or import it back if this state "+
			"should own it.",
			record.OwnerPrefix(t.To), t.Name, t.Namespace, when))
}
