package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// warnIfTransferred warns a state whose cluster another state has imported
// since (session.TransferWarning).
func (r *virtualClusterResource) warnIfTransferred(ctx context.Context, state virtualClusterModel, diags *diag.Diagnostics) {
	addIssues(diags, r.data.TransferWarning(ctx, state.Namespace.ValueString(), state.Name.ValueString(), state.OwnerID.ValueString()))
}

// importPendingOwner is the owner_id of a cluster this state has imported
// but not yet applied: the record in Ray still names its former owner,
// which stays fully in charge until this state's apply takes it
// (session.TakeImported). A state from before owners existed has a null owner_id.
const importPendingOwner = ""

// formerOwnerKey is the private-state key under which an import keeps the
// description of the owner it found, for the plan that takes it over.
const formerOwnerKey = "import_former_owner"

// importPending reports whether m is an imported cluster this state does
// not own yet.
func importPending(m virtualClusterModel) bool {
	return !m.OwnerID.IsNull() && !m.OwnerID.IsUnknown() && m.OwnerID.ValueString() == importPendingOwner
}

// privateState is what ReadResponse, ModifyPlanRequest and UpdateResponse
// share of the framework's private state.
type privateState interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// keepFormerOwner remembers who owned an imported cluster, for the plan.
func keepFormerOwner(ctx context.Context, private privateState, former string, diags *diag.Diagnostics) {
	if private == nil || former == "" {
		return
	}
	value, err := json.Marshal(former)
	if err != nil {
		return
	}
	diags.Append(private.SetKey(ctx, formerOwnerKey, value)...)
}

// formerOwner is the owner an import found, as its plan names it.
func formerOwner(ctx context.Context, private privateState) string {
	if private == nil {
		return ""
	}
	raw, _ := private.GetKey(ctx, formerOwnerKey)
	var former string
	if len(raw) == 0 || json.Unmarshal(raw, &former) != nil {
		return ""
	}
	return former
}

// planTakeover makes the plan of an imported cluster show the change of
// owner: owner_id and the probed placement become known after apply (an
// in-place update), and a warning says what the apply does and what the former owner keeps until
// then.
func (p *planCall) planTakeover(private privateState) {
	if p.creating || !importPending(p.state) {
		return
	}
	if p.replacing {
		// The replace would destroy as this state, which owns nothing yet, so
		// the former owner's groups would stay and block the create.
		p.resp.Diagnostics.AddError("Apply the import before changing the cluster's shape",
			fmt.Sprintf("This state imported %q but does not own it yet, and this plan would also replace it. Apply the "+
				"import with the configuration it restored first (the plan then only takes ownership), then change the "+
				"configuration.", p.state.Name.ValueString()))
		return
	}
	// The apply probes the groups again for the record it writes, so the
	// placement facts (ports above all) are known only then.
	*p.plan = unknownComputed(*p.plan)
	p.plan.OwnerID = types.StringUnknown()
	name := p.state.Name.ValueString()
	from := formerOwner(p.ctx, private)
	if from == "" {
		from = "its former owner"
	}
	p.resp.Diagnostics.AddWarning("Apply takes ownership of the imported virtual cluster",
		fmt.Sprintf("This state imported %q in namespace %s, which belongs to %s. Nothing has changed in Ray: the former owner "+
			"stays fully in charge until this plan is applied. Applying it makes this state the owner; from then on the "+
			"former owner's destroy only forgets the cluster, and its plan warns that it was imported.",
			name, p.state.Namespace.ValueString(), from))
}
