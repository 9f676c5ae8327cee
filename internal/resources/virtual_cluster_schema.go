package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/validators"
)

// replacingAttributes are the configurable attributes that change the
// placement groups themselves: a change replaces the cluster. The schema's
// RequiresReplace modifiers are derived from this list.
var replacingAttributes = []string{
	"name", "use_gpus", "max_colocated_worker_groups", "placement_group_strategy",
	"use_unified_pg", "select_nodes", clusterspec.AttrExclusiveNodes, "pinning", clusterspec.AttrTopologyLabels,
	clusterspec.AttrTopologyStrategy,
}

// resizingAttributes describe the logical nodes: a per-node cluster whose
// nodes are appended or dropped is resized in place (session.PlanResize),
// any other change replaces it (resizeOrReplace).
var resizingAttributes = []string{
	clusterspec.AttrBundleCtPerNodeList, clusterspec.AttrNodeResourceConstraints, clusterspec.AttrNodeLabelSelectors,
}

// inPlaceAttributes are the configurable attributes an update applies by
// re-probing the existing groups.
// exclude_node_ids only matters at create; ModifyPlan replaces the cluster
// when it comes to exclude a node the cluster holds.
var inPlaceAttributes = []string{
	"num_gpus_per_node", "segment_size", "port_range_low", "port_range_high", "ready_timeout", "timeouts",
	"exclude_node_ids", clusterspec.AttrCapacityCheck, clusterspec.AttrRecoveryTimeout,
}

var (
	groupObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"name": types.StringType, "id": types.StringType, "state": types.StringType,
		"strategy": types.StringType, "node_index": types.Int64Type, "bundle_count": types.Int64Type,
		"drift": types.StringType,
	}}
	bundleObjectType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"rank": types.Int64Type, "placement_group": types.StringType, "bundle_index": types.Int64Type,
		"global_index": types.Int64Type, "node_id": types.StringType, "node_ip": types.StringType,
		"gpu_id": types.Int64Type, "nvlink_domain": types.StringType, "topo_rank": types.Int64Type,
		"port": types.Int64Type,
	}}
)

// addedAttributes came after the first release: states written before hold
// null for them, which means their default and must not replace the cluster.
var addedAttributes = map[string]bool{"select_nodes": true, "pinning": true, clusterspec.AttrExclusiveNodes: true}

// requiresReplaceDescription is the framework's RequiresReplace description.
const requiresReplaceDescription = "If the value of this attribute changes, Terraform will destroy and recreate the resource."

// requireReplace appends a RequiresReplace modifier to each named attribute.
func requireReplace(attrs map[string]schema.Attribute, names []string) {
	for _, name := range names {
		switch a := attrs[name].(type) {
		case schema.StringAttribute:
			m := stringplanmodifier.RequiresReplace()
			if addedAttributes[name] {
				m = stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = !req.StateValue.IsNull()
				}, requiresReplaceDescription, requiresReplaceDescription)
			}
			a.PlanModifiers = append(a.PlanModifiers, m)
			attrs[name] = a
		case schema.BoolAttribute:
			m := boolplanmodifier.RequiresReplace()
			if addedAttributes[name] {
				m = boolplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.BoolRequest, resp *boolplanmodifier.RequiresReplaceIfFuncResponse) {
					resp.RequiresReplace = !req.StateValue.IsNull()
				}, requiresReplaceDescription, requiresReplaceDescription)
			}
			a.PlanModifiers = append(a.PlanModifiers, m)
			attrs[name] = a
		case schema.Int64Attribute:
			a.PlanModifiers = append(a.PlanModifiers, int64planmodifier.RequiresReplace())
			attrs[name] = a
		case schema.ListAttribute:
			a.PlanModifiers = append(a.PlanModifiers, listplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.SetAttribute:
			a.PlanModifiers = append(a.PlanModifiers, setplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.MapAttribute:
			a.PlanModifiers = append(a.PlanModifiers, mapplanmodifier.RequiresReplace())
			attrs[name] = a
		case schema.SingleNestedAttribute:
			a.PlanModifiers = append(a.PlanModifiers, objectplanmodifier.RequiresReplace())
			attrs[name] = a
		default:
			panic(fmt.Sprintf("requireReplace: unsupported attribute %q (%T)", name, a))
		}
	}
}

