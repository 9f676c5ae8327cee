package resources

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ReadUnchangedCluster refreshes a virtual cluster as the framework would,
// when the refresh finds it as the state has it (every refresh of a steady
// plan), without the framework's passes over every value (decoding with
// block nulling, semantic equality, re-encoding). The resource's own Read
// runs, against the same live view. It reports false when the Read says
// anything, changes the state or its identity, or when the request is not a
// refreshed cluster's (another type, a cluster just imported, framework
// private data): the caller then hands the request to the framework, whose
// Read of the same cached live view answers it.
func ReadUnchangedCluster(ctx context.Context, typeName string, providerData any,
	req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	s := unchangedPlanSchema()
	data, configured := providerData.(*ProviderData)
	if s == nil || !configured || data == nil || req.TypeName != typeName+virtualClusterSuffix ||
		req.CurrentState == nil || len(req.CurrentState.MsgPack) == 0 {
		return nil, false
	}
	current, err := req.CurrentState.Unmarshal(s.typ)
	if err != nil || current.IsNull() || justImported(current) {
		return nil, false
	}
	private, ok := decodePrivate(req.Private)
	if !ok || private.hasFrameworkKeys() {
		return nil, false
	}
	identity, ok := s.identity(req.CurrentIdentity)
	if !ok {
		return nil, false
	}
	state := tfsdk.State{Raw: current, Schema: s.schema}
	rreq := resource.ReadRequest{State: state}
	if req.ClientCapabilities != nil {
		rreq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	rresp := resource.ReadResponse{State: state, Identity: &tfsdk.ResourceIdentity{Schema: s.identitySchema, Raw: identity}}
	(&virtualClusterResource{data: data}).Read(ctx, rreq, &rresp)
	newIdentity := rresp.Identity.Raw
	if len(rresp.Diagnostics) > 0 || rresp.Deferred != nil || !rresp.State.Raw.Equal(current) || newIdentity.IsFullyNull() ||
		(!identity.IsFullyNull() && !identity.Equal(newIdentity)) {
		return nil, false
	}
	resp := &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}
	if req.CurrentIdentity == nil || identity.IsFullyNull() {
		encoded, err := tfprotov6.NewDynamicValue(s.identityTyp, newIdentity)
		if err != nil {
			return nil, false
		}
		resp.NewIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &encoded}
	}
	return resp, true
}

// justImported reports whether a state is an import's, which Read fills from
// Ray (and whose former owner it keeps in private state).
func justImported(state tftypes.Value) bool {
	var attrs map[string]tftypes.Value
	return state.As(&attrs) != nil || attrs["bundles"].IsNull()
}

// hasFrameworkKeys reports whether the framework keeps keys of its own in
// the private state (it removes its import marker at the first Read).
func (p priorPrivate) hasFrameworkKeys() bool {
	for key := range p {
		if strings.HasPrefix(key, ".") {
			return true
		}
	}
	return false
}

// UpgradeClusterState is the framework's answer to Terraform's
// UpgradeResourceState for a virtual cluster state of the current schema
// version (a pass through: decode the stored JSON with the schema, ignoring
// attributes it no longer has), without its pass over every value to turn
// null list and set blocks into empty ones, which this schema has none of.
// It reports false for any other request.
func UpgradeClusterState(typeName string, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	s := unchangedPlanSchema()
	if s == nil || req.TypeName != typeName+virtualClusterSuffix || req.RawState == nil || req.Version != s.schema.Version {
		return nil, false
	}
	raw, err := req.RawState.UnmarshalWithOpts(s.typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		return nil, false // the framework words the error
	}
	upgraded, err := tfprotov6.NewDynamicValue(s.typ, raw)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &upgraded}, true
}
