package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

var (
	_ datasource.DataSource              = (*virtualClusterDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*virtualClusterDataSource)(nil)
)

// NewVirtualClusterDataSource is the ray_virtual_cluster data source constructor.
func NewVirtualClusterDataSource() datasource.DataSource { return &virtualClusterDataSource{} }

// virtualClusterDataSource reads a cluster another state owns: its record
// (through a read-only driver job: Ray's dashboard serves no internal KV)
// checked against the live groups of the state API.
type virtualClusterDataSource struct{ data *session.Session }

type virtualClusterDataModel struct {
	ID                       types.String     `tfsdk:"id"`
	Name                     types.String     `tfsdk:"name"`
	Namespace                types.String     `tfsdk:"namespace"`
	UseGPUs                  types.Bool       `tfsdk:"use_gpus"`
	NumGPUsPerNode           types.Int64      `tfsdk:"num_gpus_per_node"`
	MaxColocatedWorkerGroups types.Int64      `tfsdk:"max_colocated_worker_groups"`
	UseUnifiedPG             types.Bool       `tfsdk:"use_unified_pg"`
	PlacementGroupStrategy   types.String     `tfsdk:"placement_group_strategy"`
	BundleCtPerNodeList      []int64          `tfsdk:"bundle_ct_per_node_list"`
	PortRangeLow             types.Int64      `tfsdk:"port_range_low"`
	PortRangeHigh            types.Int64      `tfsdk:"port_range_high"`
	PlacementGroups          []dataGroup      `tfsdk:"placement_groups"`
	Bundles                  []recordedBundle `tfsdk:"bundles"`
	SortedBundleIndices      []int64          `tfsdk:"sorted_bundle_indices"`
	NVLinkDomainPerBundle    []string         `tfsdk:"nvlink_domain_per_bundle"`
	WorldSize                types.Int64      `tfsdk:"world_size"`
	NodeCount                types.Int64      `tfsdk:"node_count"`
	MasterAddress            types.String     `tfsdk:"master_address"`
	MasterPort               types.Int64      `tfsdk:"master_port"`
	OwnerID                  types.String     `tfsdk:"owner_id"`
	CreatedAt                types.String     `tfsdk:"created_at"`
	UpdatedAt                types.String     `tfsdk:"updated_at"`
	ProviderVersion          types.String     `tfsdk:"provider_version"`
	SchemaVersion            types.Int64      `tfsdk:"schema_version"`
}

// dataGroup is one group of placement_groups: the resource's, without drift.
type dataGroup struct {
	Name        string `tfsdk:"name"`
	ID          string `tfsdk:"id"`
	State       string `tfsdk:"state"`
	Strategy    string `tfsdk:"strategy"`
	NodeIndex   int64  `tfsdk:"node_index"`
	BundleCount int64  `tfsdk:"bundle_count"`
}

func (d *virtualClusterDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + virtualClusterSuffix
}

