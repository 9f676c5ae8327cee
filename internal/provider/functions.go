package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// functions lists the provider-defined functions: the pure topology maths of
// the reference, usable at plan time without a cluster.
func functions() []func() function.Function {
	return []func() function.Function{
		func() function.Function { return selectSegmentNodesFunction{} },
		func() function.Function { return prepareSegmentTopologyFunction{} },
		func() function.Function { return sortBundlesFunction{} },
		func() function.Function { return portRangesFunction{} },
		func() function.Function { return vllmEnginePortRangeFunction{} },
	}
}

var (
	topologyEntryAttrs = map[string]attr.Type{"nvlink_domain": types.StringType, "topo_rank": types.Int64Type}
	topologyParam      = function.MapParameter{
		Name:        "topology",
		ElementType: types.ObjectType{AttrTypes: topologyEntryAttrs},
		Description: "Node id to {nvlink_domain, topo_rank}, e.g. data.ray_cluster_topology.<x>.topology.",
	}
)

type topologyEntry struct {
	Domain   string `tfsdk:"nvlink_domain"`
	TopoRank int64  `tfsdk:"topo_rank"`
}

// nodesFromMap orders the map's nodes by node id, as Terraform orders map keys.
func nodesFromMap(m map[string]topologyEntry) []topology.Node {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]topology.Node, len(ids))
	for i, id := range ids {
		out[i] = topology.Node{ID: id, Domain: m[id].Domain, TopoRank: int(m[id].TopoRank)}
	}
	return out
}

// nullableNote is the functions' word on null arguments, for their descriptions.
const nullableNote = " Pass `null` to leave an optional argument unset; it works on Terraform (checked on 1.11.4) " +
	"and OpenTofu (checked on 1.10.6, which sends null arguments unencoded: the provider's server decodes them). " +
	"0 does not mean unset."

// optionalCount maps a nullable count argument (at position arg) to a
// pointer: null is unset, and a set value must be at least 1.
func optionalCount(v types.Int64, arg int64, name string) (*int, *function.FuncError) {
	if v.IsNull() {
		return nil, nil
	}
	if v.ValueInt64() < 1 {
		return nil, function.NewArgumentFuncError(arg, fmt.Sprintf("%s must be at least 1, or null to leave it unset; got %d", name, v.ValueInt64()))
	}
	i := int(v.ValueInt64())
	return &i, nil
}

// select_segment_nodes

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

// prepare_segment_topology

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

// sort_bundles

type sortBundlesFunction struct{}

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

// segmentFuncError blames the topology for missing segments and num_nodes
// (argument 2) for a bad request.
func segmentFuncError(err error) *function.FuncError {
	if errors.Is(err, topology.ErrResourceInsufficient) {
		return function.NewArgumentFuncError(0, err.Error())
	}
	return function.NewArgumentFuncError(2, err.Error())
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
