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
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
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

type virtualClusterResource struct{ data *ProviderData }

func (r *virtualClusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + VirtualClusterSuffix
}

func (r *virtualClusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *virtualClusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	ctx, cancel, m, spec, ok := r.begin(ctx, req.Plan.Get, createTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	owner, err := record.NewOwnerToken()
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the virtual cluster", errorDetail(err))
		return
	}
	// The plan may have deferred the live check (cluster unreachable then): run it again before creating anything.
	if _ = checkRayVersion(ctx, r.data, spec, &resp.Diagnostics); resp.Diagnostics.HasError() { // unreachable: the snapshot says so
		return
	}
	snap, err := liveview.FetchSnapshot(ctx, r.data.Client)
	if err != nil {
		addDashboardError(&resp.Diagnostics, r.data.Client.Address(), err)
		return
	}
	if err := r.data.labelSupportError(ctx, spec.Topology, snap.Nodes); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(clusterspec.AttrTopologyLabels), "Ray does not report node labels", err.Error())
		return
	}
	exclude, _ := excludedNodes(ctx, m)
	env := r.placementEnv()
	res, issues, err := placement.Place(ctx, env, &spec, snap, owner, exclude)
	if addIssues(&resp.Diagnostics, issues); resp.Diagnostics.HasError() {
		return
	}
	if se, ok := placement.IsSnapshotError(err); ok {
		addDashboardError(&resp.Diagnostics, r.data.Client.Address(), se.Err)
		return
	}
	if err != nil {
		r.data.ForgetChosen(spec.Namespace + "/" + spec.Name)
		placement.CleanupAfterFailedCreate(ctx, env, spec, owner, err)
		resp.Diagnostics.AddError("Cannot create the virtual cluster", placement.CreateErrorDetail(spec, res, err))
		return
	}
	if spec.SelectNodes {
		var d diag.Diagnostics
		m.SelectedNodeIDs, d = types.ListValueFrom(ctx, types.StringType, spec.SelectedNodeIDs)
		resp.Diagnostics.Append(d...)
	}
	m.ID = m.Name
	m.OwnerID = types.StringValue(owner)
	if d := r.applyOwnedResult(ctx, &m, spec, res); d.HasError() {
		placement.CleanupAfterFailedCreate(ctx, env, spec, owner, errors.New(d.Errors()[0].Detail()))
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
	ctx = driver.ReadOnly(ctx, "refresh")
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
	readCtx, cancel := r.data.planReadContext(ctx)
	defer cancel()
	live, err := r.data.Live.Groups(readCtx) // one list for all clusters of this refresh
	if r.data.failUnanswered(&resp.Diagnostics, err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the virtual cluster's placement groups", errorDetail(err))
		return
	}
	present, d := refreshGroups(ctx, &m, spec, live)
	resp.Diagnostics.Append(d...)
	if present == 0 {
		resp.Diagnostics.AddWarning("Virtual cluster is gone", r.explainGone(ctx, m, spec))
		resp.State.RemoveResource(ctx)
		return
	}
	if !sameModel(read, m) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// Update handles the attributes that do not change the groups themselves
// (segment_size, num_gpus_per_node, port range, exclude_node_ids, timeouts):
// it re-probes the existing groups, recomputes rank order and ports and
// rewrites the cluster's record. For a cluster imported since the last
// apply, it is where this state takes ownership (takeImported).
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
	var err error
	// Only when the plan showed it: a plan made before the provider was
	// configured kept owner_id "" and re-probes as before.
	if importPending(prior) && m.OwnerID.IsUnknown() {
		if res = r.takeImported(ctx, &m, spec, &resp.Diagnostics); res == nil {
			return
		}
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, formerOwnerKey, nil)...)
	} else {
		res, err = r.reprobe(ctx, &m, spec, samePorts(prior, spec))
	}
	if err != nil {
		summary := "Cannot re-probe the virtual cluster"
		if contract.IsKind(err, contract.KindConflict) {
			summary = "The virtual cluster belongs to another Terraform state"
		}
		resp.Diagnostics.AddError(summary, errorDetail(err))
		return
	}
	if missing := res.MissingGroups(); len(missing) > 0 {
		resp.Diagnostics.AddError("Placement groups disappeared during the update",
			fmt.Sprintf("Ray no longer has %s; run `terraform apply` again to recreate the cluster.", strings.Join(missing, ", ")))
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

// reprobe probes the groups of a cluster this state owns (or, from before
// owners existed, holds without an owner), with keep but for the bundles Ray
// no longer has where its record says, and rewrites its record.
func (r *virtualClusterResource) reprobe(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, keep bool) (*contract.Result, error) {
	if m.OwnerID.IsUnknown() {
		m.OwnerID = types.StringNull() // a state from before owners existed stays without one
	}
	owner := m.OwnerID.ValueString()
	request := contract.RequestFor(spec, contract.ActionInspect)
	if owner != "" {
		template := record.NewManifest(spec, owner, r.data.Version, record.Placement{})
		request = request.Owned(spec, owner, false, &template)
		request.Probe.KeepRecorded = keep
	}
	return r.runDriver(ctx, request)
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
	res, err := r.runDriver(ctx, placement.DeleteRequest(spec, m.OwnerID.ValueString()))
	if err != nil {
		resp.Diagnostics.AddError("Cannot delete the virtual cluster", errorDetail(err))
		return
	}
	if o := res.OtherOwner; o != nil {
		why := ""
		if importPending(m) {
			why = " This state imported it but never applied the import, and only that apply makes it the owner."
		}
		resp.Diagnostics.AddWarning("Virtual cluster left to its owner",
			fmt.Sprintf("The placement groups of %q in namespace %s belong to %s, so this state did not touch them; "+
				"it only forgets the cluster.%s\n\nIf no other state holds it (an apply interrupted before Terraform saved "+
				"state leaves such a cluster), import it again to adopt or remove it. %s",
				spec.Name, spec.Namespace, o.Describe(), why, contract.AdoptOrRemoveFix))
		return
	}
	if err := driver.DeleteTransfer(ctx, r.data.Client, spec.Namespace, spec.Name); err != nil {
		tflog.Warn(ctx, "cannot remove the cluster's ownership note; the next import of the name replaces it", map[string]any{"error": err.Error()})
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
	spec.CapacityCheck = r.data.capacityCheck(m.CapacityCheck)
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
