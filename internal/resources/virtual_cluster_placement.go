package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// applyResult fills the computed attributes from a create or inspect result.
func applyResult(m *virtualClusterModel, spec clusterspec.Spec, res *contract.Result) diag.Diagnostics {
	var diags diag.Diagnostics
	p, issues := contract.NewPlacement(spec, res)
	addIssues(&diags, issues)
	if diags.HasError() {
		return diags
	}
	groups := make([]attr.Value, 0, len(p.Groups))
	for _, g := range p.Groups {
		groups = append(groups, groupValue(g.Want, g.ID, g.State, g.Strategy, g.BundleCount, ""))
	}
	bundles := make([]attr.Value, 0, len(p.Bundles))
	for _, b := range p.Bundles {
		bundles = append(bundles, bundleValue(b, &diags))
	}
	var d diag.Diagnostics
	m.PlacementGroups = mustList(groupObjectType, groups, &diags)
	m.Bundles = mustList(bundleObjectType, bundles, &diags)
	m.SortedBundleIndices, d = types.ListValueFrom(context.Background(), types.Int64Type, p.SortedBundleIndices())
	diags.Append(d...)
	m.NVLinkDomainPerBundle, d = types.ListValueFrom(context.Background(), types.StringType, p.DomainPerBundle)
	diags.Append(d...)
	m.WorldSize = types.Int64Value(int64(spec.WorldSize()))
	m.NodeCount = types.Int64Value(int64(spec.NodeCount()))
	if len(p.Bundles) > 0 {
		m.MasterAddress = types.StringValue(p.MasterAddress)
		m.MasterPort = types.Int64Value(int64(p.MasterPort))
	} else {
		m.MasterAddress = types.StringNull()
		m.MasterPort = types.Int64Null()
	}
	return diags
}

// bundleValue is one element of the bundles attribute.
func bundleValue(b record.PlacedBundle, diags *diag.Diagnostics) attr.Value {
	gpu := types.Int64Null()
	if b.GPUID != nil {
		gpu = types.Int64Value(int64(*b.GPUID))
	}
	obj, d := types.ObjectValue(bundleObjectType.AttrTypes, map[string]attr.Value{
		"rank": types.Int64Value(int64(b.Rank)), "placement_group": types.StringValue(b.Group),
		"bundle_index": types.Int64Value(int64(b.BundleIndex)), "global_index": types.Int64Value(int64(b.GlobalIndex)),
		"node_id": types.StringValue(b.NodeID), "node_ip": types.StringValue(b.NodeIP),
		"gpu_id": gpu, "nvlink_domain": types.StringValue(b.NVLinkDomain),
		"topo_rank": types.Int64Value(int64(b.TopoRank)), "port": types.Int64Value(int64(b.Port)),
	})
	diags.Append(d...)
	return obj
}

func groupValue(g clusterspec.GroupRequest, id, state, strategy string, bundles int, drift string) attr.Value {
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
func refreshGroups(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, live []raystate.PlacementGroup) (int, diag.Diagnostics) {
	groups, diags := objectsAs[recordedGroup](ctx, m.PlacementGroups)
	var bundles []recordedBundle
	if !m.Bundles.IsNull() && !m.Bundles.IsUnknown() {
		var d diag.Diagnostics
		bundles, d = objectsAs[recordedBundle](ctx, m.Bundles)
		diags.Append(d...)
	}
	recorded := map[string]drift.RecordedGroup{}
	strategies := map[string]string{}
	for _, g := range groups {
		recorded[g.Name] = drift.RecordedGroup{ID: g.ID, BundleNodes: map[int]string{}}
		strategies[g.Name] = g.Strategy
	}
	for _, b := range bundles {
		if rec, ok := recorded[b.Group]; ok {
			rec.BundleNodes[int(b.Index)] = b.NodeID
		}
	}
	present := 0
	values := make([]attr.Value, 0)
	for _, c := range drift.CompareLive(spec, recorded, live) {
		if !c.Found {
			values = append(values, groupValue(c.Want, recorded[c.Want.Name].ID, contract.StateMissing, strategies[c.Want.Name], 0, c.Drift))
			continue
		}
		present++
		values = append(values, groupValue(c.Want, c.Live.PlacementGroupID, c.Live.State, strategies[c.Want.Name], len(c.Live.Bundles), c.Drift))
	}
	m.PlacementGroups = mustList(groupObjectType, values, &diags)
	m.TopologyAssignments = topologyAssignments(spec, live, recorded[clusterspec.UnifiedGroupName(spec.Name)].ID)
	return present, diags
}
