package resources

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// ValidateConfig applies every static rule of the reference at validate and
// plan time, without talking to Ray.
func (r *virtualClusterResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m virtualClusterModel
	resp.Diagnostics.Append(fastGet(req.Config.Raw, req.Config.Get)(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, known, d := clusterSpec(ctx, m)
	resp.Diagnostics.Append(d...)
	if !known || resp.Diagnostics.HasError() {
		return
	}
	if issues := spec.Validate(); len(issues) > 0 { // the schema is built only to filter issues
		var sch resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sch)
		addIssues(&resp.Diagnostics, withoutSchemaDuplicates(ctx, sch.Schema, req.Config, issues))
	}
	if !spec.SelectNodes {
		for attr, set := range map[string]bool{"exclude_node_ids": !m.ExcludeNodeIDs.IsNull(), "pinning": !m.Pinning.IsNull()} {
			if set {
				resp.Diagnostics.AddAttributeWarning(path.Root(attr), attr+" has no effect",
					attr+" only applies to a cluster that selects its own nodes (select_nodes = true).")
			}
		}
	}
	if !m.ReadyTimeout.IsNull() && !m.Timeouts.IsNull() {
		if create, d := m.Timeouts.Create(ctx, clusterspec.DefaultOperationTimeout); !d.HasError() && readyTimeout(m) >= create {
			resp.Diagnostics.AddAttributeWarning(path.Root("ready_timeout"), "ready_timeout is not shorter than the create timeout",
				fmt.Sprintf("ready_timeout (%s) should be shorter than timeouts.create (%s), or Terraform stops waiting first.", readyTimeout(m), create))
		}
	}
}

// ModifyPlan checks the plan against the live cluster (once per plan: the
// snapshot is cached), turns drift recorded by refresh or a lost node into a
// replacement, and chooses the nodes of a cluster about to be created.
func (r *virtualClusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx = session.ReadOnly(ctx, "plan")
	if !r.data.Configured() {
		return // provider not configured yet
	}
	if req.Plan.Raw.IsNull() {
		if !req.State.Raw.IsNull() { // destroy
			var state virtualClusterModel
			if resp.Diagnostics.Append(fastGet(req.State.Raw, req.State.Get)(ctx, &state)...); !resp.Diagnostics.HasError() {
				r.warnIfTransferred(ctx, state, &resp.Diagnostics)
			}
		}
		return
	}
	var plan virtualClusterModel
	resp.Diagnostics.Append(fastGet(req.Plan.Raw, req.Plan.Get)(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p := &planCall{r: r, ctx: ctx, resp: resp, plan: &plan, creating: req.State.Raw.IsNull()}
	if !p.creating {
		resp.Diagnostics.Append(fastGet(req.State.Raw, req.State.Get)(ctx, &p.state)...)
		if resp.Diagnostics.HasError() {
			return
		}
		upgradeState(&p.state)
		r.warnIfTransferred(ctx, p.state, &resp.Diagnostics)
	}
	var labels types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(clusterspec.AttrTopologyLabels), &labels)...)
	planned := plan // what resp.Plan already holds
	if p.planTopologyLabels(labels); resp.Diagnostics.HasError() {
		return
	}
	p.run()
	p.planTakeover(req.Private)
	if !sameModel(planned, plan) {
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
}

// upgradeState reads null select_nodes, pinning and exclusive_nodes, from a state written
// before they existed, as their defaults.
func upgradeState(m *virtualClusterModel) {
	if m.SelectNodes.IsNull() {
		m.SelectNodes = types.BoolValue(false)
	}
	if m.Pinning.IsNull() {
		m.Pinning = types.StringValue(clusterspec.DefaultPinning)
	}
	if m.ExclusiveNodes.IsNull() {
		m.ExclusiveNodes = types.BoolValue(false)
	}
}

// planCall is one ModifyPlan call.
type planCall struct {
	r                   *virtualClusterResource
	ctx                 context.Context
	resp                *resource.ModifyPlanResponse
	plan                *virtualClusterModel
	state               virtualClusterModel
	creating, replacing bool
	// resize is the in-place resize this plan makes, nil when none, and
	// resizedAttribute the node attribute whose change shows it.
	resize           *session.Resize
	resizedAttribute string
}

// planTopologyLabels plans the topology source in effect: the configured
// one, else the provider's. When it differs from the one the cluster was
// created with (the provider's changed), the cluster is replaced.
func (p *planCall) planTopologyLabels(config types.Object) {
	if config.IsUnknown() {
		return
	}
	src, d := topologySourceFor(p.ctx, p.r.data, config)
	p.resp.Diagnostics.Append(d...)
	if config.IsNull() {
		p.plan.TopologyLabels = topologyLabelsObject(src)
	}
	if p.creating {
		return
	}
	was, d := TopologyLabelsFromObject(p.ctx, p.state.TopologyLabels)
	p.resp.Diagnostics.Append(d...)
	if clusterspec.SourceOrDefault(was) != clusterspec.SourceOrDefault(src) {
		p.resp.RequiresReplace = append(p.resp.RequiresReplace, path.Root(clusterspec.AttrTopologyLabels))
		p.replacing = true
	}
}

func (p *planCall) replace(attribute, summary, detail string) {
	p.resp.Diagnostics.AddWarning(summary, detail+" The cluster will be replaced.")
	p.resp.RequiresReplace = append(p.resp.RequiresReplace, path.Root(attribute))
	p.replacing = true
}

func (p *planCall) run() {
	diags := &p.resp.Diagnostics
	data := p.r.data
	plan := p.plan
	if p.creating {
		plan.Namespace = types.StringValue(data.Namespace)
	} else {
		p.compareWithState()
	}
	spec, known, d := clusterSpec(p.ctx, *plan)
	diags.Append(d...)
	spec.CapacityCheck = data.CapacityCheckOf(plan.CapacityCheck.ValueString())
	if !known || diags.HasError() || clusterspec.HasError(spec.Validate()) {
		return
	}
	readCtx, cancel := data.PlanReadContext(p.ctx) // plan_timeout: a silent address fails the plan
	defer cancel()
	if err := checkRayVersion(readCtx, data, spec, diags); diags.HasError() || failUnanswered(data, diags, err) {
		return
	}
	snap, snapErr := data.SharedSnapshot(readCtx)
	if failUnanswered(data, diags, snapErr) || (snapErr == nil && !p.checkOccupancy(spec, snap)) {
		return
	}
	if data.ClaimName(spec, p.state.OwnerID.ValueString(), p.replacing) {
		diags.AddAttributeError(path.Root("name"), "Duplicate virtual cluster name",
			fmt.Sprintf("Another ray_virtual_cluster in this configuration already declares name %q in Ray namespace %s. "+
				"Placement-group names are unique per namespace: both resources would manage the same groups, and "+
				"destroying one would remove the other's. Give each cluster its own name.", spec.Name, spec.Namespace))
		return
	}
	defer p.claimPorts(&spec)                         // once the nodes are chosen
	if p.creating || p.replacing || p.resize != nil { // known from the configuration alone
		plan.WorldSize, plan.NodeCount = types.Int64Value(int64(spec.WorldSize())), types.Int64Value(int64(spec.NodeCount()))
	}
	if snapErr != nil {
		p.liveUnavailable(snapErr)
		return
	}
	if err := data.LabelSupportError(p.ctx, spec.Topology, snap.Nodes); err != nil {
		diags.AddAttributeError(path.Root(clusterspec.AttrTopologyLabels), "Ray does not report node labels", err.Error())
		return
	}
	if !p.creating && !p.replacing {
		if !spec.SelectNodes {
			if err := planning.CheckSegments(spec, snap.TopologyFrom(spec.Topology)); err != nil {
				diags.AddAttributeError(path.Root("segment_size"), "Not enough complete NVLink segments", err.Error())
			}
		}
		if p.resize != nil && len(p.resize.Added) > 0 && !diags.HasError() {
			p.planGrow(spec, snap)
		}
		return
	}
	p.planPlacement(&spec, snap) // spec is what claimPorts reads: its nodes are chosen here
	if !diags.HasError() {
		replaced := ""
		if p.replacing {
			replaced = p.state.Namespace.ValueString() + "/" + p.state.Name.ValueString()
		}
		addIssues(diags, data.CheckQuota(p.ctx, spec, snap, replaced))
	}
}

// checkOccupancy checks the live groups and nodes against the cluster before
// it claims its name: a new cluster's name must be free, and an updated one
// is told about nodes others hold. It reports whether planning goes on.
func (p *planCall) checkOccupancy(spec clusterspec.Spec, snap *planning.Snapshot) bool {
	if p.creating {
		issues := p.r.data.CheckNameFree(p.ctx, spec, snap.Groups)
		addIssues(&p.resp.Diagnostics, issues)
		return !clusterspec.HasError(issues)
	}
	if !p.replacing {
		p.checkRecovery(spec, snap)
		if prior, known, _ := clusterSpec(p.ctx, p.state); known && !spec.UseUnifiedPG {
			addIssues(&p.resp.Diagnostics, session.LeftoverIssue(spec.Name,
				session.LeftoverGroups(spec.Name, []clusterspec.Spec{prior, spec}, snap.Groups)))
		}
	}
	return true
}

// liveUnavailable reports a snapshot that could not be read: rejected
// credentials fail the plan; anything else warns that the live checks wait
// for the apply, leaving unknown what a new cluster would choose there.
func (p *planCall) liveUnavailable(snapErr error) {
	data := p.r.data
	if session.IsUnauthorized(snapErr) {
		addDashboardError(&p.resp.Diagnostics, data, snapErr)
		return
	}
	p.resp.Diagnostics.AddWarning("Cannot check the plan against the live Ray cluster",
		fmt.Sprintf("%s\n\nThe segment and capacity checks run again at apply, before any placement group is created.",
			session.UnreachableDetail(data.Address(), snapErr)))
	if p.creating || p.replacing {
		p.plan.OwnerID = types.StringUnknown()
		p.plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
	}
}

// planPlacement plans a new or replacing cluster against the live snapshot:
// its computed attributes become unknown, select_nodes chooses nodes now
// (into spec, for the checks and for claimPorts), and its capacity is
// checked against the snapshot and the clusters planned beside it.
func (p *planCall) planPlacement(spec *clusterspec.Spec, snap *planning.Snapshot) {
	diags := &p.resp.Diagnostics
	plan := p.plan
	if p.replacing {
		*plan = unknownComputed(*plan)
	}
	plan.OwnerID = types.StringUnknown()
	plan.SelectedNodeIDs = types.ListNull(types.StringType)
	if len(spec.TopologyStrategy) == 0 {
		plan.TopologyAssignments = types.MapNull(types.StringType)
	}
	var exclude map[string]bool
	if spec.SelectNodes {
		var known bool
		if exclude, known = excludedNodes(p.ctx, *plan); !known {
			plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
			return // chosen at apply, once the excluded nodes are known
		}
		// Known only after apply: see placement.PlanNew.
		plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
	}
	addIssues(diags, placement.PlanNew(spec, snap, exclude, p.r.data.PlanChoose))
	if spec.SelectNodes && !diags.HasError() {
		tflog.Debug(p.ctx, "nodes select_nodes would choose now", map[string]any{"cluster": spec.Name, "nodes": spec.SelectedNodeIDs})
	}
}

// claimPorts warns when the cluster's port range overlaps that of another
// cluster planned in this run on a node both can hold bundles on. A cluster
// whose nodes are chosen only at apply (exclude_node_ids not known yet) is
// checked there, once it has a choice: now it would clash with everything.
func (p *planCall) claimPorts(spec *clusterspec.Spec) {
	if spec.SelectNodes && len(spec.SelectedNodeIDs) == 0 {
		return
	}
	clash := p.r.data.ClaimPorts(spec.Name, spec.Ports, spec.PinnedNodes())
	if len(clash) == 0 {
		return
	}
	p.resp.Diagnostics.AddAttributeWarning(path.Root("port_range_low"), "Port range overlaps another virtual cluster",
		fmt.Sprintf("Cluster %q probes ports in %s, which overlaps %s. Bundles of both clusters on that node "+
			"may be handed the same port. Carve disjoint ranges, e.g. from provider::ray::port_ranges(), or pin "+
			"the clusters to disjoint nodes (select_nodes with exclude_node_ids).",
			spec.Name, spec.Ports, strings.Join(clash, "; ")))
}

// compareWithState hands the comparison of the plan with state to
// session.CompareWithState and shows what it decides: replacements (with
// the attribute each shows as changed), or no change, which keeps what Ray
// reported.
func (p *planCall) compareWithState() {
	plan, state := p.plan, p.state
	if !shapeChanged(*plan, state) {
		p.planNodes()
	}
	c := session.StateComparison{Name: state.Name.ValueString(), Namespace: state.Namespace.ValueString(),
		Replacing: p.replacing, ShapeChanged: shapeChanged(*plan, state), Drift: recordedDrift(p.ctx, state)}
	if p.resize != nil {
		c.Removing = p.resize.RemovedGroups(c.Name)
	}
	if c.Exclude, c.ExcludeKnown = excludedNodes(p.ctx, *plan); c.ExcludeKnown {
		_ = state.SelectedNodeIDs.ElementsAs(p.ctx, &c.Held, false)
		if p.resize != nil && len(c.Held) > p.resize.Common {
			c.Held = c.Held[:p.resize.Common] // a shrink gives the last nodes up: excluding one of them replaces nothing
		}
	}
	for _, r := range p.r.data.CompareWithState(c) {
		switch r.Attribute {
		case session.AttrNamespace:
			plan.Namespace = types.StringValue(p.r.data.Namespace)
			p.resp.RequiresReplace = append(p.resp.RequiresReplace, path.Root(r.Attribute))
			p.replacing = true
		case session.AttrPlacementGroups:
			plan.PlacementGroups = types.ListUnknown(groupObjectType)
			p.replace(r.Attribute, r.Summary, r.Detail)
		case clusterspec.AttrSelectedNodeIDs:
			plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
			p.replace(r.Attribute, r.Summary, r.Detail)
		default: // an attribute that forces replacement by its own plan modifier
			p.replacing = true
		}
	}
	p.warnResize()
	if !p.replacing && configEqual(*plan, state) {
		// Nothing to do: keep what Ray reported (the framework marks computed
		// values unknown before attribute plan modifiers settle equal floats).
		*plan = keepComputed(*plan, state)
	}
}

// planNodes decides how a change of the logical nodes is applied: an
// in-place resize (its groups listed in a warning) or a replacement (the
// reason named). resizeOrReplace already marked the replacement.
func (p *planCall) planNodes() {
	changed := changedAttributes(*p.plan, p.state, resizingAttributes)
	if len(changed) == 0 {
		return
	}
	r, known := resizeOf(p.ctx, p.state, *p.plan)
	name := p.state.Name.ValueString()
	switch why := session.NodesReplacement(r, known, importPending(p.state), name); {
	case why != "":
		p.replace(changed[0], session.SummaryReplacedForNodes, why)
	case r.InPlace():
		p.resize, p.resizedAttribute = &r, changed[0]
		if p.state.SelectNodes.ValueBool() {
			// The kept nodes keep theirs; the added ones are chosen at apply (see placement.PlanNew).
			var held []string
			_ = p.state.SelectedNodeIDs.ElementsAs(p.ctx, &held, false)
			p.plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
			if ids, known := r.PlannedSelection(held); known {
				p.plan.SelectedNodeIDs, _ = types.ListValueFrom(p.ctx, types.StringType, ids)
			}
		}
	}
}

// planGrow checks the nodes a resize adds beside the groups the cluster
// keeps (select_nodes: chosen now, beside the nodes the kept ones hold),
// and the namespace's quota against the new shape.
func (p *planCall) planGrow(spec clusterspec.Spec, snap *planning.Snapshot) {
	diags := &p.resp.Diagnostics
	exclude, known := excludedNodes(p.ctx, *p.plan)
	if spec.SelectNodes {
		if !known {
			return // chosen at apply, once the excluded nodes are known
		}
		prior, _, _ := clusterSpec(p.ctx, p.state)
		p.resize.KeepSelection(&spec, prior.SelectedNodeIDs, prior.SelectedNodeDomains)
	}
	if addIssues(diags, p.r.data.PlanGrow(&spec, *p.resize, snap, exclude)); !diags.HasError() {
		addIssues(diags, p.r.data.CheckQuota(p.ctx, spec, snap, ""))
	}
}

// warnResize shows the groups an in-place resize keeps, adds and removes;
// a plan that replaces the cluster for another reason resizes nothing.
func (p *planCall) warnResize() {
	if p.replacing {
		p.resize = nil
		return
	}
	if p.resize == nil {
		return
	}
	name := p.state.Name.ValueString()
	p.resp.Diagnostics.AddAttributeWarning(path.Root(p.resizedAttribute), "Virtual cluster resized in place",
		fmt.Sprintf("%q keeps its running groups: the added groups are created and ready before any group is removed.\n%s",
			name, p.resize.Describe(name)))
}

// shapeChanged reports whether any attribute that forces replacement differs.
func shapeChanged(plan, state virtualClusterModel) bool {
	return len(changedAttributes(plan, state, replacingAttributes)) > 0
}

// configEqual reports whether every configurable attribute is unchanged.
func configEqual(plan, state virtualClusterModel) bool {
	return !shapeChanged(plan, state) && len(changedAttributes(plan, state, inPlaceAttributes)) == 0 &&
		len(changedAttributes(plan, state, resizingAttributes)) == 0
}

// keepComputed copies the computed attributes of state into plan.
func keepComputed(plan, state virtualClusterModel) virtualClusterModel {
	plan.ID, plan.Namespace = state.ID, state.Namespace
	plan.PlacementGroups, plan.WorldSize, plan.NodeCount = state.PlacementGroups, state.WorldSize, state.NodeCount
	plan.SortedBundleIndices, plan.Bundles = state.SortedBundleIndices, state.Bundles
	plan.NVLinkDomainPerBundle = state.NVLinkDomainPerBundle
	plan.MasterAddress, plan.MasterPort = state.MasterAddress, state.MasterPort
	plan.OwnerID, plan.SelectedNodeIDs = state.OwnerID, state.SelectedNodeIDs
	plan.TopologyAssignments = state.TopologyAssignments
	// configEqual holds: the timeouts are the same durations, perhaps spelled
	// otherwise ("3m" for "180s"); the prior spelling plans no change.
	plan.Timeouts = state.Timeouts
	return plan
}

// unknownComputed marks what a replacement recomputes as unknown.
func unknownComputed(plan virtualClusterModel) virtualClusterModel {
	plan.PlacementGroups = types.ListUnknown(groupObjectType)
	plan.Bundles = types.ListUnknown(bundleObjectType)
	plan.SortedBundleIndices = types.ListUnknown(types.Int64Type)
	plan.NVLinkDomainPerBundle = types.ListUnknown(types.StringType)
	plan.MasterAddress = types.StringUnknown()
	plan.MasterPort = types.Int64Unknown()
	plan.TopologyAssignments = types.MapUnknown(types.StringType)
	return plan
}

// recordedDrift is the drift refresh recorded, per group that drifted.
func recordedDrift(ctx context.Context, state virtualClusterModel) []session.GroupDrift {
	if state.PlacementGroups.IsNull() || state.PlacementGroups.IsUnknown() {
		return nil
	}
	groups, d := objectsAs[recordedGroup](ctx, state.PlacementGroups)
	if d.HasError() {
		tflog.Warn(ctx, "cannot read recorded placement groups")
		return nil
	}
	var out []session.GroupDrift
	for _, g := range groups {
		if g.Drift != "" {
			out = append(out, session.GroupDrift{Group: g.Name, Drift: g.Drift})
		}
	}
	return out
}

var indexedPath = regexp.MustCompile(`^([a-z_]+)\[(\d+)\]$`)

// issuePath turns "node_resource_constraints[2]" or "topology_labels.topo_rank"
// into an attribute path.
func issuePath(p string) path.Path {
	if m := indexedPath.FindStringSubmatch(p); m != nil {
		i, _ := strconv.Atoi(m[2])
		return path.Root(m[1]).AtListIndex(i)
	}
	if parent, child, ok := strings.Cut(p, "."); ok {
		return path.Root(parent).AtName(child)
	}
	return path.Root(p)
}
