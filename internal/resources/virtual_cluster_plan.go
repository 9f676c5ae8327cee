package resources

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// ValidateConfig applies every static rule of the reference at validate and
// plan time, without talking to Ray.
func (r *virtualClusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m virtualClusterModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, known, d := clusterSpec(ctx, m)
	resp.Diagnostics.Append(d...)
	if !known || resp.Diagnostics.HasError() {
		return
	}
	addIssues(&resp.Diagnostics, spec.Validate())
	if !m.ReadyTimeout.IsNull() && !m.Timeouts.IsNull() {
		if create, d := m.Timeouts.Create(ctx, vcluster.DefaultOperationTimeout); !d.HasError() && readyTimeout(m) >= create {
			resp.Diagnostics.AddAttributeWarning(path.Root("ready_timeout"), "ready_timeout is not shorter than the create timeout",
				fmt.Sprintf("ready_timeout (%s) should be shorter than timeouts.create (%s), or Terraform stops waiting first.", readyTimeout(m), create))
		}
	}
}

// ModifyPlan checks the plan against the live cluster (once per plan: the
// snapshot is cached) and turns drift recorded by refresh into a replacement.
func (r *virtualClusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil || r.data.Client == nil {
		return // destroy, or provider not configured yet
	}
	var plan virtualClusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	creating := req.State.Raw.IsNull()
	replacing := false
	if !creating {
		var state virtualClusterModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if state.Namespace.ValueString() != r.data.Namespace {
			plan.Namespace = types.StringValue(r.data.Namespace)
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("namespace"))
			replacing = true
		}
		if drift := recordedDrift(ctx, state); drift != "" {
			resp.Diagnostics.AddWarning("Virtual cluster drifted outside Terraform",
				fmt.Sprintf("Ray's placement groups of %q no longer match the configuration: %s. The cluster will be replaced.", state.Name.ValueString(), drift))
			plan.PlacementGroups = types.ListUnknown(groupObjectType)
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("placement_groups"))
			replacing = true
		}
		replacing = replacing || shapeChanged(plan, state)
		if !replacing && configEqual(plan, state) {
			// Nothing to do: keep what Ray reported (the framework marks computed
			// values unknown before attribute plan modifiers settle equal floats).
			plan = keepComputed(plan, state)
		}
	} else {
		plan.Namespace = types.StringValue(r.data.Namespace)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	spec, known, d := clusterSpec(ctx, plan)
	resp.Diagnostics.Append(d...)
	if !known || resp.Diagnostics.HasError() || vcluster.HasError(spec.Validate()) {
		return
	}
	if clash := r.data.ClaimPorts(spec.Name, spec.Ports); len(clash) > 0 {
		resp.Diagnostics.AddAttributeWarning(path.Root("port_range_low"), "Port range overlaps another virtual cluster",
			fmt.Sprintf("Cluster %q probes ports in %s, which overlaps %s. Bundles of both clusters on the same node "+
				"may be handed the same port. Carve disjoint ranges, e.g. from provider::ray::port_ranges().",
				spec.Name, spec.Ports, strings.Join(clash, ", ")))
	}
	snap, err := r.data.CachedSnapshot(ctx)
	if rayclient.IsUnauthorized(err) {
		resp.Diagnostics.AddError("Ray rejected the credentials", credentialsDetail(r.data.Client.Address(), err))
		return
	}
	if err != nil {
		resp.Diagnostics.AddWarning("Cannot check the plan against the live Ray cluster",
			fmt.Sprintf("%s\n\nThe segment and capacity checks run again at apply, before any placement group is created.",
				unreachableDetail(r.data.Client.Address(), err)))
		return
	}
	if creating || replacing {
		checkLive(spec, snap, &resp.Diagnostics)
	} else if err := spec.CheckSegments(snap.Topology()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("segment_size"), "Not enough complete NVLink segments", err.Error())
	}
}

// checkLive rejects a cluster that the live topology and free resources cannot
// hold, naming the requirement that fails; nothing is created. The cluster's
// own groups do not count as taken: a replacement frees them first.
func checkLive(spec vcluster.Spec, snap *vcluster.Snapshot, diags *diag.Diagnostics) {
	if err := spec.CheckSegments(snap.Topology()); err != nil {
		summary := "Not enough complete NVLink segments"
		var insufficient *topology.ResourceInsufficientError
		if !errors.As(err, &insufficient) {
			summary = "Invalid segment configuration"
		}
		diags.AddAttributeError(path.Root("segment_size"), summary, err.Error())
		return
	}
	shortage := vcluster.ExplainShortage(spec.Groups(), snap.Capacity(spec.GroupNames()))
	for _, e := range shortage.Errors {
		diags.AddAttributeError(path.Root("bundle_ct_per_node_list"), "The Ray cluster cannot hold this virtual cluster",
			e+"\n\n"+shortage.Nodes)
	}
	for _, w := range shortage.Warnings {
		diags.AddAttributeWarning(path.Root("bundle_ct_per_node_list"), "Placement may not succeed", w)
	}
}

// shapeChanged reports whether any attribute that forces replacement differs.
func shapeChanged(plan, state virtualClusterModel) bool {
	return len(changedAttributes(plan, state, replacingAttributes)) > 0
}

// configEqual reports whether every configurable attribute is unchanged.
func configEqual(plan, state virtualClusterModel) bool {
	return !shapeChanged(plan, state) && len(changedAttributes(plan, state, inPlaceAttributes)) == 0
}

// keepComputed copies the computed attributes of state into plan.
func keepComputed(plan, state virtualClusterModel) virtualClusterModel {
	plan.ID, plan.Namespace = state.ID, state.Namespace
	plan.PlacementGroups, plan.WorldSize, plan.NodeCount = state.PlacementGroups, state.WorldSize, state.NodeCount
	plan.SortedBundleIndices, plan.Bundles = state.SortedBundleIndices, state.Bundles
	plan.NVLinkDomainPerBundle = state.NVLinkDomainPerBundle
	plan.MasterAddress, plan.MasterPort = state.MasterAddress, state.MasterPort
	return plan
}

// recordedDrift joins the drift refresh recorded for each group.
func recordedDrift(ctx context.Context, state virtualClusterModel) string {
	var groups []recordedGroup
	if state.PlacementGroups.IsNull() || state.PlacementGroups.IsUnknown() {
		return ""
	}
	if d := state.PlacementGroups.ElementsAs(ctx, &groups, false); d.HasError() {
		tflog.Warn(ctx, "cannot read recorded placement groups")
		return ""
	}
	var parts []string
	for _, g := range groups {
		if g.Drift != "" {
			parts = append(parts, fmt.Sprintf("%s %s", g.Name, g.Drift))
		}
	}
	return strings.Join(parts, "; ")
}

var indexedPath = regexp.MustCompile(`^([a-z_]+)\[(\d+)\]$`)

// issuePath turns "node_resource_constraints[2]" into an attribute path.
func issuePath(p string) path.Path {
	if m := indexedPath.FindStringSubmatch(p); m != nil {
		i, _ := strconv.Atoi(m[2])
		return path.Root(m[1]).AtListIndex(i)
	}
	return path.Root(p)
}
