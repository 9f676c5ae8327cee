package resources

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

type virtualClusterModel struct {
	ID                       types.String         `tfsdk:"id"`
	Name                     types.String         `tfsdk:"name"`
	BundleCtPerNodeList      types.List           `tfsdk:"bundle_ct_per_node_list"`
	UseGPUs                  types.Bool           `tfsdk:"use_gpus"`
	NumGPUsPerNode           types.Int64          `tfsdk:"num_gpus_per_node"`
	MaxColocatedWorkerGroups types.Int64          `tfsdk:"max_colocated_worker_groups"`
	PlacementGroupStrategy   types.String         `tfsdk:"placement_group_strategy"`
	UseUnifiedPG             types.Bool           `tfsdk:"use_unified_pg"`
	SegmentSize              types.Int64          `tfsdk:"segment_size"`
	NodeResourceConstraints  types.List           `tfsdk:"node_resource_constraints"`
	PortRangeLow             types.Int64          `tfsdk:"port_range_low"`
	PortRangeHigh            types.Int64          `tfsdk:"port_range_high"`
	ReadyTimeout             timetypes.GoDuration `tfsdk:"ready_timeout"`
	Namespace                types.String         `tfsdk:"namespace"`
	PlacementGroups          types.List           `tfsdk:"placement_groups"`
	WorldSize                types.Int64          `tfsdk:"world_size"`
	NodeCount                types.Int64          `tfsdk:"node_count"`
	SortedBundleIndices      types.List           `tfsdk:"sorted_bundle_indices"`
	Bundles                  types.List           `tfsdk:"bundles"`
	NVLinkDomainPerBundle    types.List           `tfsdk:"nvlink_domain_per_bundle"`
	MasterAddress            types.String         `tfsdk:"master_address"`
	MasterPort               types.Int64          `tfsdk:"master_port"`
	OwnerID                  types.String         `tfsdk:"owner_id"`
	SelectNodes              types.Bool           `tfsdk:"select_nodes"`
	ExclusiveNodes           types.Bool           `tfsdk:"exclusive_nodes"`
	ExcludeNodeIDs           types.Set            `tfsdk:"exclude_node_ids"`
	Pinning                  types.String         `tfsdk:"pinning"`
	SelectedNodeIDs          types.List           `tfsdk:"selected_node_ids"`
	NodeLabelSelectors       types.List           `tfsdk:"node_label_selectors"`
	TopologyStrategy         types.Map            `tfsdk:"topology_strategy"`
	TopologyAssignments      types.Map            `tfsdk:"topology_assignments"`
	TopologyLabels           types.Object         `tfsdk:"topology_labels"`
	CapacityCheck            types.String         `tfsdk:"capacity_check"`
	RecoveryTimeout          timetypes.GoDuration `tfsdk:"recovery_timeout"`
	Timeouts                 timeouts.Value       `tfsdk:"timeouts"`
}

