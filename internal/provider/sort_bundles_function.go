package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// sortBundlesFunction is provider::ray::sort_bundles: bundle indices in the
// reference's topology order.
type sortBundlesFunction struct{}

// bundleArg is one element of the bundles argument.
type bundleArg struct {
	GPUID    int64  `tfsdk:"gpu_id"`
	Domain   string `tfsdk:"nvlink_domain"`
	TopoRank int64  `tfsdk:"topo_rank"`
	NodeID   string `tfsdk:"node_id"`
}

func (sortBundlesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "sort_bundles"
}

func (sortBundlesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Topology-aware rank order of bundle indices.",
		MarkdownDescription: "The reference's `_sort_bundle_indices_by_topology`: with topology information, orders " +
			"bundles by `(domain_min_topo_rank, topo_rank, gpu_id)`; without, by `(node_id, gpu_id)`. With a " +
			"`segment_size` (which needs `gpus_per_node`), bundles of domains that cannot form complete segments " +
			"are dropped, so the result may be shorter than the input." + nullableNote,
		Parameters: []function.Parameter{
			function.ListParameter{
				Name: "bundles",
				ElementType: types.ObjectType{AttrTypes: map[string]attr.Type{
					"gpu_id": types.Int64Type, "nvlink_domain": types.StringType,
					"topo_rank": types.Int64Type, "node_id": types.StringType,
				}},
				Description: "One {gpu_id, nvlink_domain, topo_rank, node_id} per bundle, in bundle-index order.",
			},
			function.Int64Parameter{Name: "segment_size", AllowNullValue: true, Description: "Nodes per segment; null disables segment logic."},
			function.Int64Parameter{Name: "gpus_per_node", AllowNullValue: true, Description: "GPUs per node; required with segment_size, else null."},
		},
		Return: function.ListReturn{ElementType: types.Int64Type},
	}
}

func (sortBundlesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var args []bundleArg
	var size, gpus types.Int64
	resp.Error = req.Arguments.Get(ctx, &args, &size, &gpus)
	if resp.Error != nil {
		return
	}
	bundles := make([]topology.Bundle, len(args))
	for i, a := range args {
		bundles[i] = topology.Bundle{GPUID: int(a.GPUID), Domain: a.Domain, TopoRank: int(a.TopoRank), NodeID: a.NodeID}
	}
	segmentSize, argErr := optionalCount(size, 1, "segment_size")
	if argErr != nil {
		resp.Error = argErr
		return
	}
	gpusPerNode, argErr := optionalCount(gpus, 2, "gpus_per_node")
	if argErr != nil {
		resp.Error = argErr
		return
	}
	if segmentSize != nil && gpusPerNode == nil {
		resp.Error = function.NewArgumentFuncError(2, "gpus_per_node is required when segment_size is set")
		return
	}
	order, _, err := topology.SortBundleIndicesByTopology(bundles, segmentSize, gpusPerNode)
	if err != nil {
		resp.Error = function.NewFuncError(err.Error())
		return
	}
	out := make([]int64, len(order))
	for i, v := range order {
		out[i] = int64(v)
	}
	resp.Error = resp.Result.Set(ctx, out)
}
