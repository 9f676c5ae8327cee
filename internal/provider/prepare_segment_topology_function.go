package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// prepareSegmentTopologyFunction is provider::ray::prepare_segment_topology: the reference's
// prepare_segment_topology (selected nodes and their domain constraints).
type prepareSegmentTopologyFunction struct{}

var preparedAttrs = map[string]attr.Type{
	"node_resource_constraints": types.ListType{ElemType: types.MapType{ElemType: types.Float64Type}},
	"selected_node_ids":         types.ListType{ElemType: types.StringType},
	"remaining_node_ids":        types.ListType{ElemType: types.StringType},
	"message":                   types.StringType,
}

func (prepareSegmentTopologyFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "prepare_segment_topology"
}

func (prepareSegmentTopologyFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Per-node NVLink constraints for a topology-aware virtual cluster.",
		MarkdownDescription: "The reference's `prepare_segment_topology`: with a `segment_size`, selects nodes like " +
			"`select_segment_nodes` and returns one `{<domain> = 0.001}` constraint per selected node for " +
			"`ray_virtual_cluster.node_resource_constraints`. A null `segment_size` (the reference's None) returns null constraints and " +
			"no nodes; a topology without NVLink information returns null constraints and every node as remaining." + nullableNote,
		Parameters: []function.Parameter{
			topologyParam,
			function.Int64Parameter{Name: "segment_size", AllowNullValue: true, Description: "Nodes per segment; null disables segment logic."},
			function.Int64Parameter{Name: "num_nodes", Description: "Nodes to select."},
		},
		Return: function.ObjectReturn{AttributeTypes: preparedAttrs},
	}
}

func (prepareSegmentTopologyFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var topo map[string]topologyEntry
	var size types.Int64
	var count int64
	resp.Error = req.Arguments.Get(ctx, &topo, &size, &count)
	if resp.Error != nil {
		return
	}
	segmentSize, argErr := optionalCount(size, 1, "segment_size")
	if argErr != nil {
		resp.Error = argErr
		return
	}
	plan, err := topology.PrepareSegmentTopology(segmentSize, int(count), nodesFromMap(topo), topology.DefaultRole)
	if err != nil {
		resp.Error = segmentFuncError(err)
		return
	}
	constraintType := types.MapType{ElemType: types.Float64Type}
	constraints := types.ListNull(constraintType)
	if plan.Constraints != nil {
		constraints, _ = types.ListValueFrom(ctx, constraintType, plan.Constraints)
	}
	sel, _ := types.ListValueFrom(ctx, types.StringType, nonNilStrings(plan.Selected))
	rem, _ := types.ListValueFrom(ctx, types.StringType, nonNilStrings(plan.Remaining))
	obj, _ := types.ObjectValue(preparedAttrs, map[string]attr.Value{
		"node_resource_constraints": constraints, "selected_node_ids": sel, "remaining_node_ids": rem,
		"message": types.StringValue(plan.Message),
	})
	resp.Error = resp.Result.Set(ctx, obj)
}