// clusterSpec converts the Terraform model into the contract's Spec.
// known is false while any value it needs is unknown (e.g. constraints that
// come from a data source not read yet).
func clusterSpec(ctx context.Context, m virtualClusterModel) (spec clusterspec.Spec, known bool, diags diag.Diagnostics) {
	for _, v := range []interface{ IsUnknown() bool }{m.Name, m.BundleCtPerNodeList, m.UseGPUs, m.NumGPUsPerNode,
		m.MaxColocatedWorkerGroups, m.PlacementGroupStrategy, m.UseUnifiedPG, m.SegmentSize,
		m.NodeResourceConstraints, m.PortRangeLow, m.PortRangeHigh, m.SelectNodes, m.ExclusiveNodes, m.Pinning, m.TopologyLabels,
		m.NodeLabelSelectors, m.TopologyStrategy} {
		if v.IsUnknown() {
			return spec, false, diags
		}
	}
	if spec.BundleCtPerNode, known = bundleCounts(ctx, m.BundleCtPerNodeList, &diags); !known {
		return spec, false, diags
	}
	if !m.NodeResourceConstraints.IsNull() {
		if spec.NodeResourceConstraints, known = nodeMaps[topology.Resources](ctx, m.NodeResourceConstraints, &diags); !known {
			return spec, false, diags
		}
	}
	if !m.NodeLabelSelectors.IsNull() {
		if spec.NodeLabelSelectors, known = nodeMaps[map[string]string](ctx, m.NodeLabelSelectors, &diags); !known {
			return spec, false, diags
		}
	}
	if !m.TopologyStrategy.IsNull() {
		var elems map[string]types.String
		diags.Append(m.TopologyStrategy.ElementsAs(ctx, &elems, false)...)
		spec.TopologyStrategy = make(map[string]string, len(elems))
		for k, v := range elems {
			if v.IsUnknown() || v.IsNull() {
				return spec, false, diags
			}
			spec.TopologyStrategy[k] = v.ValueString()
		}
	}
	// Unset attributes (a configuration before the schema's defaults) keep
	// clusterspec's defaults, the only place they are written.
	def := clusterspec.Defaults()
	spec.Name = m.Name.ValueString()
	spec.UseGPUs = boolOr(m.UseGPUs, def.UseGPUs)
	spec.NumGPUsPerNode = int(int64Or(m.NumGPUsPerNode, int64(def.NumGPUsPerNode)))
	spec.MaxColocatedWorkerGroups = int(int64Or(m.MaxColocatedWorkerGroups, int64(def.MaxColocatedWorkerGroups)))
	spec.Strategy = m.PlacementGroupStrategy.ValueString()
	spec.UseUnifiedPG = boolOr(m.UseUnifiedPG, def.UseUnifiedPG)
	if !m.SegmentSize.IsNull() {
		s := int(m.SegmentSize.ValueInt64())
		spec.SegmentSize = &s
	}
	spec.Ports = topology.PortRange{Low: int(m.PortRangeLow.ValueInt64()), High: int(m.PortRangeHigh.ValueInt64())}
	spec.Namespace = m.Namespace.ValueString()
	spec.ReadyTimeout = readyTimeout(m)
	if !m.ReadyTimeout.IsNull() && !m.ReadyTimeout.IsUnknown() {
		spec.ReadyTimeoutText = m.ReadyTimeout.ValueString()
	}
	if !m.ExcludeNodeIDs.IsNull() && !m.ExcludeNodeIDs.IsUnknown() {
		diags.Append(m.ExcludeNodeIDs.ElementsAs(ctx, &spec.ExcludeNodeIDs, false)...)
		slices.Sort(spec.ExcludeNodeIDs)
	}
	spec.SelectNodes = boolOr(m.SelectNodes, def.SelectNodes)
	spec.ExclusiveNodes = boolOr(m.ExclusiveNodes, false)
	spec.Pinning = m.Pinning.ValueString()
	labels, d := TopologyLabelsFromObject(ctx, m.TopologyLabels)
	diags.Append(d...)
	spec.Topology = clusterspec.SourceOrDefault(labels)
	if !m.SelectedNodeIDs.IsNull() && !m.SelectedNodeIDs.IsUnknown() {
		diags.Append(m.SelectedNodeIDs.ElementsAs(ctx, &spec.SelectedNodeIDs, false)...)
		spec.SelectedNodeDomains = domainsFromBundles(ctx, m, spec.BundleCtPerNode)
	}
	return spec.WithDefaults(), !diags.HasError(), diags
}

// bundleCounts reads bundle_ct_per_node_list; known is false at its first
// null or unknown count (nulls are reported by the attribute's validator),
// with the counts before it.
func bundleCounts(ctx context.Context, list types.List, diags *diag.Diagnostics) (counts []int, known bool) {
	var elems []types.Int64
	diags.Append(list.ElementsAs(ctx, &elems, false)...)
	for _, c := range elems {
		if c.IsNull() || c.IsUnknown() {
			return counts, false
		}
		counts = append(counts, int(c.ValueInt64()))
	}
	return counts, true
}

