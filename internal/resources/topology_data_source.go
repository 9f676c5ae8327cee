package resources

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

var (
	_ datasource.DataSource              = (*clusterTopologyDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*clusterTopologyDataSource)(nil)
)

// NewClusterTopologyDataSource is the ray_cluster_topology constructor.
func NewClusterTopologyDataSource() datasource.DataSource { return &clusterTopologyDataSource{} }

type clusterTopologyDataSource struct{ data *session.Session }

// clusterTopologyArgs are the data source's arguments; the computed
// attributes are built as raw values (topology_outputs.go).
type clusterTopologyArgs struct {
	SegmentSize    types.Int64  `tfsdk:"segment_size"`
	NumNodes       types.Int64  `tfsdk:"num_nodes"`
	ExcludeNodeIDs types.Set    `tfsdk:"exclude_node_ids"`
	Role           types.String `tfsdk:"role"`
	IncludeNodes   types.Bool   `tfsdk:"include_nodes"`
	TopologyLabels types.Object `tfsdk:"topology_labels"`
}

// argumentNames are the attributes of clusterTopologyArgs, echoed into state.
var argumentNames = []string{"segment_size", "num_nodes", "exclude_node_ids", "role", "include_nodes", clusterspec.AttrTopologyLabels}

func (d *clusterTopologyDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_topology"
}

func (d *clusterTopologyDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = sessionFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterTopologyDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the alive Ray nodes and their physical topology: each node's NVLink domain " +
			"(the `" + topology.NVLinkDomainPrefix + "<ClusterUUID>` custom resource, `" + topology.NVLinkDomainUnknown +
			"` when absent) and `" + topology.TopoRankKey + "` (`-1` when absent), as " +
			"`get_ray_cluster_topology` does, or from node labels (`topology_labels`). With `segment_size` and `num_nodes` it also selects complete " +
			"NVLink segments (`select_segment_nodes`) and returns the per-node constraints that pin a " +
			"`ray_virtual_cluster` to them (`prepare_segment_topology`).",
		Attributes: map[string]schema.Attribute{
			"segment_size": schema.Int64Attribute{
				MarkdownDescription: "Nodes per NVLink-domain segment. When set, `num_nodes` nodes are selected in " +
					"complete segments of this size, greedily from the domains in topological order. Unset disables " +
					"segment selection (the selection outputs are then empty, as in the reference).",
				Optional:   true,
				Validators: []validator.Int64{int64validator.AtLeast(1), int64validator.AlsoRequires(path.MatchRoot("num_nodes"))},
			},
			"num_nodes": schema.Int64Attribute{
				MarkdownDescription: "Number of nodes to select; must be a multiple of `segment_size`.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(1), int64validator.AlsoRequires(path.MatchRoot("segment_size"))},
			},
			"exclude_node_ids": schema.SetAttribute{
				MarkdownDescription: "Node ids left out of the topology before selecting, e.g. the " +
					"`selected_node_ids` of a training cluster when choosing the inference cluster's nodes.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"role": schema.StringAttribute{
				MarkdownDescription: "Label used in the selection message (e.g. `training`, `inference`). Defaults to `training`.",
				Optional:            true,
			},
			"include_nodes": schema.BoolAttribute{
				MarkdownDescription: "Whether `nodes` lists the nodes (default `false`: `nodes` is empty). Every plan " +
					"carries that list through Terraform, which costs seconds at thousands of nodes; `topology`, the " +
					"totals and the selection outputs do not need it.",
				Optional: true,
			},
			clusterspec.AttrTopologyLabels: topologyLabelsDataSourceAttribute(),
			"id":                           schema.StringAttribute{MarkdownDescription: "Ray session name of the cluster that was read.", Computed: true},
			"ray_version":                  schema.StringAttribute{MarkdownDescription: "Ray version reported by the dashboard.", Computed: true},
			"nodes": schema.ListNestedAttribute{
				MarkdownDescription: "Alive nodes (after `exclude_node_ids`) in topological order: by the lowest " +
					"`topo_rank` of their NVLink domain, then `topo_rank`, then node id. Empty unless " +
					"`include_nodes` is true.",
				Computed:     true,
				NestedObject: schema.NestedAttributeObject{Attributes: nodeAttributes()},
			},
			"topology": schema.MapNestedAttribute{
				MarkdownDescription: "Node id to `{nvlink_domain, topo_rank}`: the dictionary `get_ray_cluster_topology` returns.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"nvlink_domain": schema.StringAttribute{Computed: true, MarkdownDescription: domainOutputDoc},
					"topo_rank":     schema.Int64Attribute{Computed: true, MarkdownDescription: rankOutputDoc},
				}},
			},
			"has_topology": schema.BoolAttribute{MarkdownDescription: "Whether any node reports an NVLink domain.", Computed: true},
			"total_gpus":   schema.Int64Attribute{MarkdownDescription: "GPUs on the listed nodes.", Computed: true},
			"total_cpus":   schema.Int64Attribute{MarkdownDescription: "CPUs on the listed nodes.", Computed: true},
			"selected_node_ids": schema.ListAttribute{
				MarkdownDescription: "Nodes chosen for `num_nodes`, in topological order. Empty without `segment_size` or without NVLink information.",
				ElementType:         types.StringType, Computed: true,
			},
			"remaining_node_ids": schema.ListAttribute{
				MarkdownDescription: "Listed nodes not selected, in node-id order; feed them (via `exclude_node_ids` " +
					"= `selected_node_ids`) to a second data source for an inference cluster. Empty without `segment_size`; " +
					"all nodes when no NVLink information exists.",
				ElementType: types.StringType, Computed: true,
			},
			"node_resource_constraints": schema.ListAttribute{
				MarkdownDescription: "One `{<nvlink_domain> = 0.001}` map per selected node, in the shape of " +
					"`ray_virtual_cluster.node_resource_constraints` (a cluster fed from it is replaced whenever node churn " +
					"changes the selection; prefer the resource's `select_nodes`). Null without `segment_size` or NVLink information, " +
					"and when domains come from a label (`topology_labels.nvlink_domain`): a label domain is no resource; " +
					"see `node_label_selectors`.",
				ElementType: types.MapType{ElemType: types.Float64Type}, Computed: true,
			},
			"node_label_selectors": schema.ListAttribute{
				MarkdownDescription: "With domains from a label (`topology_labels.nvlink_domain`), one " +
					"`{<domain label> = <domain>}` label selector per selected node: the label counterpart of " +
					"`node_resource_constraints`. Null otherwise.",
				ElementType: types.MapType{ElemType: types.StringType}, Computed: true,
			},
			"message": schema.StringAttribute{MarkdownDescription: "What the selection did, in the reference's words.", Computed: true},
		},
	}
}

