package resources

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// DriverSpec turns the cluster shape into the embedded driver's input.
func DriverSpec(action, namespace string, spec topology.ClusterSpec, ready time.Duration) driver.Spec {
	ds := driver.Spec{
		Action:              action,
		Namespace:           namespace,
		ReadyTimeoutSeconds: int(math.Max(1, math.Ceil(ready.Seconds()))),
		Probe: driver.Probe{
			UseGPUs:       spec.UseGPUs,
			PortRangeLow:  spec.Ports.Low,
			PortRangeHigh: spec.Ports.High,
		},
	}
	for _, g := range spec.Groups() {
		bundles := make([]map[string]float64, len(g.Bundles))
		for i, b := range g.Bundles {
			bundles[i] = b
		}
		ds.Groups = append(ds.Groups, driver.Group{Name: g.Name, Strategy: g.Strategy, Bundles: bundles})
	}
	return ds
}

func progressFields(p driver.Progress) map[string]any {
	fields := map[string]any{"phase": p.Phase}
	for k, v := range p.Raw {
		fields[k] = v
	}
	return fields
}

// flatBundle is one bundle in declaration order with its probe result.
type flatBundle struct {
	group       string
	bundleIndex int
	probe       driver.BundleResult
}

// applyResult fills the computed attributes from a create or inspect result.
func applyResult(m *virtualClusterModel, spec topology.ClusterSpec, res *driver.Result) diag.Diagnostics {
	var diags diag.Diagnostics
	byName := map[string]driver.GroupResult{}
	for _, g := range res.Groups {
		byName[g.Name] = g
	}
	var flat []flatBundle
	groups := make([]attr.Value, 0)
	for _, want := range spec.Groups() {
		got, ok := byName[want.Name]
		if !ok || got.Missing {
			diags.AddError("Placement group missing from the driver's report", fmt.Sprintf("Ray did not report group %q.", want.Name))
			return diags
		}
		for i, b := range got.Bundles {
			flat = append(flat, flatBundle{group: want.Name, bundleIndex: i, probe: b})
		}
		groups = append(groups, groupValue(want, got.ID, got.State, got.Strategy, len(got.Bundles), ""))
	}
	order, d := rankOrder(spec, flat)
	diags.Append(d...)
	if diags.HasError() {
		return diags
	}
	bundles := make([]attr.Value, 0, len(order))
	indices := make([]attr.Value, 0, len(order))
	for rank, gi := range order {
		b := flat[gi]
		gpu := types.Int64Null()
		if b.probe.GPUID != nil {
			gpu = types.Int64Value(int64(*b.probe.GPUID))
		}
		obj, d := types.ObjectValue(bundleObjectType.AttrTypes, map[string]attr.Value{
			"rank": types.Int64Value(int64(rank)), "placement_group": types.StringValue(b.group),
			"bundle_index": types.Int64Value(int64(b.bundleIndex)), "global_index": types.Int64Value(int64(gi)),
			"node_id": types.StringValue(b.probe.NodeID), "node_ip": types.StringValue(b.probe.NodeIP),
			"gpu_id": gpu, "nvlink_domain": types.StringValue(b.probe.NVLinkDomain),
			"topo_rank": types.Int64Value(int64(b.probe.TopoRank)), "port": types.Int64Value(int64(b.probe.Port)),
		})
		diags.Append(d...)
		bundles = append(bundles, obj)
		indices = append(indices, types.Int64Value(int64(gi)))
	}
	domains := make([]attr.Value, len(flat))
	for i, b := range flat {
		domains[i] = types.StringValue(b.probe.NVLinkDomain)
	}
	m.PlacementGroups = mustList(groupObjectType, groups, &diags)
	m.Bundles = mustList(bundleObjectType, bundles, &diags)
	m.SortedBundleIndices = mustList(types.Int64Type, indices, &diags)
	m.NVLinkDomainPerBundle = mustList(types.StringType, domains, &diags)
	m.WorldSize = types.Int64Value(int64(spec.WorldSize()))
	m.NodeCount = types.Int64Value(int64(spec.NodeCount()))
	if len(order) > 0 {
		first := flat[order[0]].probe
		m.MasterAddress = types.StringValue(first.NodeIP)
		m.MasterPort = types.Int64Value(int64(first.Port))
	} else {
		m.MasterAddress = types.StringNull()
		m.MasterPort = types.Int64Null()
	}
	return diags
}