// nodeMaps reads a list of one map per logical node; known is false at its
// first null or unknown map, with the maps before it.
func nodeMaps[M ~map[string]V, V any](ctx context.Context, list types.List, diags *diag.Diagnostics) (out []M, known bool) {
	var raw []types.Map
	diags.Append(list.ElementsAs(ctx, &raw, false)...)
	out = make([]M, len(raw))
	for i, mv := range raw {
		if mv.IsUnknown() || mv.IsNull() {
			return out, false
		}
		elems := M{}
		diags.Append(mv.ElementsAs(ctx, &elems, false)...)
		out[i] = elems
	}
	return out, true
}

// domainsFromBundles reads each logical node's NVLink domain from the
// bundles in state (the domain its first bundle was placed in): what
// domain pinning pinned it to. Nil while the bundles are not known.
func domainsFromBundles(ctx context.Context, m virtualClusterModel, counts []int) []string {
	if m.Bundles.IsNull() || m.Bundles.IsUnknown() {
		return nil
	}
	bundles, d := objectsAs[recordedBundle](ctx, m.Bundles)
	if d.HasError() {
		return nil
	}
	byGlobal := map[int64]string{}
	for _, b := range bundles {
		byGlobal[b.GlobalIndex] = b.NVLinkDomain
	}
	out := make([]string, len(counts))
	at := int64(0)
	for i, c := range counts {
		out[i] = byGlobal[at]
		at += int64(c)
	}
	return out
}

// excludedNodes reads exclude_node_ids; known is false while it is unknown.
func excludedNodes(ctx context.Context, m virtualClusterModel) (ids map[string]bool, known bool) {
	ids = map[string]bool{}
	if m.ExcludeNodeIDs.IsUnknown() {
		return ids, false
	}
	var list []types.String
	if m.ExcludeNodeIDs.ElementsAs(ctx, &list, false).HasError() {
		return ids, false
	}
	for _, v := range list {
		if v.IsUnknown() {
			return ids, false
		}
		ids[v.ValueString()] = true
	}
	return ids, true
}

// setConfigFromSpec writes the configurable attributes of spec into the
// model (import, where Ray's groups are the only source).
func setConfigFromSpec(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, diags *diag.Diagnostics) {
	spec = spec.WithDefaults()
	counts := make([]int64, len(spec.BundleCtPerNode))
	for i, c := range spec.BundleCtPerNode {
		counts[i] = int64(c)
	}
	var d diag.Diagnostics
	m.BundleCtPerNodeList, d = types.ListValueFrom(ctx, types.Int64Type, counts)
	diags.Append(d...)
	m.UseGPUs = types.BoolValue(spec.UseGPUs)
	m.NumGPUsPerNode = types.Int64Value(int64(spec.NumGPUsPerNode))
	m.MaxColocatedWorkerGroups = types.Int64Value(int64(spec.MaxColocatedWorkerGroups))
	m.UseUnifiedPG = types.BoolValue(spec.UseUnifiedPG)
	m.PlacementGroupStrategy = types.StringValue(spec.Strategy)
	m.PortRangeLow = types.Int64Value(int64(spec.Ports.Low))
	m.PortRangeHigh = types.Int64Value(int64(spec.Ports.High))
	m.ReadyTimeout = goDuration(clusterspec.DefaultReadyTimeoutText)
	if spec.ReadyTimeoutText != "" {
		m.ReadyTimeout = goDuration(spec.ReadyTimeoutText)
	}
	m.SelectNodes = types.BoolValue(spec.SelectNodes)
	m.ExclusiveNodes = types.BoolValue(spec.ExclusiveNodes)
	m.Pinning = types.StringValue(spec.Pinning)
	m.ExcludeNodeIDs = types.SetNull(types.StringType)
	if spec.ExcludeNodeIDs != nil {
		m.ExcludeNodeIDs, d = types.SetValueFrom(ctx, types.StringType, spec.ExcludeNodeIDs)
		diags.Append(d...)
	}
	m.SelectedNodeIDs = types.ListNull(types.StringType)
	if spec.SelectedNodeIDs != nil {
		m.SelectedNodeIDs, d = types.ListValueFrom(ctx, types.StringType, spec.SelectedNodeIDs)
		diags.Append(d...)
	}
	m.NodeLabelSelectors = types.ListNull(selectorType)
	if spec.NodeLabelSelectors != nil {
		m.NodeLabelSelectors, d = types.ListValueFrom(ctx, selectorType, spec.NodeLabelSelectors)
		diags.Append(d...)
	}
	m.TopologyStrategy = types.MapNull(types.StringType)
	if spec.TopologyStrategy != nil {
		m.TopologyStrategy, d = types.MapValueFrom(ctx, types.StringType, spec.TopologyStrategy)
		diags.Append(d...)
	}
	m.TopologyAssignments = types.MapNull(types.StringType)
	m.SegmentSize = types.Int64Null()
	if spec.SegmentSize != nil {
		m.SegmentSize = types.Int64Value(int64(*spec.SegmentSize))
	}
	if spec.NodeResourceConstraints == nil {
		m.NodeResourceConstraints = types.ListNull(constraintType)
	} else {
		m.NodeResourceConstraints, d = types.ListValueFrom(ctx, constraintType, spec.NodeResourceConstraints)
		diags.Append(d...)
	}
}

