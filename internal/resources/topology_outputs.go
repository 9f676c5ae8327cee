package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The outputs are built as terraform-plugin-go values and stored with
// State.Raw: at 10,000 nodes going through attr.Value and State.Set's
// reflection cost more than everything else the provider does in a plan.

// nodeField is one attribute of a `nodes` entry.
type nodeField struct {
	name, doc string
	typ       attr.Type
	value     func(n *raystate.Node, t topology.Node, res map[string]float64) tftypes.Value
}

// nodeFields lists the attributes of a `nodes` entry once: the schema, the
// object type and the values all come from it.
var nodeFields = []nodeField{
	{name: "node_id", doc: "Ray node id (hex).", typ: types.StringType,
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value {
			return tfString(n.NodeID)
		}},
	{name: "node_ip", doc: "Node IP address.", typ: types.StringType,
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value {
			return tfString(n.NodeIP)
		}},
	{name: "node_name", doc: "Node name.", typ: types.StringType,
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value {
			return tfString(n.NodeName)
		}},
	{name: "is_head_node", doc: "Whether this is the head node.", typ: types.BoolType,
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value {
			return tftypes.NewValue(tftypes.Bool, n.IsHeadNode)
		}},
	{name: "state", doc: "Node state (`ALIVE`).", typ: types.StringType,
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value { return tfString(n.State) }},
	{name: "cpus", doc: "Logical CPUs (`CPU` resource).", typ: types.Float64Type,
		value: func(_ *raystate.Node, _ topology.Node, res map[string]float64) tftypes.Value {
			return tfNumber(res["CPU"])
		}},
	{name: "gpus", doc: "Logical GPUs (`GPU` resource).", typ: types.Float64Type,
		value: func(_ *raystate.Node, _ topology.Node, res map[string]float64) tftypes.Value {
			return tfNumber(res["GPU"])
		}},
	{name: "nvlink_domain", doc: domainOutputDoc, typ: types.StringType,
		value: func(_ *raystate.Node, t topology.Node, _ map[string]float64) tftypes.Value {
			return tfString(t.Domain)
		}},
	{name: "topo_rank", doc: rankOutputDoc, typ: types.Int64Type,
		value: func(_ *raystate.Node, t topology.Node, _ map[string]float64) tftypes.Value { return tfInt(t.TopoRank) }},
	{name: "resources", doc: "All total resources of the node.",
		typ: types.MapType{ElemType: types.Float64Type},
		value: func(_ *raystate.Node, _ topology.Node, res map[string]float64) tftypes.Value {
			m := make(map[string]tftypes.Value, len(res))
			for k, v := range res {
				m[k] = tfNumber(v)
			}
			return tftypes.NewValue(tfFloatMap, m)
		}},
	{name: "labels", doc: "Node labels.",
		typ: types.MapType{ElemType: types.StringType},
		value: func(n *raystate.Node, _ topology.Node, _ map[string]float64) tftypes.Value {
			m := make(map[string]tftypes.Value, len(n.Labels))
			for k, v := range n.Labels {
				m[k] = tfString(v)
			}
			return tftypes.NewValue(tfStringMap, m)
		}},
}

var (
	tfFloatMap     = tftypes.Map{ElementType: tftypes.Number}
	tfStringMap    = tftypes.Map{ElementType: tftypes.String}
	nodeObjectType = func() types.ObjectType {
		t := map[string]attr.Type{}
		for _, f := range nodeFields {
			t[f.name] = f.typ
		}
		return types.ObjectType{AttrTypes: t}
	}()
	topologyEntryType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"nvlink_domain": types.StringType, "topo_rank": types.Int64Type,
	}}
	constraintType = types.MapType{ElemType: types.Float64Type}

	tfNodeObject    = tfObject(nodeObjectType)
	tfTopologyEntry = tfObject(topologyEntryType)
	tfConstraint    = constraintType.TerraformType(context.Background())
)

// tfObject is the terraform-plugin-go type of a framework object type.
func tfObject(t types.ObjectType) tftypes.Object {
	attrs := make(map[string]tftypes.Type, len(t.AttrTypes))
	for name, at := range t.AttrTypes {
		attrs[name] = at.TerraformType(context.Background())
	}
	return tftypes.Object{AttributeTypes: attrs}
}

func tfString(s string) tftypes.Value  { return tftypes.NewValue(tftypes.String, s) }
func tfNumber(v float64) tftypes.Value { return tftypes.NewValue(tftypes.Number, v) }
func tfInt(v int) tftypes.Value        { return tftypes.NewValue(tftypes.Number, int64(v)) }