func (d *clusterTopologyDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = session.ReadOnly(ctx, "data source read")
	args := readTopologyArgs(ctx, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !requireConfigured(d.data, &resp.Diagnostics) {
		return
	}
	labels, diags := topologySourceFor(ctx, d.data, args.TopologyLabels)
	resp.Diagnostics.Append(diags...)
	source := clusterspec.SourceOrDefault(labels)
	if !args.SegmentSize.IsNull() && !args.NumNodes.IsNull() && args.NumNodes.ValueInt64()%args.SegmentSize.ValueInt64() != 0 {
		resp.Diagnostics.AddAttributeError(path.Root("num_nodes"), "num_nodes is not a multiple of segment_size",
			fmt.Sprintf("num_nodes (%d) must be divisible by segment_size (%d).", args.NumNodes.ValueInt64(), args.SegmentSize.ValueInt64()))
		return
	}
	readCtx, cancel := d.data.PlanReadContext(ctx)
	defer cancel()
	version, err := d.data.RayVersionInfo(readCtx)
	if failUnanswered(d.data, &resp.Diagnostics, err) {
		return
	}
	if err != nil {
		addDashboardError(&resp.Diagnostics, d.data, err)
		return
	}
	nodes, err := d.data.AliveNodes(readCtx)
	if failUnanswered(d.data, &resp.Diagnostics, err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot list Ray nodes", session.ErrorDetail(err))
		return
	}
	kept := withoutExcluded(ctx, nodes, args.ExcludeNodeIDs, &resp.Diagnostics)
	if err := source.MissingLabelSupport(nodes, version.RayVersion); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(clusterspec.AttrTopologyLabels), "Ray does not report node labels", err.Error())
		return
	}
	topo := source.NodeTopology(kept)
	tflog.Info(ctx, "Ray reports its nodes", map[string]any{"address": d.data.Address(), "alive_nodes": len(nodes), "listed": len(kept)})

	plan, ok := args.segmentPlan(ctx, topo, &resp.Diagnostics)
	if !ok {
		return
	}

	out := buildNodeOutputs(kept, topo, args.IncludeNodes.ValueBool())
	vals := selectionOutputs(plan, source)
	vals["id"] = tfString(version.SessionName)
	vals["ray_version"] = tfString(version.RayVersion)
	vals["has_topology"] = tftypes.NewValue(tftypes.Bool, topology.HasTopology(topo))
	vals["nodes"] = out.nodes
	vals["topology"] = out.topology
	vals["total_gpus"] = tftypes.NewValue(tftypes.Number, out.totalGPUs)
	vals["total_cpus"] = tftypes.NewValue(tftypes.Number, out.totalCPUs)
	var config map[string]tftypes.Value
	if err := req.Config.Raw.As(&config); err != nil {
		resp.Diagnostics.AddError("Cannot read the data source configuration", err.Error())
		return
	}
	for _, name := range argumentNames {
		vals[name] = config[name]
	}
	resp.State.Raw = tftypes.NewValue(resp.State.Schema.Type().TerraformType(ctx), vals)
}