func (d *virtualClusterDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = sessionFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *virtualClusterDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computed := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
	}
	text := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a `ray_virtual_cluster` that another configuration (or state) owns, so an " +
			"application can depend on capacity an infrastructure repository declared without owning it: the " +
			"placement groups and their live state, every bundle in rank order, the master address and port. " +
			"It reads the cluster's record in Ray's internal KV (namespace `" + record.KVNamespace + "`) with a " +
			"short read-only Ray job (the dashboard has no KV endpoint) and checks it against the groups Ray's " +
			"state API reports. It fails, naming the cluster, when there is no such cluster, when its groups are " +
			"missing, pending or rescheduling, or when Ray moved bundles since the owner's last apply. It never " +
			"changes anything in Ray.",
		Attributes: map[string]schema.Attribute{
			"id": text("`<namespace>/<name>`."),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the cluster (the resource's `name`).",
				Required:            true,
				Validators: []validator.String{stringvalidator.RegexMatches(clusterspec.NamePattern,
					fmt.Sprintf("must be letters, digits, `.`, `_` and `-`, at most %d characters", clusterspec.MaxNameLength))},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Ray namespace of the cluster. Defaults to the provider's `namespace`.",
				Optional:            true, Computed: true,
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"use_gpus":                    schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether every bundle holds one GPU."},
			"num_gpus_per_node":           computed("GPUs per physical node, as declared."),
			"max_colocated_worker_groups": computed("Worker groups that may share a bundle."),
			"use_unified_pg":              schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the cluster is one unified placement group."},
			"placement_group_strategy":    text("Strategy of the unified group."),
			"bundle_ct_per_node_list": schema.ListAttribute{ElementType: types.Int64Type, Computed: true,
				MarkdownDescription: "Bundles per logical node."},
			"port_range_low":  computed("Lowest port (inclusive) the owner probed."),
			"port_range_high": computed("Upper bound (exclusive) of the probed port range."),
			"placement_groups": schema.ListNestedAttribute{
				MarkdownDescription: "The placement groups in declaration order, with their state as Ray reports it now " +
					"(always `" + raystate.PlacementGroupStateCreated + "`: other states fail the read).",
				Computed: true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":         text("Group name."),
					"id":           text("Ray placement group id (hex)."),
					"state":        text("Ray state."),
					"strategy":     text("Placement strategy."),
					"node_index":   computed("Logical node index; `-1` for the unified group."),
					"bundle_count": computed("Bundles in the group."),
				}},
			},
			"bundles": schema.ListNestedAttribute{
				MarkdownDescription: "Every bundle in rank order, as the owner's last apply placed and probed it.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"rank":            computed("Position in rank order."),
					"placement_group": text("Name of the bundle's group."),
					"bundle_index":    computed("Index within its group."),
					"global_index":    computed("Index over all bundles in declaration order."),
					"node_id":         text("Ray node holding the bundle."),
					"node_ip":         text("That node's IP address."),
					"gpu_id":          computed("GPU id Ray assigned; null without GPUs."),
					"nvlink_domain":   text("The node's NVLink domain, or `unknown`."),
					"topo_rank":       computed("The node's topo_rank, or `-1`."),
					"port":            computed("A port that was free on the node when the owner probed it."),
				}},
			},
			"sorted_bundle_indices": schema.ListAttribute{ElementType: types.Int64Type, Computed: true,
				MarkdownDescription: "Global bundle indices in rank order."},
			"nvlink_domain_per_bundle": schema.ListAttribute{ElementType: types.StringType, Computed: true,
				MarkdownDescription: "NVLink domain of each bundle, indexed by global bundle index."},
			"world_size":       computed("Total bundles."),
			"node_count":       computed("Logical nodes with at least one bundle."),
			"master_address":   text("IP of the first bundle in rank order; null for a cluster without bundles."),
			"master_port":      computed("Port probed for the first bundle in rank order."),
			"owner_id":         text(ownerDigestDoc),
			"created_at":       text("When the owner created the cluster (RFC 3339, UTC)."),
			"updated_at":       text("When the owner last wrote the record."),
			"provider_version": text("Version of the provider that wrote the record."),
			"schema_version":   computed("Format version of the record."),
		},
	}
}

func (d *virtualClusterDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx = session.ReadOnly(ctx, "data source read")
	var m virtualClusterDataModel
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &m.Name)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("namespace"), &m.Namespace)...)
	if resp.Diagnostics.HasError() || !requireConfigured(d.data, &resp.Diagnostics) {
		return
	}
	name, ns := m.Name.ValueString(), m.Namespace.ValueString()
	if ns == "" {
		ns = d.data.Namespace
	}
	ctx, cancel := context.WithTimeout(ctx, session.ReadTimeout)
	defer cancel()
	res, err := d.data.ReadRecord(ctx, ns, name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the virtual cluster's record",
			fmt.Sprintf("Reading the record of %s from Ray's internal KV failed: %s", session.ClusterLabel(name, ns), session.ErrorDetail(err)))
		return
	}
	live, err := d.data.LiveGroups(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the virtual cluster's placement groups", session.ErrorDetail(err))
		return
	}
	tflog.Info(ctx, "read virtual cluster record", map[string]any{"name": name, "namespace": ns, "found": res.Record != nil})
	out, summary, detail := readVirtualCluster(name, ns, res.Record, res.Tombstone, live)
	if summary != "" {
		resp.Diagnostics.AddAttributeError(path.Root("name"), summary, detail)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &out)...)
}

