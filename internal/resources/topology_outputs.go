package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
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

func setNodeOutputs(ctx context.Context, m *clusterTopologyModel, nodes []rayclient.Node, topo []topology.Node) diag.Diagnostics {
	var diags diag.Diagnostics
	objs := make([]attr.Value, 0, len(nodes))
	entries := map[string]attr.Value{}
	var gpus, cpus float64
	for _, i := range topology.TopologicalOrder(topo) {
		n, t := nodes[i], topo[i]
		res := vcluster.UserResources(n.ResourcesTotal)
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
