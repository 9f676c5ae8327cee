package resources

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

var (
	_ resource.Resource                   = (*virtualClusterResource)(nil)
	_ resource.ResourceWithConfigure      = (*virtualClusterResource)(nil)
	_ resource.ResourceWithImportState    = (*virtualClusterResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*virtualClusterResource)(nil)
	_ resource.ResourceWithValidateConfig = (*virtualClusterResource)(nil)
)

// NewVirtualClusterResource is the ray_virtual_cluster constructor.
func NewVirtualClusterResource() resource.Resource { return &virtualClusterResource{} }

type virtualClusterResource struct{ data *session.Session }

// virtualClusterSuffix follows the provider's type name in the virtual
// cluster's resource, data source and list resource.
const virtualClusterSuffix = "_virtual_cluster"

func (r *virtualClusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + virtualClusterSuffix
}

func (r *virtualClusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = sessionFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *virtualClusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx, cancel, m, spec, ok := r.begin(ctx, req.Plan.Get, createTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	exclude, _ := excludedNodes(ctx, m)
	created, issues := r.data.Create(ctx, &spec, exclude)
	if addIssues(&resp.Diagnostics, issues); resp.Diagnostics.HasError() {
		return
	}
	owner, res := created.Owner, created.Result
	if spec.SelectNodes {
		var d diag.Diagnostics
		m.SelectedNodeIDs, d = types.ListValueFrom(ctx, types.StringType, spec.SelectedNodeIDs)
		resp.Diagnostics.Append(d...)
	}
	m.ID = m.Name
	m.OwnerID = types.StringValue(owner)
	if d := r.applyOwnedResult(ctx, &m, spec, res); d.HasError() {
		created.Rollback(ctx, errors.New(d.Errors()[0].Detail()))
		resp.Diagnostics.Append(d...)
		return
	}
	r.fillTopologyAssignments(ctx, &m, spec, &resp.Diagnostics)
	tflog.Info(ctx, "virtual cluster ready", map[string]any{"name": spec.Name, "groups": len(res.Groups),
		"master": fmt.Sprintf("%s:%d", m.MasterAddress.ValueString(), m.MasterPort.ValueInt64())})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	setIdentity(ctx, resp.Identity, m, &resp.Diagnostics)
}

func (r *virtualClusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx = session.ReadOnly(ctx, "refresh")
	ctx, cancel, m, ok := r.load(ctx, fastGet(req.State.Raw, req.State.Get), readTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	read := m // what resp.State already holds
	if m.Namespace.IsNull() || m.Namespace.ValueString() == "" {
		m.Namespace = types.StringValue(r.data.Namespace)
	}
	// Set first: the framework wants an identity even when Read drops the
	// cluster from state, and a state from before identities has none.
	setIdentity(ctx, resp.Identity, m, &resp.Diagnostics)
	if m.Bundles.IsNull() { // just imported: learn the spec and placement from Ray itself
		var former string
		if !r.readImported(ctx, &m, &former, &resp.Diagnostics) {
			if !resp.Diagnostics.HasError() {
				resp.State.RemoveResource(ctx)
			}
			return
		}
		keepFormerOwner(ctx, resp.Private, former, &resp.Diagnostics)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	spec, _, d := clusterSpec(ctx, m)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	readCtx, cancel := r.data.PlanReadContext(ctx)
	defer cancel()
	live, err := r.data.SharedGroups(readCtx) // one list for all clusters of this refresh
	if failUnanswered(r.data, &resp.Diagnostics, err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the virtual cluster's placement groups", session.ErrorDetail(err))
		return
	}
	present, d := refreshGroups(ctx, &m, spec, live)
	resp.Diagnostics.Append(d...)
	if present == 0 {
		resp.Diagnostics.AddWarning("Virtual cluster is gone", r.data.ExplainGone(ctx, spec, m.OwnerID.ValueString()))
		resp.State.RemoveResource(ctx)
		return
	}
	r.data.NoteRefreshed(spec, m.OwnerID.ValueString())
	if !sameModel(read, m) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// Update handles the attributes that do not change the groups themselves
// (segment_size, num_gpus_per_node, port range, exclude_node_ids, timeouts):
// it re-probes the existing groups, recomputes rank order and ports and
// rewrites the cluster's record. A per-node cluster whose nodes are appended
// or dropped is resized in place instead (session.UpdateNodes). For a cluster imported since the last
// apply, it is where this state takes ownership (session.TakeImported).
func (r *virtualClusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx, cancel, m, spec, ok := r.begin(ctx, req.Plan.Get, updateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	var prior virtualClusterModel
	if resp.Diagnostics.Append(fastGet(req.State.Raw, req.State.Get)(ctx, &prior)...); resp.Diagnostics.HasError() {
		return
	}
	var res *contract.Result
	var issues []clusterspec.Issue
	// Only when the plan showed it: a plan made before the provider was
	// configured kept owner_id "" and re-probes as before.
	if importPending(prior) && m.OwnerID.IsUnknown() {
		var owner string
		if owner, res, issues = r.data.TakeImported(ctx, spec); res != nil { // the takeover ran: the former owner is no longer to name
			m.OwnerID = types.StringValue(owner)
			resp.Diagnostics.Append(resp.Private.SetKey(ctx, formerOwnerKey, nil)...)
		}
	} else {
		if m.OwnerID.IsUnknown() {
			m.OwnerID = types.StringNull() // a state from before owners existed stays without one
		}
		res, issues = r.updateNodes(ctx, prior, &m, &spec)
	}
	if addIssues(&resp.Diagnostics, issues); resp.Diagnostics.HasError() {
		return
	}
	m.ID = m.Name
	resp.Diagnostics.Append(r.applyOwnedResult(ctx, &m, spec, res)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.fillTopologyAssignments(ctx, &m, spec, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	setIdentity(ctx, resp.Identity, m, &resp.Diagnostics)
}

// updateNodes reads what the update applies to the nodes for
// session.UpdateNodes: the plan's resize when a node list changed (as the
// plan decided it), the held selection, the port range and the excluded
// nodes.
func (r *virtualClusterResource) updateNodes(ctx context.Context, prior virtualClusterModel, m *virtualClusterModel, spec *clusterspec.Spec) (*contract.Result, []clusterspec.Issue) {
	u := session.NodesUpdate{KeepPorts: samePorts(prior, *spec)}
	if len(changedAttributes(*m, prior, resizingAttributes)) > 0 {
		resize, known := resizeOf(ctx, prior, *m)
		u.Resize, u.Known = &resize, known
		if spec.SelectNodes {
			held, _, _ := clusterSpec(ctx, prior)
			u.HeldIDs, u.HeldDomains = held.SelectedNodeIDs, held.SelectedNodeDomains
		}
		u.Exclude, _ = excludedNodes(ctx, *m)
	}
	res, resized, issues := r.data.UpdateNodes(ctx, spec, m.OwnerID.ValueString(), u)
	if resized && spec.SelectNodes {
		m.SelectedNodeIDs, _ = types.ListValueFrom(ctx, types.StringType, spec.SelectedNodeIDs) // strings into a string list: no error
	}
	return res, issues
}

// samePorts tells whether an update keeps the port range: its bundles then
// keep their recorded GPU ids and ports where Ray still has them. An update
// is a changed setting, or the recovery from a node's loss (checkRecovery),
// and in either the cluster's workers may hold the GPU a probe task would
// need; a new port range needs a port in it for every bundle.
func samePorts(prior virtualClusterModel, spec clusterspec.Spec) bool {
	return prior.PortRangeLow.ValueInt64() == int64(spec.Ports.Low) && prior.PortRangeHigh.ValueInt64() == int64(spec.Ports.High)
}

func (r *virtualClusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, cancel, m, spec, ok := r.begin(ctx, req.State.Get, deleteTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	res, issues := r.data.Delete(ctx, spec, m.OwnerID.ValueString(), importPending(m))
	if addIssues(&resp.Diagnostics, issues); res == nil || res.OtherOwner != nil {
		return
	}
	tflog.Info(ctx, "virtual cluster deleted", map[string]any{"removed": res.Removed, "already_gone": res.Missing})
}

// ImportState takes "<name>" or "<name>:<bundle counts>", e.g. "vc:2,2"; the
// counts give the logical-node split of a unified group, which Ray cannot tell.
func (r *virtualClusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.importByIdentity(ctx, req, resp) { // an import block's identity = { name, namespace }
		return
	}
	name, countsText, hasCounts := strings.Cut(req.ID, ":")
	if name == "" {
		resp.Diagnostics.AddError("Invalid import id", `The id names no cluster. Write it as "<name>" or "<name>:<bundle counts>", e.g. "vc" or "vc:2,2".`)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	r.setImportIdentity(ctx, name, resp)
	if hasCounts {
		var counts []int64
		for _, part := range strings.Split(countsText, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
			if err != nil || n < 0 {
				resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("bundle count %q is not a non-negative integer. "+
					`Write the id as "<name>" or "<name>:<bundle counts>", e.g. "vc" or "vc:2,2".`, part))
				return
			}
			counts = append(counts, n)
		}
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("bundle_ct_per_node_list"), counts)...)
	}
}

type (
	getFunc     func(context.Context, any) diag.Diagnostics
	timeoutFunc func(context.Context, time.Duration) (time.Duration, diag.Diagnostics)
)

var (
	createTimeout = func(t timeouts.Value) timeoutFunc { return t.Create }
	readTimeout   = func(t timeouts.Value) timeoutFunc { return t.Read }
	updateTimeout = func(t timeouts.Value) timeoutFunc { return t.Update }
	deleteTimeout = func(t timeouts.Value) timeoutFunc { return t.Delete }
)

// load reads the model and bounds ctx by the operation's timeout; the cancel
// func is always safe to defer.
func (r *virtualClusterResource) load(ctx context.Context, get getFunc, timeout func(timeouts.Value) timeoutFunc,
	diags *diag.Diagnostics) (context.Context, context.CancelFunc, virtualClusterModel, bool) {
	var m virtualClusterModel
	diags.Append(get(ctx, &m)...)
	if diags.HasError() || !requireConfigured(r.data, diags) {
		return ctx, func() {}, m, false
	}
	limit, d := timeout(m.Timeouts)(ctx, clusterspec.DefaultOperationTimeout)
	diags.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	return ctx, cancel, m, !diags.HasError()
}

// begin is load plus the cluster shape the model describes.
func (r *virtualClusterResource) begin(ctx context.Context, get getFunc, timeout func(timeouts.Value) timeoutFunc,
	diags *diag.Diagnostics) (context.Context, context.CancelFunc, virtualClusterModel, clusterspec.Spec, bool) {
	ctx, cancel, m, ok := r.load(ctx, get, timeout, diags)
	if !ok {
		return ctx, cancel, m, clusterspec.Spec{}, false
	}
	if m.Namespace.IsNull() || m.Namespace.IsUnknown() || m.Namespace.ValueString() == "" {
		m.Namespace = types.StringValue(r.data.Namespace)
	}
	if m.TopologyLabels.IsUnknown() { // the plan could not resolve it (provider not configured then)
		m.TopologyLabels = topologyLabelsObject(r.data.TopologyLabels)
	}
	spec, _, d := clusterSpec(ctx, m)
	diags.Append(d...)
	spec.CapacityCheck = r.data.CapacityCheckOf(m.CapacityCheck.ValueString())
	return ctx, cancel, m, spec, !diags.HasError()
}

// Diagnostics helpers shared by the resource files.
func addIssues(diags *diag.Diagnostics, issues []clusterspec.Issue) {
	for _, is := range issues {
		switch {
		case is.Path == "" && is.Warning:
			diags.AddWarning(is.Summary, is.Detail)
		case is.Path == "":
			diags.AddError(is.Summary, is.Detail)
		case is.Warning:
			diags.AddAttributeWarning(issuePath(is.Path), is.Summary, is.Detail)
		default:
			diags.AddAttributeError(issuePath(is.Path), is.Summary, is.Detail)
		}
	}
}
