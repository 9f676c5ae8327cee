package provider

import (
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

var portRangeAttrs = map[string]attr.Type{"low": types.Int64Type, "high": types.Int64Type, "description": types.StringType}