// readVirtualCluster checks the record of cluster name in namespace ns
// against the live groups (session.CheckRecord) and returns the data
// source's value, or an error summary and detail naming the cluster.
func readVirtualCluster(name, ns string, rec *record.Manifest, tomb *record.Tombstone,
	live []raystate.PlacementGroup) (m virtualClusterDataModel, summary, detail string) {
	if summary, detail := session.CheckRecord(name, ns, rec, tomb, live); summary != "" {
		return m, summary, detail
	}
	return dataModelFromRecord(name, ns, rec, live), "", ""
}

// dataModelFromRecord is the data source's value for a checked record.
func dataModelFromRecord(name, ns string, rec *record.Manifest, live []raystate.PlacementGroup) virtualClusterDataModel {
	state := make(map[string]string, len(live))
	for _, g := range live {
		state[g.PlacementGroupID] = g.State
	}
	m := virtualClusterDataModel{
		ID: types.StringValue(ns + "/" + name), Name: types.StringValue(name), Namespace: types.StringValue(ns),
		UseGPUs: types.BoolValue(rec.UseGPUs), NumGPUsPerNode: types.Int64Value(int64(rec.NumGPUsPerNode)),
		MaxColocatedWorkerGroups: types.Int64Value(int64(rec.MaxColocatedWorkerGroups)),
		UseUnifiedPG:             types.BoolValue(rec.UseUnifiedPG), PlacementGroupStrategy: types.StringValue(rec.PlacementGroupStrategy),
		BundleCtPerNodeList: int64s(rec.BundleCtPerNodeList),
		PortRangeLow:        types.Int64Value(int64(rec.PortRangeLow)), PortRangeHigh: types.Int64Value(int64(rec.PortRangeHigh)),
		PlacementGroups: make([]dataGroup, 0, len(rec.Groups)), Bundles: make([]recordedBundle, 0, len(rec.Bundles)),
		SortedBundleIndices: int64s(rec.SortedBundleIndices), NVLinkDomainPerBundle: make([]string, len(rec.Bundles)),
		WorldSize: types.Int64Value(int64(len(rec.Bundles))), MasterAddress: types.StringNull(), MasterPort: types.Int64Null(),
		OwnerID: types.StringValue(record.StoredOwner(rec.Owner)), CreatedAt: types.StringValue(rec.CreatedAt), UpdatedAt: types.StringValue(rec.UpdatedAt),
		ProviderVersion: types.StringValue(rec.ProviderVersion), SchemaVersion: types.Int64Value(int64(rec.SchemaVersion)),
	}
	nodes := 0
	for _, c := range rec.BundleCtPerNodeList {
		if c > 0 {
			nodes++
		}
	}
	m.NodeCount = types.Int64Value(int64(nodes))
	for _, g := range rec.Groups {
		m.PlacementGroups = append(m.PlacementGroups, dataGroup{Name: g.Name, ID: g.ID, State: state[g.ID], Strategy: g.Strategy,
			NodeIndex: int64(g.NodeIndex), BundleCount: int64(g.BundleCount)})
	}
	for _, b := range rec.Bundles {
		gpu := types.Int64Null()
		if b.GPUID != nil {
			gpu = types.Int64Value(int64(*b.GPUID))
		}
		m.Bundles = append(m.Bundles, recordedBundle{Rank: int64(b.Rank), Group: b.PlacementGroup, Index: int64(b.BundleIndex),
			GlobalIndex: int64(b.GlobalIndex), NodeID: b.NodeID, NodeIP: b.NodeIP, GPUID: gpu, NVLinkDomain: b.NVLinkDomain,
			TopoRank: int64(b.TopoRank), Port: int64(b.Port)})
		if b.GlobalIndex >= 0 && b.GlobalIndex < len(m.NVLinkDomainPerBundle) {
			m.NVLinkDomainPerBundle[b.GlobalIndex] = b.NVLinkDomain
		}
	}
	if len(rec.Bundles) > 0 {
		m.MasterAddress, m.MasterPort = types.StringValue(rec.MasterAddress), types.Int64Value(int64(rec.MasterPort))
	}
	return m
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// ownerDigestDoc describes the data source's owner_id: another state reads
// it, so it is the digest Ray keeps, never the token.
const ownerDigestDoc = "Digest of the owning state's `owner_id`: `sha256:` and its hex SHA-256, never the token itself " +
	"(Ray keeps only the digest). A configuration tells its own cluster by " +
	"`\"sha256:${sha256(ray_virtual_cluster.NAME.owner_id)}\"`."