func readyTimeout(m virtualClusterModel) time.Duration {
	d, _ := time.ParseDuration(m.ReadyTimeout.ValueString())
	return clusterspec.Spec{ReadyTimeout: d}.WithDefaults().ReadyTimeout
}

// goDuration is a duration attribute's value as written (a record in Ray's
// KV keeps ready_timeout as the configuration spelled it).
func goDuration(text string) timetypes.GoDuration {
	return timetypes.GoDuration{StringValue: types.StringValue(text)}
}

func boolOr(v types.Bool, def bool) bool {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueBool()
}

func int64Or(v types.Int64, def int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueInt64()
}

// sameModel reports whether two models hold equal values in every
// attribute: then writing one where the framework already holds the other
// (State.Set, Plan.Set) would change nothing, and is skipped. Such a write
// converts the whole object, bundles and groups included, and walks it once
// per attribute, which is much of the per-cluster CPU of a plan that has
// nothing to change.
func sameModel(a, b virtualClusterModel) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		x, okX := va.Field(i).Interface().(attr.Value)
		y, okY := vb.Field(i).Interface().(attr.Value)
		if !okX || !okY || !x.Equal(y) {
			return false
		}
	}
	return true
}

// changedAttributes lists which of the named attributes differ between two
// models (by their tfsdk names). Durations differ only when they are not the
// same length of time ("180s" and "3m" do not).
func changedAttributes(a, b virtualClusterModel, names []string) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	var out []string
	for _, name := range names {
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).Tag.Get("tfsdk") != name {
				continue
			}
			x, okX := va.Field(i).Interface().(attr.Value)
			y, okY := vb.Field(i).Interface().(attr.Value)
			if !okX || !okY || !sameAttribute(x, y) {
				out = append(out, name)
			}
		}
	}
	return out
}

// sameAttribute compares two values of one attribute of the model: a
// duration, and each duration of the timeouts block, as a length of time;
// anything else as written.
func sameAttribute(x, y attr.Value) bool {
	if x.Equal(y) {
		return true
	}
	switch a := x.(type) {
	case timetypes.GoDuration:
		b, ok := y.(timetypes.GoDuration)
		return ok && sameDuration(a, b)
	case timeouts.Value:
		b, ok := y.(timeouts.Value)
		return ok && sameTimeouts(a, b)
	}
	return false
}

// sameTimeouts reports whether two known timeouts blocks set the same
// operations to the same lengths of time.
func sameTimeouts(a, b timeouts.Value) bool {
	if a.IsNull() || a.IsUnknown() || b.IsNull() || b.IsUnknown() {
		return false
	}
	x, y := a.Attributes(), b.Attributes()
	if len(x) != len(y) {
		return false
	}
	for k, vx := range x {
		sx, okX := vx.(types.String)
		sy, okY := y[k].(types.String)
		if !okX || !okY || !sameDuration(timetypes.GoDuration{StringValue: sx}, timetypes.GoDuration{StringValue: sy}) {
			return false
		}
	}
	return true
}