// readTopologyArgs reads the data source's arguments from its configuration.
func readTopologyArgs(ctx context.Context, config tfsdk.Config, diags *diag.Diagnostics) clusterTopologyArgs {
	var args clusterTopologyArgs
	diags.Append(config.GetAttribute(ctx, path.Root("segment_size"), &args.SegmentSize)...)
	diags.Append(config.GetAttribute(ctx, path.Root("num_nodes"), &args.NumNodes)...)
	diags.Append(config.GetAttribute(ctx, path.Root("exclude_node_ids"), &args.ExcludeNodeIDs)...)
	diags.Append(config.GetAttribute(ctx, path.Root("role"), &args.Role)...)
	diags.Append(config.GetAttribute(ctx, path.Root("include_nodes"), &args.IncludeNodes)...)
	diags.Append(config.GetAttribute(ctx, path.Root(clusterspec.AttrTopologyLabels), &args.TopologyLabels)...)
	return args
}

// withoutExcluded is nodes without those exclude_node_ids names, in order.
func withoutExcluded(ctx context.Context, nodes []raystate.Node, exclude types.Set, diags *diag.Diagnostics) []raystate.Node {
	excluded := map[string]bool{}
	var excludeList []string
	diags.Append(exclude.ElementsAs(ctx, &excludeList, false)...)
	for _, id := range excludeList {
		excluded[id] = true
	}
	kept := nodes[:0:0]
	for _, n := range nodes {
		if !excluded[n.NodeID] {
			kept = append(kept, n)
		}
	}
	return kept
}

// segmentPlan selects the segments segment_size, num_nodes and role ask for
// from topo, reporting why it cannot; ok is false after such an error.
func (args clusterTopologyArgs) segmentPlan(ctx context.Context, topo []topology.Node, diags *diag.Diagnostics) (plan topology.SegmentPlan, ok bool) {
	role := args.Role.ValueString()
	var segment *int
	if !args.SegmentSize.IsNull() {
		s := int(args.SegmentSize.ValueInt64())
		segment = &s
	}
	plan, err := topology.PrepareSegmentTopology(segment, int(args.NumNodes.ValueInt64()), topo, role)
	if err != nil {
		var insufficient *topology.ResourceInsufficientError
		if errors.As(err, &insufficient) {
			diags.AddAttributeError(path.Root("segment_size"), "Not enough complete NVLink segments", err.Error())
		} else {
			diags.AddAttributeError(path.Root("segment_size"), "Invalid segment selection", err.Error())
		}
		return plan, false
	}
	if plan.Message != "" {
		tflog.Info(ctx, plan.Message)
	}
	return plan, true
}