func (r *virtualClusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A topology-aware Ray **virtual cluster**: the detached, named placement groups of " +
			"NeMo-RL's `RayVirtualCluster`, one per logical node (`<name>-node<i>`, strategy `PACK`) or one " +
			"unified group (`<name>-unified`, strategy `placement_group_strategy`). Apply creates them through a " +
			"Ray job that waits until they are placed and probes every bundle's node, GPU id, NVLink domain and a " +
			"free port; refresh compares them with what Ray's state API reports, so groups removed or changed " +
			"outside Terraform show up in the plan. Shape changes replace the cluster.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The cluster name (also the import id).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name prefix of the placement groups; unique within the provider's Ray namespace. " +
					"Letters, digits, `.`, `_` and `-`, at most 100 characters.",
				Required: true,
			},
			"bundle_ct_per_node_list": schema.ListAttribute{
				MarkdownDescription: "Bundles per logical node, e.g. `[2, 2]` for two nodes with two bundles (workers) " +
					"each. A node with `0` bundles gets no placement group. Each bundle holds one GPU when `use_gpus`.",
				ElementType: types.Int64Type,
				Required:    true,
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.NoNullValues(),
					listvalidator.ValueInt64sAre(int64validator.Between(0, clusterspec.MaxBundlesPerNode))},
			},
			"use_gpus": schema.BoolAttribute{
				MarkdownDescription: fmt.Sprintf("Whether every bundle reserves one GPU. Defaults to `%t`.", clusterspec.DefaultUseGPUs),
				Optional:            true, Computed: true, Default: booldefault.StaticBool(clusterspec.DefaultUseGPUs),
			},
			"num_gpus_per_node": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("GPUs per physical node; no logical node may ask for more bundles than this "+
					"when `use_gpus`, and segment trimming keeps `segment_size * num_gpus_per_node` bundles per segment. "+
					"Defaults to `%d`.", clusterspec.DefaultNumGPUsPerNode),
				Optional: true, Computed: true, Default: int64default.StaticInt64(clusterspec.DefaultNumGPUsPerNode),
				Validators: []validator.Int64{int64validator.Between(1, clusterspec.MaxGPUsPerNode)},
			},
			"max_colocated_worker_groups": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("Worker groups that may share a bundle: each bundle reserves this many "+
					"CPUs. Defaults to `%d`.", clusterspec.DefaultMaxColocatedWorkerGroups),
				Optional: true, Computed: true, Default: int64default.StaticInt64(clusterspec.DefaultMaxColocatedWorkerGroups),
				Validators: []validator.Int64{int64validator.Between(1, clusterspec.MaxColocatedGroups)},
			},
			"placement_group_strategy": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("Ray placement strategy of the unified group: %s. Per-node groups "+
					"always use `%s`, as in the reference. Defaults to `%s`.", codeList(topology.Strategies),
					clusterspec.PerNodeStrategy, clusterspec.DefaultStrategy),
				Optional: true, Computed: true, Default: stringdefault.StaticString(clusterspec.DefaultStrategy),
				Validators: []validator.String{validators.StringCheck{Summary: clusterspec.InvalidStrategySummary,
					Check: topology.CheckStrategy, Describe: "one of " + codeList(topology.Strategies)}},
			},
			"use_unified_pg": schema.BoolAttribute{
				MarkdownDescription: fmt.Sprintf("Create one placement group holding every bundle (for cross-node model "+
					"parallelism) instead of one group per logical node. Defaults to `%t`.", clusterspec.DefaultUseUnifiedPG),
				Optional: true, Computed: true, Default: booldefault.StaticBool(clusterspec.DefaultUseUnifiedPG),
			},
			"segment_size": schema.Int64Attribute{
				MarkdownDescription: "Nodes per NVLink-domain segment. Must divide the number of logical nodes. With a " +
					"unified GPU group, bundles are ordered by topology and domains that cannot form complete segments " +
					"are trimmed (which fails the apply, as the reference asserts); the plan checks that the live " +
					"topology has enough complete segments. Unset disables segment logic.",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(1)},
			},
			"node_resource_constraints": schema.ListAttribute{
				MarkdownDescription: "Extra Ray resources per logical node (same length as `bundle_ct_per_node_list`), " +
					"merged into every bundle of that node, e.g. `{ nvlink_domain_<uuid> = 0.001 }` to pin it to a domain. " +
					"The reference's pattern feeds `data.ray_cluster_topology.<x>.node_resource_constraints` here, which " +
					"changes when nodes join or leave, and a change of a kept node's entry replaces the cluster (entries of " +
					"nodes appended or dropped at the end resize a per-node cluster in place): prefer `select_nodes`, whose " +
					"choice stays stable. An empty map means no constraint. Conflicts with `select_nodes`.",
				ElementType:   types.MapType{ElemType: types.Float64Type},
				Optional:      true,
				Validators:    []validator.List{listvalidator.NoNullValues()},
				PlanModifiers: []planmodifier.List{keepSameFloats},
			},
			"port_range_low": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("Lowest port (inclusive) probed for the master and per-bundle ports. "+
					"Defaults to `%d`.", clusterspec.DefaultPorts.Low),
				Optional: true, Computed: true, Default: int64default.StaticInt64(int64(clusterspec.DefaultPorts.Low)),
				Validators: []validator.Int64{int64validator.Between(clusterspec.MinPort, clusterspec.MaxPortRangeHigh-1)},
			},
			"port_range_high": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("Upper bound (exclusive) of the probed port range. Defaults to `%d`.",
					clusterspec.DefaultPorts.High),
				Optional: true, Computed: true, Default: int64default.StaticInt64(int64(clusterspec.DefaultPorts.High)),
				Validators: []validator.Int64{int64validator.Between(clusterspec.MinPort+1, clusterspec.MaxPortRangeHigh)},
			},
			"ready_timeout": schema.StringAttribute{
				MarkdownDescription: "How long the driver waits for Ray to place the groups before it removes them and " +
					"fails, as a Go duration. Defaults to `" + clusterspec.DefaultReadyTimeoutText + "` (the reference's 3 minutes). " +
					"Compared as a duration: `180s` and `3m` are the same value and changing one into the other plans nothing.",
				CustomType: timetypes.GoDurationType{},
				Optional:   true, Computed: true, Default: stringdefault.StaticString(clusterspec.DefaultReadyTimeoutText),
				Validators:    []validator.String{validators.DurationValidator{}},
				PlanModifiers: []planmodifier.String{keepSameDuration},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Ray namespace holding the groups (the provider's `namespace`).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"placement_groups": schema.ListNestedAttribute{
				MarkdownDescription: "The placement groups as Ray reports them. `state` is Ray's (`CREATED`, " +
					"`PENDING`, `RESCHEDULING`) or `" + contract.StateMissing + "`; `drift` says how a group differs from the configuration " +
					"(empty when it matches). Any drift makes the next plan replace the cluster.",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":         schema.StringAttribute{Computed: true, MarkdownDescription: "Group name."},
					"id":           schema.StringAttribute{Computed: true, MarkdownDescription: "Ray placement group id (hex)."},
					"state":        schema.StringAttribute{Computed: true, MarkdownDescription: "Ray state, or `" + contract.StateMissing + "`."},
					"strategy":     schema.StringAttribute{Computed: true, MarkdownDescription: "Placement strategy."},
					"node_index":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Logical node index; `-1` for the unified group."},
					"bundle_count": schema.Int64Attribute{Computed: true, MarkdownDescription: "Bundles in the group."},
					"drift":        schema.StringAttribute{Computed: true, MarkdownDescription: "Difference from the configuration; empty when none."},
				}},
			},
			"world_size": schema.Int64Attribute{MarkdownDescription: "Total bundles (`world_size()`).", Computed: true},
			"node_count": schema.Int64Attribute{MarkdownDescription: "Logical nodes with at least one bundle (`node_count()`).", Computed: true},
			"sorted_bundle_indices": schema.ListAttribute{
				MarkdownDescription: "Global bundle indices in rank order. For a unified GPU group, ordered by topology: " +
					"`(domain_min_topo_rank, topo_rank, gpu_id)`, or `(node_id, gpu_id)` without topology information; " +
					"otherwise natural order (group by group).",
				ElementType: types.Int64Type, Computed: true,
			},
			"bundles": schema.ListNestedAttribute{
				MarkdownDescription: "Every bundle in rank order, with where Ray placed it and a free port found on its " +
					"node within the port range (ports are unique per node across the cluster).",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"rank":            schema.Int64Attribute{Computed: true, MarkdownDescription: "Position in rank order."},
					"placement_group": schema.StringAttribute{Computed: true, MarkdownDescription: "Name of the bundle's group."},
					"bundle_index":    schema.Int64Attribute{Computed: true, MarkdownDescription: "Index within its group."},
					"global_index":    schema.Int64Attribute{Computed: true, MarkdownDescription: "Index over all bundles in declaration order."},
					"node_id":         schema.StringAttribute{Computed: true, MarkdownDescription: "Ray node holding the bundle."},
					"node_ip":         schema.StringAttribute{Computed: true, MarkdownDescription: "That node's IP address."},
					"gpu_id":          schema.Int64Attribute{Computed: true, MarkdownDescription: "GPU id Ray assigned; null without GPUs."},
					"nvlink_domain":   schema.StringAttribute{Computed: true, MarkdownDescription: domainOutputDoc},
					"topo_rank":       schema.Int64Attribute{Computed: true, MarkdownDescription: rankOutputDoc},
					"port":            schema.Int64Attribute{Computed: true, MarkdownDescription: "A port free on the node when probed."},
				}},
			},
			"nvlink_domain_per_bundle": schema.ListAttribute{
				MarkdownDescription: "NVLink domain of each bundle, indexed by global bundle index (the reference's `nvlink_domain_per_bundle_index`).",
				ElementType:         types.StringType, Computed: true,
			},
			"master_address": schema.StringAttribute{MarkdownDescription: "IP of the first bundle in rank order (`get_master_address_and_port`).", Computed: true},
			"master_port":    schema.Int64Attribute{MarkdownDescription: "Port probed for the first bundle in rank order: free on `master_address` within the port range when probed.", Computed: true},
			"owner_id": schema.StringAttribute{
				MarkdownDescription: "Random token of the Terraform state that owns the cluster; Ray's record of the cluster " +
					"(internal KV namespace `" + record.KVNamespace + "`) keeps only its SHA-256 digest, so reading Ray " +
					"does not give the token. Another state cannot create, " +
					"change or destroy groups of the same name; an applied import takes ownership explicitly.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"select_nodes": schema.BoolAttribute{
				MarkdownDescription: "Let the cluster choose its own nodes once, at create: complete NVLink segments of " +
					"`segment_size` nodes (1 when unset) from the domains in topological order, by `select_segment_nodes`'s " +
					"rules, over the alive nodes minus `exclude_node_ids`. The choice is kept in `selected_node_ids`, so " +
					"nodes joining or leaving elsewhere never change the plan; only losing a node the cluster holds " +
					"replaces it. At apply the cluster reserves what its bundles ask of each chosen node, so other clusters " +
					"share a node whose resources hold them all (`exclusive_nodes` reserves whole nodes). Conflicts with " +
					"`node_resource_constraints`. Defaults to `false`.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(clusterspec.Defaults().SelectNodes),
			},
			clusterspec.AttrExclusiveNodes: schema.BoolAttribute{
				MarkdownDescription: "Reserve each selected node whole at apply, for a job that wants its nodes (and an " +
					"NVLink domain of them) to itself: the choice skips nodes other groups or reservations use, and no other " +
					"cluster reserves a share of these nodes while the cluster exists. Needs `select_nodes`. A change " +
					"replaces the cluster. Defaults to `false`: clusters share a node whose resources hold them all.",
				Optional: true, Computed: true, Default: booldefault.StaticBool(false),
			},
			"exclude_node_ids": schema.SetAttribute{
				MarkdownDescription: "Node ids `select_nodes` must not choose, e.g. another cluster's `selected_node_ids`. " +
					"A change that excludes a node this cluster holds replaces it; other changes do not touch it.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"pinning": schema.StringAttribute{
				MarkdownDescription: fmt.Sprintf("How `select_nodes` holds each logical node to its node: `%s` pins every "+
					"bundle to the selected node with Ray's `bundle_label_selector` on `%s`, so a segment is exactly the "+
					"selected nodes; `%s` only pins it to the node's NVLink domain (`{<domain> = %g}`), as the reference "+
					"does, which lets Ray use any node of the domain. Defaults to `%s`.", clusterspec.PinningNode,
					clusterspec.NodeIDLabel, clusterspec.PinningDomain, topology.DomainConstraintAmount, clusterspec.DefaultPinning),
				Optional: true, Computed: true, Default: stringdefault.StaticString(clusterspec.DefaultPinning),
				Validators: []validator.String{stringvalidator.OneOf(clusterspec.Pinnings...)},
			},
			"node_label_selectors": schema.ListAttribute{
				MarkdownDescription: "Ray node-label selectors per logical node (same length as `bundle_ct_per_node_list`), " +
					"merged into every bundle of that node as Ray's `bundle_label_selector`, for per-node and unified groups. " +
					"Values as Ray accepts them: `\"v\"`, `\"!v\"`, `\"in(a,b)\"`, `\"!in(a,b)\"`; an empty map selects any node. " +
					"E.g. `[{ \"raytf.io/nvlink-domain\" = \"rackA\" }, {}]`. The plan fails when no alive node satisfies a " +
					"selector. With `select_nodes`, nodes that satisfy no selector are not chosen and each chosen node must " +
					"satisfy its logical node's selector; with `pinning = \"" + clusterspec.PinningNode + "\"` the pin on `" +
					clusterspec.NodeIDLabel + "` replaces a selector on that key, and one the chosen node does not satisfy is a " +
					"plan error. On Ray " + clusterspec.GPUDomainSelectorMinRayVersion + " or newer a unified group that selects `" +
					clusterspec.AcceleratorTypeLabel + "` = `\"GB200\"` or `\"GB300\"` must select the same value for every logical " +
					"node (Ray schedules it in one GPU domain); selecting it for some nodes only is a plan error. " +
					"Needs Ray " + clusterspec.BundleLabelSelectorMinRayVersion + " or newer.",
				ElementType: types.MapType{ElemType: types.StringType},
				Optional:    true,
				Validators:  []validator.List{listvalidator.NoNullValues()},
			},
			"topology_strategy": schema.MapAttribute{
				MarkdownDescription: "Ray's topology strategy for the unified group (`use_unified_pg = true` only): node label " +
					"key to strategy, e.g. `{ \"raytf.io/nvlink-domain\" = \"" + clusterspec.TopologyLabelStrategy + "\" }` keeps " +
					"every bundle on nodes that share one value of that label. Ray accepts one label, with `" +
					clusterspec.TopologyLabelStrategy + "`; the node-level strategy stays `placement_group_strategy`. " +
					"Experimental in Ray; needs Ray " + clusterspec.TopologyStrategyMinRayVersion + " or newer (an older server " +
					"fails the plan). The plan fails when no single label value's nodes can hold the group.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"topology_assignments": schema.MapAttribute{
				MarkdownDescription: "With `topology_strategy`, the label value Ray chose for each topology label " +
					"(Ray's `topology_assignments`), e.g. `{ \"raytf.io/nvlink-domain\" = \"rackA\" }`. Null otherwise.",
				ElementType:   types.StringType,
				Computed:      true,
				PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
			},
			"selected_node_ids": schema.ListAttribute{
				MarkdownDescription: "With `select_nodes`, the node chosen for each logical node, in logical-node order: chosen and claimed at " +
					"apply (known after apply), then stable from state, so another cluster can exclude them. Null otherwise.",
				ElementType:   types.StringType,
				Computed:      true,
				PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()},
			},
			clusterspec.AttrTopologyLabels: topologyLabelsResourceAttribute(),
			clusterspec.AttrCapacityCheck: schema.StringAttribute{
				MarkdownDescription: CapacityCheckDescription + " Defaults to the provider's `" + clusterspec.AttrCapacityCheck +
					"`. Only the plan and the create look at it: changing it changes no placement group.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.OneOf(clusterspec.CapacityChecks...)},
			},
			clusterspec.AttrRecoveryTimeout: schema.StringAttribute{
				MarkdownDescription: "How long a cluster that lost a node may wait for Ray to place its lost bundles again " +
					"before the plan replaces it, as a Go duration counted from the node's death. Unset (the default): the " +
					"plan warns that the cluster is recovering and never replaces it while Ray can still place it. A bundle " +
					"pinned to the lost node (`select_nodes`, or a `ray.io/node-id` selector) can never be placed again: " +
					"its cluster is replaced at once. Only the plan looks at it: changing it changes no placement group.",
				CustomType:    timetypes.GoDurationType{},
				Optional:      true,
				Validators:    []validator.String{validators.DurationValidator{}},
				PlanModifiers: []planmodifier.String{keepSameDuration},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true, Read: true,
				CreateDescription: timeoutDescription("a create (the driver job, placement, probes)"),
				ReadDescription:   timeoutDescription("a refresh"),
				UpdateDescription: timeoutDescription("an in-place update (re-probing ports, or a resize's new groups)"),
				DeleteDescription: timeoutDescription("a destroy")}),
		},
	}
	requireReplace(resp.Schema.Attributes, replacingAttributes)
	for _, name := range resizingAttributes {
		a, ok := resp.Schema.Attributes[name].(schema.ListAttribute)
		if !ok {
			panic("resizingAttributes: " + name + " is not a list attribute")
		}
		a.PlanModifiers = append(a.PlanModifiers, resizeOrReplace)
		resp.Schema.Attributes[name] = a
	}
}

