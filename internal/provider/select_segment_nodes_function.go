package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// selectSegmentNodesFunction is provider::ray::select_segment_nodes: the reference's
// select_segment_nodes over a topology map.
type selectSegmentNodesFunction struct{}

var selectionAttrs = map[string]attr.Type{
	"selected":  types.ListType{ElemType: types.StringType},
	"remaining": types.ListType{ElemType: types.StringType},
}

func (selectSegmentNodesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "select_segment_nodes"
}

func (selectSegmentNodesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Partition nodes into complete NVLink segments and the rest.",
		MarkdownDescription: "Greedily selects complete `segment_size`-node segments from each NVLink domain, " +
			"domains in topological order (lowest `topo_rank` first), until `num_nodes` nodes are selected, as " +
			"the reference's `select_segment_nodes` does. Nodes without a domain are never selected. Fails when " +
			"`num_nodes` is not a multiple of `segment_size` or the segments cannot be formed.",
		Parameters: []function.Parameter{
			topologyParam,
			function.Int64Parameter{Name: "segment_size", Description: "Nodes per segment."},
			function.Int64Parameter{Name: "num_nodes", Description: "Nodes to select."},
		},
		Return: function.ObjectReturn{AttributeTypes: selectionAttrs},
	}
}

func (selectSegmentNodesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var topo map[string]topologyEntry
	var size, count int64
	resp.Error = req.Arguments.Get(ctx, &topo, &size, &count)
	if resp.Error != nil {
		return
	}
	selected, remaining, err := topology.SelectSegmentNodes(nodesFromMap(topo), int(size), int(count))
	if err != nil {
		resp.Error = segmentFuncError(err)
		return
	}
	sel, _ := types.ListValueFrom(ctx, types.StringType, nonNilStrings(selected))
	rem, _ := types.ListValueFrom(ctx, types.StringType, nonNilStrings(remaining))
	obj, _ := types.ObjectValue(selectionAttrs, map[string]attr.Value{"selected": sel, "remaining": rem})
	resp.Error = resp.Result.Set(ctx, obj)
}
