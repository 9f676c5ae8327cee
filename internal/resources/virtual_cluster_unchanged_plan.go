package resources

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// PlanUnchangedCluster plans a virtual cluster whose configuration proposes
// exactly its prior state (the "No changes" plan of a cluster nobody edited)
// as the framework would, without the framework's passes over every value of
// the cluster: defaults, unknown marking, each attribute's plan modifiers,
// each written back one at a time. Those passes were most of the plugin's CPU
// in a plan of many clusters (bench/README.md, part 7) and change nothing
// here: the prior state holds every default, no value is null for want of
// configuration, and every plan modifier of the schema keeps a value equal to
// the prior one. The resource's own ModifyPlan still runs, with every live
// check.
//
// It reports false, having done nothing, for any other request: another
// resource type, a proposal that differs from the prior state, a default the
// prior state lacks (a state from a provider with other defaults), private
// state or an identity the framework would refuse, or an unconfigured
// provider. The caller then hands the request to the framework.
// typeName is the provider's type name (the resource's prefix).
func PlanUnchangedCluster(ctx context.Context, typeName string, data *ProviderData,
	req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, bool) {
	s, private, identity, ok := unchangedInputs(typeName, req.TypeName, data, req.PriorPrivate, req.PriorIdentity)
	if !ok || !proposesPrior(req) {
		return nil, false
	}
	prior, err := req.PriorState.Unmarshal(s.typ)
	if err != nil || prior.IsNull() {
		return nil, false
	}
	config, err := req.Config.Unmarshal(s.typ)
	if err != nil || !s.defaultsHeld(config, prior) {
		return nil, false
	}
	plan := tfsdk.Plan{Raw: prior, Schema: s.schema}
	mreq := resource.ModifyPlanRequest{
		Config:   tfsdk.Config{Raw: config, Schema: s.schema},
		Plan:     plan,
		State:    tfsdk.State{Raw: prior, Schema: s.schema},
		Identity: s.identityOf(identity),
	}
	if req.ClientCapabilities != nil {
		mreq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	mresp := resource.ModifyPlanResponse{Plan: plan, RequiresReplace: path.Paths{}, Identity: s.identityOf(identity)}
	(&virtualClusterResource{data: data}).modifyPlan(ctx, mreq, private, &mresp)
	resp := s.response(ctx, req, prior, &mresp)
	resp.PlannedPrivate = private.encoded(req.PriorPrivate)
	resp.PlannedIdentity = s.encodeIdentity(req.PriorIdentity, identity, mresp.Identity.Raw, &mresp.Diagnostics)
	resp.Diagnostics = protoDiagnostics(ctx, mresp.Diagnostics)
	return resp, true
}

// proposesPrior reports whether Terraform proposes the prior state as it is:
// the same msgpack bytes (Terraform encodes a value one way).
func proposesPrior(req *tfprotov6.PlanResourceChangeRequest) bool {
	return req.PriorState != nil && req.ProposedNewState != nil && req.Config != nil &&
		len(req.PriorState.MsgPack) > 0 && len(req.Config.MsgPack) > 0 &&
		bytes.Equal(req.PriorState.MsgPack, req.ProposedNewState.MsgPack)
}

// response is the framework's answer for the plan and replacements
// ModifyPlan left in mresp (its diagnostics gain any encoding failure): the
// proposed bytes when the plan is still the prior state, replacements sorted
// and unique.
func (s *unchangedSchema) response(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest, prior tftypes.Value,
	mresp *resource.ModifyPlanResponse) *tfprotov6.PlanResourceChangeResponse {
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState}
	if !mresp.Plan.Raw.Equal(prior) {
		resp.PlannedState = s.encodeState(mresp.Plan.Raw, &mresp.Diagnostics)
	}
	if mresp.Deferred != nil {
		resp.Deferred = &tfprotov6.Deferred{Reason: tfprotov6.DeferredReason(mresp.Deferred.Reason)}
	}
	resp.RequiresReplace = attributePaths(ctx, mresp.RequiresReplace, &mresp.Diagnostics)
	return resp
}
