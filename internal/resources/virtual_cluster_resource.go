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

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
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
	resp.TypeName = req.ProviderTypeName + "_virtual_cluster"
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
	// The plan may have deferred the live check (cluster unreachable then): run it again before creating anything.
	if snap, err := vcluster.FetchSnapshot(ctx, r.data.Client); err != nil {
		addDashboardError(&resp.Diagnostics, r.data.Client.Address(), err)
		return
	} else if checkLive(spec, snap, &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	res, err := r.runDriver(ctx, spec.Request(vcluster.ActionCreate))
	if err != nil {
		r.cleanupAfterFailedCreate(ctx, spec, err)
		resp.Diagnostics.AddError("Cannot create the virtual cluster", createErrorDetail(spec, res, err))
		return
	}
	m.ID = m.Name
	m.Namespace = types.StringValue(r.data.Namespace)
	if d := applyResult(&m, spec, res); d.HasError() {
		r.cleanupAfterFailedCreate(ctx, spec, errors.New(d.Errors()[0].Detail()))
		resp.Diagnostics.Append(d...)
		return
	}
	tflog.Info(ctx, "virtual cluster ready", map[string]any{"name": spec.Name, "groups": len(res.Groups),
		"master": fmt.Sprintf("%s:%d", m.MasterAddress.ValueString(), m.MasterPort.ValueInt64())})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *virtualClusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx, cancel, m, ok := r.load(ctx, req.State.Get, readTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	if m.Namespace.IsNull() || m.Namespace.ValueString() == "" {
		m.Namespace = types.StringValue(r.data.Namespace)
	}
	if m.Bundles.IsNull() { // just imported: learn the spec and placement from Ray itself
		if !r.readImported(ctx, &m, &resp.Diagnostics) {
			if !resp.Diagnostics.HasError() {
				resp.State.RemoveResource(ctx)
			}
			return
		}
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		return
	}
	spec, _, d := clusterSpec(ctx, m)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	live, err := vcluster.ListLiveGroups(ctx, r.data.Client)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the virtual cluster's placement groups", err.Error())
		return
	}
	present, d := refreshGroups(ctx, &m, spec, live)
	resp.Diagnostics.Append(d...)
	if present == 0 {
		tflog.Warn(ctx, "every placement group of the virtual cluster is gone; removing it from state", map[string]any{"name": spec.Name})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update handles the attributes that do not change the groups themselves
// (segment_size, num_gpus_per_node, port range, timeouts): it re-probes the
// existing groups and recomputes rank order and ports.
func (r *virtualClusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	ctx, cancel, m, spec, ok := r.begin(ctx, req.Plan.Get, updateTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	res, err := r.runDriver(ctx, spec.Request(vcluster.ActionInspect))
	if err != nil {
		resp.Diagnostics.AddError("Cannot re-probe the virtual cluster", err.Error())
		return
	}
	if missing := res.MissingGroups(); len(missing) > 0 {
		resp.Diagnostics.AddError("Placement groups disappeared during the update",
			fmt.Sprintf("Ray no longer has %s; run `terraform apply` again to recreate the cluster.", strings.Join(missing, ", ")))
		return
	}
	m.ID = m.Name
	m.Namespace = types.StringValue(r.data.Namespace)
	resp.Diagnostics.Append(applyResult(&m, spec, res)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *virtualClusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ctx, cancel, _, spec, ok := r.begin(ctx, req.State.Get, deleteTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	res, err := r.runDriver(ctx, spec.Request(vcluster.ActionDelete))
	if err != nil {
		resp.Diagnostics.AddError("Cannot delete the virtual cluster", err.Error())
		return
	}
	tflog.Info(ctx, "virtual cluster deleted", map[string]any{"removed": res.Removed, "already_gone": res.Missing})
}

// ImportState takes "<name>" or "<name>:<bundle counts>", e.g. "vc:2,2"; the
// counts give the logical-node split of a unified group, which Ray cannot tell.
func (r *virtualClusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name, countsText, hasCounts := strings.Cut(req.ID, ":")
	if name == "" {
		resp.Diagnostics.AddError("Invalid import id", `Expected "<name>" or "<name>:<bundle counts>", e.g. "vc" or "vc:2,2".`)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
	if hasCounts {
		var counts []int64
		for _, part := range strings.Split(countsText, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
			if err != nil || n < 0 {
				resp.Diagnostics.AddError("Invalid import id", fmt.Sprintf("bundle count %q is not a non-negative integer", part))
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
	limit, d := timeout(m.Timeouts)(ctx, vcluster.DefaultOperationTimeout)
	diags.Append(d...)
	ctx, cancel := context.WithTimeout(ctx, limit)
	return ctx, cancel, m, !diags.HasError()
}

// begin is load plus the cluster shape the model describes.
func (r *virtualClusterResource) begin(ctx context.Context, get getFunc, timeout func(timeouts.Value) timeoutFunc,
	diags *diag.Diagnostics) (context.Context, context.CancelFunc, virtualClusterModel, vcluster.Spec, bool) {
	ctx, cancel, m, ok := r.load(ctx, get, timeout, diags)
	if !ok {
		return ctx, cancel, m, vcluster.Spec{}, false
	}
	if m.Namespace.IsNull() || m.Namespace.IsUnknown() || m.Namespace.ValueString() == "" {
		m.Namespace = types.StringValue(r.data.Namespace)
	}
	spec, _, d := clusterSpec(ctx, m)
	diags.Append(d...)
	return ctx, cancel, m, spec, !diags.HasError()
}

// Diagnostics helpers shared by the resource files.
func addIssues(diags *diag.Diagnostics, issues []vcluster.Issue) {
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