// rankOrder orders bundles as the reference does: topology order for a unified
// GPU group (failing when segment trimming would drop bundles), else natural.
func rankOrder(spec topology.ClusterSpec, flat []flatBundle) ([]int, diag.Diagnostics) {
	var diags diag.Diagnostics
	natural := make([]int, len(flat))
	for i := range natural {
		natural[i] = i
	}
	if !spec.UseUnifiedPG || !spec.UseGPUs {
		return natural, diags
	}
	in := make([]topology.Bundle, len(flat))
	for i, b := range flat {
		gpu := -1
		if b.probe.GPUID != nil {
			gpu = *b.probe.GPUID
		}
		in[i] = topology.Bundle{GPUID: gpu, Domain: b.probe.NVLinkDomain, TopoRank: b.probe.TopoRank, NodeID: b.probe.NodeID}
	}
	var gpus *int
	if spec.SegmentSize != nil {
		gpus = &spec.NumGPUsPerNode
	}
	order, trims, err := topology.SortBundleIndicesByTopology(in, spec.SegmentSize, gpus)
	if err != nil {
		diags.AddError("Cannot order bundles by topology", err.Error())
		return nil, diags
	}
	if len(order) != len(flat) {
		var parts []string
		for _, t := range trims {
			parts = append(parts, fmt.Sprintf("%s: %d of %d nodes usable, %d bundles discarded", t.Domain, t.UsableNodes, t.DomainNodes, t.Discarded))
		}
		diags.AddAttributeError(issuePath("segment_size"), "Incomplete NVLink segments",
			fmt.Sprintf("Topology sort kept %d of %d bundles because some NVLink domains had incomplete segments (%s). "+
				"Make segment_size divide each domain's node count, and pin the nodes to complete segments with "+
				"node_resource_constraints (see data.ray_cluster_topology). The groups were removed.",
				len(order), len(flat), strings.Join(parts, "; ")))
		return nil, diags
	}
	return order, diags
}

func groupValue(g topology.GroupRequest, id, state, strategy string, bundles int, drift string) attr.Value {
	if strategy == "" {
		strategy = g.Strategy
	}
	v, _ := types.ObjectValue(groupObjectType.AttrTypes, map[string]attr.Value{
		"name": types.StringValue(g.Name), "id": types.StringValue(id), "state": types.StringValue(state),
		"strategy": types.StringValue(strategy), "node_index": types.Int64Value(int64(g.NodeIndex)),
		"bundle_count": types.Int64Value(int64(bundles)), "drift": types.StringValue(drift),
	})
	return v
}

func mustList(t attr.Type, elems []attr.Value, diags *diag.Diagnostics) types.List {
	l, d := types.ListValue(t, elems)
	diags.Append(d...)
	return l
}

type recordedGroup struct {
	ID       string `tfsdk:"id"`
	Name     string `tfsdk:"name"`
	State    string `tfsdk:"state"`
	Strategy string `tfsdk:"strategy"`
	Index    int64  `tfsdk:"node_index"`
	Count    int64  `tfsdk:"bundle_count"`
	Drift    string `tfsdk:"drift"`
}

type recordedBundle struct {
	Rank         int64       `tfsdk:"rank"`
	Group        string      `tfsdk:"placement_group"`
	Index        int64       `tfsdk:"bundle_index"`
	GlobalIndex  int64       `tfsdk:"global_index"`
	NodeID       string      `tfsdk:"node_id"`
	NodeIP       string      `tfsdk:"node_ip"`
	GPUID        types.Int64 `tfsdk:"gpu_id"`
	NVLinkDomain string      `tfsdk:"nvlink_domain"`
	TopoRank     int64       `tfsdk:"topo_rank"`
	Port         int64       `tfsdk:"port"`
}

// refreshGroups compares the groups the configuration wants with what Ray
// reports and records each difference in placement_groups[*].drift. It
// returns how many of the groups still exist.
func refreshGroups(ctx context.Context, m *virtualClusterModel, spec topology.ClusterSpec, live []rayclient.PlacementGroup) (int, diag.Diagnostics) {
	var diags diag.Diagnostics
	var groups []recordedGroup
	var bundles []recordedBundle
	diags.Append(m.PlacementGroups.ElementsAs(ctx, &groups, false)...)
	if !m.Bundles.IsNull() && !m.Bundles.IsUnknown() {
		diags.Append(m.Bundles.ElementsAs(ctx, &bundles, false)...)
	}
	recorded := map[string]RecordedGroup{}
	strategies := map[string]string{}
	for _, g := range groups {
		recorded[g.Name] = RecordedGroup{ID: g.ID, BundleNodes: map[int]string{}}
		strategies[g.Name] = g.Strategy
	}
	for _, b := range bundles {
		if rec, ok := recorded[b.Group]; ok {
			rec.BundleNodes[int(b.Index)] = b.NodeID
		}
	}
	present := 0
	values := make([]attr.Value, 0)
	for _, c := range CompareGroups(spec.Groups(), recorded, live) {
		if !c.Found {
			values = append(values, groupValue(c.Want, recorded[c.Want.Name].ID, "MISSING", strategies[c.Want.Name], 0, c.Drift))
			continue
		}
		present++
		values = append(values, groupValue(c.Want, c.Live.PlacementGroupID, c.Live.State, strategies[c.Want.Name], len(c.Live.Bundles), c.Drift))
	}
	m.PlacementGroups = mustList(groupObjectType, values, &diags)
	return present, diags
}