// CapacityCheckDescription explains the capacity_check values (resource
// and provider attribute).
var CapacityCheckDescription = fmt.Sprintf("What the plan and the create check the cluster against before any "+
	"placement group is created: `%s` the resources free now (other placement groups count as taken; a plan "+
	"that no longer fits fails); `%s` only the alive nodes' total resources, as NeMo-RL does (a cluster that "+
	"fits the totals but not what is free plans, and the apply waits `ready_timeout` for Ray to place it, "+
	"then fails and removes every group); `%s` no capacity at all, for autoscaling clusters where a pending "+
	"placement group is what makes Ray add nodes (the shape and segment rules still apply, and the apply waits "+
	"`ready_timeout`). With `select_nodes`, `%s` chooses among the nodes whose free resources hold a logical "+
	"node's bundles, `%s` and `%s` among those that could hold them when empty.",
	clusterspec.CapacityFree, clusterspec.CapacityTotal, clusterspec.CapacityNone, clusterspec.CapacityFree,
	clusterspec.CapacityTotal, clusterspec.CapacityNone)

// codeList renders values as "`a`, `b` or `c`".
func codeList(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "`" + v + "`"
	}
	if len(quoted) < 2 {
		return strings.Join(quoted, "")
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
}

// timeoutDescription documents one operation of the timeouts block with the
// provider's default.
func timeoutDescription(op string) string {
	return fmt.Sprintf("How long %s may take, as a Go duration such as `30s` or `2h45m`. Defaults to %.0f minutes.",
		op, clusterspec.DefaultOperationTimeout.Minutes())
}
