package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ReadUnchangedCluster refreshes a virtual cluster as the framework would,
// without the framework's passes over every value (decoding with block
// nulling, semantic equality, re-encoding): the resource's own Read runs,
// against the same live view, and its answer goes back as the framework
// would send it. It reports false, having done nothing, when the request is
// not a refreshed cluster's (another type, a cluster just imported, whose
// Read keeps its former owner in private state, or framework private data).
// It also reports false, having run Read, when the framework would do more
// with what Read returned: a changed state whose changed attributes have a
// custom type (their semantic equality), or an identity the framework
// refuses (it words the error). The caller then hands the request to the
// framework, which runs Read again (against the same cached live view; a
// gone cluster's inspect job runs again too): rare, as Read changes neither
// a custom-typed attribute nor the identity.
func ReadUnchangedCluster(ctx context.Context, typeName string, data *ProviderData,
	req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	s, private, identity, ok := unchangedInputs(typeName, req.TypeName, data, req.Private, req.CurrentIdentity)
	if !ok || private.hasFrameworkKeys() || req.CurrentState == nil || len(req.CurrentState.MsgPack) == 0 {
		return nil, false
	}
	current, err := req.CurrentState.Unmarshal(s.typ)
	if err != nil || current.IsNull() || justImported(current) {
		return nil, false
	}
	state := tfsdk.State{Raw: current, Schema: s.schema}
	rreq := resource.ReadRequest{State: state}
	if req.ClientCapabilities != nil {
		rreq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	rresp := resource.ReadResponse{State: state, Identity: s.identityOf(identity)}
	(&virtualClusterResource{data: data}).Read(ctx, rreq, &rresp)
	if !s.answersRead(current, identity, &rresp) {
		return nil, false
	}
	diags := rresp.Diagnostics
	resp := &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: private.encoded(req.Private)}
	if !rresp.State.Raw.Equal(current) {
		resp.NewState = s.encodeState(rresp.State.Raw, &diags)
	}
	resp.NewIdentity = s.encodeIdentity(req.CurrentIdentity, identity, rresp.Identity.Raw, &diags)
	resp.Diagnostics = protoDiagnostics(ctx, diags)
	return resp, true
}

// answersRead reports whether the framework's answer to what Read left in
// rresp is that as it is: after an error it is; else only when the identity
// is set and, if the state had one, unchanged, and no attribute that changed
// has a custom type (whose semantic equality could keep the prior value).
func (s *unchangedSchema) answersRead(current, identity tftypes.Value, rresp *resource.ReadResponse) bool {
	if rresp.Deferred != nil {
		return false
	}
	if rresp.Diagnostics.HasError() {
		return true
	}
	now := rresp.Identity.Raw
	if now.IsFullyNull() || (!identity.IsFullyNull() && !identity.Equal(now)) {
		return false
	}
	next := rresp.State.Raw
	if next.IsNull() || next.Equal(current) {
		return true
	}
	var was, is map[string]tftypes.Value
	if current.As(&was) != nil || next.As(&is) != nil {
		return false
	}
	for name, v := range is {
		if s.customTyped[name] && !v.Equal(was[name]) {
			return false
		}
	}
	return true
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
		if frameworkKey(key) {
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
	s := unchangedSchemaFor(typeName, req.TypeName)
	if s == nil || req.RawState == nil || req.Version != s.schema.Version {
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