func nodeAttributes() map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(nodeFields))
	for _, f := range nodeFields {
		switch t := f.typ.(type) {
		case types.MapType:
			out[f.name] = schema.MapAttribute{Computed: true, ElementType: t.ElemType, MarkdownDescription: f.doc}
		default:
			switch f.typ {
			case types.StringType:
				out[f.name] = schema.StringAttribute{Computed: true, MarkdownDescription: f.doc}
			case types.BoolType:
				out[f.name] = schema.BoolAttribute{Computed: true, MarkdownDescription: f.doc}
			case types.Float64Type:
				out[f.name] = schema.Float64Attribute{Computed: true, MarkdownDescription: f.doc}
			case types.Int64Type:
				out[f.name] = schema.Int64Attribute{Computed: true, MarkdownDescription: f.doc}
			}
		}
	}
	return out
}

// nodeOutputs are the node-derived attributes of the data source.
type nodeOutputs struct {
	nodes, topology      tftypes.Value
	totalGPUs, totalCPUs int64
}

// buildNodeOutputs lists every node in `nodes` only with includeNodes: every
// attribute or none, because null attributes are not cheaper than filled ones
// (the framework inspects each null value against the schema).
func buildNodeOutputs(nodes []raystate.Node, topo []topology.Node, includeNodes bool) nodeOutputs {
	objs := []tftypes.Value{}
	if includeNodes {
		objs = make([]tftypes.Value, 0, len(nodes))
	}
	entries := make(map[string]tftypes.Value, len(nodes))
	var gpus, cpus float64
	order := make([]int, len(nodes)) // only the list has an order to keep
	for i := range order {
		order[i] = i
	}
	if includeNodes {
		order = topology.TopologicalOrder(topo)
	}
	for _, i := range order {
		n, t := &nodes[i], topo[i]
		res := planning.UserResources(n.ResourcesTotal)
		gpus += res["GPU"]
		cpus += res["CPU"]
		if includeNodes {
			vals := make(map[string]tftypes.Value, len(nodeFields))
			for _, f := range nodeFields {
				vals[f.name] = f.value(n, t, res)
			}
			objs = append(objs, tftypes.NewValue(tfNodeObject, vals))
		}
		entries[n.NodeID] = tftypes.NewValue(tfTopologyEntry, map[string]tftypes.Value{
			"nvlink_domain": tfString(t.Domain), "topo_rank": tfInt(t.TopoRank),
		})
	}
	return nodeOutputs{
		nodes:     tftypes.NewValue(tftypes.List{ElementType: tfNodeObject}, objs),
		topology:  tftypes.NewValue(tftypes.Map{ElementType: tfTopologyEntry}, entries),
		totalGPUs: int64(gpus),
		totalCPUs: int64(cpus),
	}
}

// selectionOutputs are selected_node_ids, remaining_node_ids,
// node_resource_constraints, node_label_selectors and message, by attribute
// name. With a label domain source the constraints become label selectors.
func selectionOutputs(plan topology.SegmentPlan, source clusterspec.TopologySource) map[string]tftypes.Value {
	strList := func(ids []string) tftypes.Value {
		vals := make([]tftypes.Value, len(ids))
		for i, id := range ids {
			vals[i] = tfString(id)
		}
		return tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, vals)
	}
	constraints := tftypes.NewValue(tftypes.List{ElementType: tfConstraint}, nil)
	selectors := tftypes.NewValue(tftypes.List{ElementType: tfStringMap}, nil)
	if plan.Constraints != nil && source.DomainLabel != "" {
		domainOf := make(map[string]string, len(plan.Topology))
		for _, n := range plan.Topology {
			domainOf[n.ID] = n.Domain
		}
		vals := make([]tftypes.Value, len(plan.Selected))
		for i, id := range plan.Selected {
			sel, _ := source.DomainSelector(domainOf[id])
			m := make(map[string]tftypes.Value, len(sel))
			for k, v := range sel {
				m[k] = tfString(v)
			}
			vals[i] = tftypes.NewValue(tfStringMap, m)
		}
		selectors = tftypes.NewValue(tftypes.List{ElementType: tfStringMap}, vals)
	} else if plan.Constraints != nil {
		vals := make([]tftypes.Value, len(plan.Constraints))
		for i, c := range plan.Constraints {
			m := make(map[string]tftypes.Value, len(c))
			for k, v := range c {
				m[k] = tfNumber(v)
			}
			vals[i] = tftypes.NewValue(tfConstraint, m)
		}
		constraints = tftypes.NewValue(tftypes.List{ElementType: tfConstraint}, vals)
	}
	return map[string]tftypes.Value{
		"selected_node_ids":         strList(plan.Selected),
		"remaining_node_ids":        strList(plan.Remaining),
		"node_resource_constraints": constraints,
		"node_label_selectors":      selectors,
		"message":                   tfString(plan.Message),
	}
}
