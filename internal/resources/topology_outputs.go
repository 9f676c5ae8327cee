package resources

import (
	"context"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

var (
	nodeObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"node_id": types.StringType, "node_ip": types.StringType, "node_name": types.StringType,
		"is_head_node": types.BoolType, "state": types.StringType, "cpus": types.Float64Type,
		"gpus": types.Float64Type, "nvlink_domain": types.StringType, "topo_rank": types.Int64Type,
		"resources": types.MapType{ElemType: types.Float64Type}, "labels": types.MapType{ElemType: types.StringType},
	}}
	topologyEntryType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"nvlink_domain": types.StringType, "topo_rank": types.Int64Type,
	}}
	constraintType = types.MapType{ElemType: types.Float64Type}
)

func nodeAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"node_id":       schema.StringAttribute{Computed: true, MarkdownDescription: "Ray node id (hex)."},
		"node_ip":       schema.StringAttribute{Computed: true, MarkdownDescription: "Node IP address."},
		"node_name":     schema.StringAttribute{Computed: true, MarkdownDescription: "Node name."},
		"is_head_node":  schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether this is the head node."},
		"state":         schema.StringAttribute{Computed: true, MarkdownDescription: "Node state (`ALIVE`)."},
		"cpus":          schema.Float64Attribute{Computed: true, MarkdownDescription: "Logical CPUs (`CPU` resource)."},
		"gpus":          schema.Float64Attribute{Computed: true, MarkdownDescription: "Logical GPUs (`GPU` resource)."},
		"nvlink_domain": schema.StringAttribute{Computed: true, MarkdownDescription: "NVLink domain resource key, or `unknown`."},
		"topo_rank":     schema.Int64Attribute{Computed: true, MarkdownDescription: "Topological rank, or `-1` when absent."},
		"resources":     schema.MapAttribute{Computed: true, ElementType: types.Float64Type, MarkdownDescription: "All total resources of the node."},
		"labels":        schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Node labels."},
	}
}

// topologicalOrder sorts node indices by (domain's lowest topo_rank, topo_rank, node id).
func topologicalOrder(topo []topology.Node) []int {
	domainMin := map[string]int{}
	for _, n := range topo {
		if m, ok := domainMin[n.Domain]; !ok || n.TopoRank < m {
			domainMin[n.Domain] = n.TopoRank
		}
	}
	idx := make([]int, len(topo))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := topo[idx[a]], topo[idx[b]]
		if domainMin[x.Domain] != domainMin[y.Domain] {
			return domainMin[x.Domain] < domainMin[y.Domain]
		}
		if x.TopoRank != y.TopoRank {
			return x.TopoRank < y.TopoRank
		}
		return x.ID < y.ID
	})
	return idx
}

// userResources drops the per-placement-group resources Ray adds to nodes
// (e.g. CPU_group_<pg id>), which are not the node's own capacity.
func userResources(res map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(res))
	for k, v := range res {
		if !strings.Contains(k, "_group_") {
			out[k] = v
		}
	}
	return out
}

func setNodeOutputs(ctx context.Context, m *clusterTopologyModel, nodes []rayclient.Node, topo []topology.Node) diag.Diagnostics {
	var diags diag.Diagnostics
	objs := make([]attr.Value, 0, len(nodes))
	entries := map[string]attr.Value{}
	var gpus, cpus float64
	for _, i := range topologicalOrder(topo) {
		n, t := nodes[i], topo[i]
		res := userResources(n.ResourcesTotal)
		gpus += res["GPU"]
		cpus += res["CPU"]
		resVal, d := types.MapValueFrom(ctx, types.Float64Type, res)
		diags.Append(d...)
		labels := n.Labels
		if labels == nil {
			labels = map[string]string{}
		}
		labelVal, d := types.MapValueFrom(ctx, types.StringType, labels)
		diags.Append(d...)
		obj, d := types.ObjectValue(nodeObjectType.AttrTypes, map[string]attr.Value{
			"node_id": types.StringValue(n.NodeID), "node_ip": types.StringValue(n.NodeIP),
			"node_name": types.StringValue(n.NodeName), "is_head_node": types.BoolValue(n.IsHeadNode),
			"state": types.StringValue(n.State), "cpus": types.Float64Value(res["CPU"]),
			"gpus": types.Float64Value(res["GPU"]), "nvlink_domain": types.StringValue(t.Domain),
			"topo_rank": types.Int64Value(int64(t.TopoRank)), "resources": resVal, "labels": labelVal,
		})
		diags.Append(d...)
		objs = append(objs, obj)
		entry, d := types.ObjectValue(topologyEntryType.AttrTypes, map[string]attr.Value{
			"nvlink_domain": types.StringValue(t.Domain), "topo_rank": types.Int64Value(int64(t.TopoRank)),
		})
		diags.Append(d...)
		entries[n.NodeID] = entry
	}
	var d diag.Diagnostics
	m.Nodes, d = types.ListValue(nodeObjectType, objs)
	diags.Append(d...)
	m.Topology, d = types.MapValue(topologyEntryType, entries)
	diags.Append(d...)
	m.TotalGPUs = types.Int64Value(int64(gpus))
	m.TotalCPUs = types.Int64Value(int64(cpus))
	return diags
}

func setSelectionOutputs(ctx context.Context, m *clusterTopologyModel, plan topology.SegmentPlan) diag.Diagnostics {
	var diags, d diag.Diagnostics
	m.SelectedNodeIDs, d = types.ListValueFrom(ctx, types.StringType, nonNil(plan.Selected))
	diags.Append(d...)
	m.RemainingNodeIDs, d = types.ListValueFrom(ctx, types.StringType, nonNil(plan.Remaining))
	diags.Append(d...)
	if plan.Constraints == nil {
		m.NodeResourceConstraints = types.ListNull(constraintType)
	} else {
		m.NodeResourceConstraints, d = types.ListValueFrom(ctx, constraintType, plan.Constraints)
		diags.Append(d...)
	}
	m.Message = types.StringValue(plan.Message)
	return diags
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
