package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

var ownershipClasses = []string{session.OwnedHere, session.OwnedOther, session.OwnedNone, session.NotACluster}

var (
	_ list.ListResource              = (*virtualClusterList)(nil)
	_ list.ListResourceWithConfigure = (*virtualClusterList)(nil)
)

// virtualClusterList lists the virtual clusters of a Ray namespace for
// `terraform query`: their identity and, with include_resource, the state an
// import would give them, so -generate-config-out writes configuration that
// plans empty once imported. It only reads: the shared group list from the
// dashboard and one read job for the records (contract.ReadRequest, which
// writes neither groups nor KV).
type virtualClusterList struct {
	data *session.Session
}

// NewVirtualClusterListResource is the ray_virtual_cluster list resource constructor.
func NewVirtualClusterListResource() list.ListResource { return &virtualClusterList{} }

type virtualClusterListModel struct {
	Namespace  types.String `tfsdk:"namespace"`
	NamePrefix types.String `tfsdk:"name_prefix"`
	Ownership  types.List   `tfsdk:"ownership"`
	OwnerIDs   types.List   `tfsdk:"owner_ids"`
}

func (l *virtualClusterList) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + virtualClusterSuffix
}

func (l *virtualClusterList) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	l.data = sessionFrom(req.ProviderData, &resp.Diagnostics)
}

func (l *virtualClusterList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "Lists the virtual clusters of a Ray namespace (placement groups named `<name>-unified` or " +
			"`<name>-node<i>`) with their identity and, with `include_resource`, the state an import gives them, for " +
			"`terraform query` and `terraform query -generate-config-out`. Listing only reads: the dashboard's placement-group " +
			"list and " + session.ListReadDesc + " for the clusters' records; it never creates, changes or claims anything. " +
			"Placement groups that no virtual cluster could adopt are reported as warnings, with their shape and the reason.",
		Attributes: map[string]listschema.Attribute{
			"namespace": listschema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Ray namespace to list; the provider's `namespace` when unset. Nothing of another namespace is " +
					"listed unless named here. Importing what another namespace holds needs a provider configured with that namespace.",
			},
			"name_prefix": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "List only clusters (and placement groups) whose name starts with this prefix.",
			},
			"ownership": listschema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "Which clusters to list, by who owns them (every class when unset):\n" +
					"  - `this_state`: the cluster's record in Ray names one of `owner_ids`.\n" +
					"  - `other_state`: the record names another owner. Ray cannot tell a live state from a lost one " +
					"(a deleted working directory, an apply killed before Terraform saved state): review these before " +
					"importing, since import takes them over. Import then apply adopts one; destroy it after to remove it.\n" +
					"  - `no_state`: groups named like a virtual cluster that no state owns: no record (made outside this " +
					"provider, e.g. by NeMo-RL's `RayVirtualCluster` or plain `ray.util`), or a record without an owner. " +
					"Reservations that no state owns (their groups gone, or no record naming their owner) are reported " +
					"with this class as warnings, with what they hold and how to release them.\n" +
					"  - `not_a_cluster`: placement groups that no `ray_virtual_cluster` can adopt (another name, or a shape it " +
					"cannot declare). They are reported as warnings with their shape and the reason, never as results, so " +
					"`-generate-config-out` writes no import that would fail.",
				Validators: []validator.List{listvalidator.ValueStringsAre(stringvalidator.OneOf(ownershipClasses...))},
			},
			"owner_ids": listschema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "The `owner_id` values of the clusters \"this state\" holds (a list block cannot read a state: " +
					"pass them in, e.g. from `terraform output` or `terraform state show`). Records naming one of them are " +
					"`this_state` (Ray keeps only their digests, which the filter compares); without `owner_ids` no cluster is.",
			},
		},
	}
}

func (l *virtualClusterList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	ctx = session.ReadOnly(ctx, "query")
	var cfg virtualClusterListModel
	var diags diag.Diagnostics
	diags.Append(req.Config.Get(ctx, &cfg)...)
	if diags.HasError() || !requireConfigured(l.data, &diags) {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	ns := cfg.Namespace.ValueString()
	if ns == "" {
		ns = l.data.Namespace
	}
	classes := slices.Clone(ownershipClasses)
	if !cfg.Ownership.IsNull() {
		classes = nil
		diags.Append(cfg.Ownership.ElementsAs(ctx, &classes, false)...)
	}
	var owners []string
	if !cfg.OwnerIDs.IsNull() {
		diags.Append(cfg.OwnerIDs.ElementsAs(ctx, &owners, false)...)
	}
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	readCtx, cancel := context.WithTimeout(ctx, session.ReadTimeout)
	defer cancel()
	live, err := l.data.SharedGroups(readCtx)
	if err != nil {
		diags.AddError("Cannot list placement groups", session.ErrorDetail(err))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	reservations := l.data.ReadReservations(readCtx, ns) // beside the records: the batcher joins them into one job
	cands, records, err := l.data.ReadCandidates(readCtx, ns, session.ListCandidates(live, cfg.NamePrefix.ValueString()))
	resv := <-reservations
	if err == nil {
		err = resv.Err
	}
	if err != nil {
		diags.AddError("Cannot read the virtual clusters' records", session.ErrorDetail(err))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	tflog.Info(ctx, "listing virtual clusters", map[string]any{"namespace": ns, "candidates": len(cands), "classes": classes})
	var results []list.ListResult
	for i, c := range cands {
		rec := records[i]
		problem := ""
		if rec == nil {
			problem = session.AdoptProblem(c)
		}
		class := session.ListClass(rec, owners, problem)
		if !slices.Contains(classes, class) {
			continue
		}
		if class == session.NotACluster {
			results = append(results, list.ListResult{Diagnostics: diag.Diagnostics{diag.NewWarningDiagnostic(
				fmt.Sprintf("Placement groups that no ray_virtual_cluster can adopt: %s", c.Name), session.NotAClusterDetail(c, ns, problem))}})
			continue
		}
		if req.Limit > 0 && int64(countResults(results)) >= req.Limit {
			break
		}
		results = append(results, l.listResult(ctx, req, ns, c, rec, class))
	}
	if d := l.quotaReport(ctx, ns); d != nil {
		results = append(results, list.ListResult{Diagnostics: diag.Diagnostics{d}})
	}
	if slices.Contains(classes, session.OwnedNone) {
		unowned := placement.UnownedReservations(resv.Listed, ns, cfg.NamePrefix.ValueString(), live, session.GroupsIn(cands), session.RecordsByName(cands, records))
		for _, d := range unownedReservationWarnings(unowned) {
			results = append(results, list.ListResult{Diagnostics: diag.Diagnostics{d}})
		}
	}
	stream.Results = slices.Values(results)
}

// quotaReport is the listed namespace's quota and what each holder holds
// of it, for a namespace that has one (nil otherwise).
func (l *virtualClusterList) quotaReport(ctx context.Context, ns string) diag.Diagnostic {
	note, err := l.data.QuotaNote(ctx, ns)
	if err != nil || note == nil {
		return nil
	}
	summary := "Namespace quota: " + ns
	used, labels, err := l.data.QuotaHeld(ctx, ns, note.QuotaCaps)
	if err != nil {
		return diag.NewWarningDiagnostic(summary, fmt.Sprintf("Ray namespace %s has the quota %s; what it holds could not be read: %v",
			ns, note.Describe(), err))
	}
	return diag.NewWarningDiagnostic(summary, fmt.Sprintf("Ray namespace %s has the quota %s (ray_namespace_quota, owner %s…). "+
		"In use: %s. Holders: %s.", ns, note.Describe(), record.OwnerPrefix(note.Owner),
		strings.Join(note.Use(used, labels), ", "), contract.DescribeQuotaHolders(used)))
}

// countResults counts the results that are clusters (not warnings).
func countResults(results []list.ListResult) int {
	n := 0
	for _, r := range results {
		if r.Identity != nil {
			n++
		}
	}
	return n
}

// listResult is one cluster's result: its identity, a display name saying
// who owns it, and, with include_resource, the state import gives it.
func (l *virtualClusterList) listResult(ctx context.Context, req list.ListRequest, ns string, c session.ListCandidate, rec *record.Manifest, class string) list.ListResult {
	result := req.NewListResult(ctx)
	m := virtualClusterModel{Name: types.StringValue(c.Name), Namespace: types.StringValue(ns)}
	result.Diagnostics.Append(result.Identity.Set(ctx, virtualClusterIdentity{Namespace: m.Namespace, Name: m.Name})...)
	result.DisplayName = session.ListDisplayName(c, rec, class)
	if !req.IncludeResource {
		return result
	}
	m.BundleCtPerNodeList = types.ListNull(types.Int64Type)
	spec, ok := restoreDeclaration(ctx, l.data, &m, c.Groups, rec, &result.Diagnostics)
	if !ok {
		return result
	}
	fillListedComputed(ctx, &m, spec, c.Groups, rec, &result.Diagnostics)
	if rec == nil && spec.UseUnifiedPG {
		result.Diagnostics.AddWarning(fmt.Sprintf("Check placement_group_strategy of %s before importing it", c.Name),
			fmt.Sprintf("%q has no record and Ray's state API does not report a placement group's strategy, so the listed "+
				"placement_group_strategy is the default (%s). The import reads the real one from the group; if it differs, "+
				"the plan after the import replaces the cluster. Read it with ray.util.placement_group_table(pg)[\"strategy\"] "+
				"and set it in the generated configuration first.", c.Name, spec.Strategy))
	}
	omitDefaults(&m)
	t, d := req.ResourceSchema.TypeAtPath(ctx, path.Root("timeouts"))
	result.Diagnostics.Append(d...)
	if tt, isTimeouts := t.(timeouts.Type); isTimeouts {
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(tt.AttrTypes)}
	}
	if !result.Diagnostics.HasError() {
		result.Diagnostics.Append(result.Resource.Set(ctx, &m)...)
	}
	return result
}

// fillListedComputed sets the computed attributes of a listed cluster from
// what was read: the live groups, and the placement its record keeps (null
// without a record; import probes the groups for it).
func fillListedComputed(ctx context.Context, m *virtualClusterModel, spec clusterspec.Spec, live []raystate.PlacementGroup,
	rec *record.Manifest, diags *diag.Diagnostics,
) {
	byName := map[string]raystate.PlacementGroup{}
	for _, g := range live {
		byName[g.Name] = g
	}
	strategies := map[string]string{}
	if rec != nil {
		for _, g := range rec.Groups {
			strategies[g.Name] = g.Strategy
		}
	}
	var groups []attr.Value
	for _, want := range spec.Groups() {
		g, ok := byName[want.Name]
		if !ok {
			continue
		}
		groups = append(groups, groupValue(want, g.PlacementGroupID, g.State, strategies[want.Name], len(g.Bundles), ""))
	}
	m.PlacementGroups = mustList(groupObjectType, groups, diags)
	m.WorldSize = types.Int64Value(int64(spec.WorldSize()))
	m.NodeCount = types.Int64Value(int64(spec.NodeCount()))
	m.TopologyAssignments = topologyAssignments(spec, live, "")
	m.OwnerID, m.MasterAddress, m.MasterPort = types.StringNull(), types.StringNull(), types.Int64Null()
	m.Bundles = types.ListNull(bundleObjectType)
	m.SortedBundleIndices = types.ListNull(types.Int64Type)
	m.NVLinkDomainPerBundle = types.ListNull(types.StringType)
	m.CapacityCheck = types.StringNull()              // import does not restore it either: the provider's default applies
	m.RecoveryTimeout = timetypes.NewGoDurationNull() // nor this: a plan-only setting
	if rec == nil {
		return
	}
	if rec.Owner != "" { // as import gives it: owned by no state here until an apply; the token stays in Ray
		m.OwnerID = types.StringValue(importPendingOwner)
	}
	if len(rec.Bundles) == 0 {
		return
	}
	bundles := make([]attr.Value, 0, len(rec.Bundles))
	domains := make([]string, len(rec.Bundles))
	for _, b := range rec.Bundles {
		bundles = append(bundles, bundleValue(record.PlacedBundle{Rank: b.Rank, Group: b.PlacementGroup, BundleIndex: b.BundleIndex,
			GlobalIndex: b.GlobalIndex, NodeID: b.NodeID, NodeIP: b.NodeIP, GPUID: b.GPUID,
			NVLinkDomain: b.NVLinkDomain, TopoRank: b.TopoRank, Port: b.Port}, diags))
		if b.GlobalIndex >= 0 && b.GlobalIndex < len(domains) {
			domains[b.GlobalIndex] = b.NVLinkDomain
		}
	}
	var d diag.Diagnostics
	m.Bundles = mustList(bundleObjectType, bundles, diags)
	m.SortedBundleIndices, d = types.ListValueFrom(ctx, types.Int64Type, rec.SortedBundleIndices)
	diags.Append(d...)
	m.NVLinkDomainPerBundle, d = types.ListValueFrom(ctx, types.StringType, domains)
	diags.Append(d...)
	m.MasterAddress, m.MasterPort = types.StringValue(rec.MasterAddress), types.Int64Value(int64(rec.MasterPort))
}

// omitDefaults leaves out the arguments that are at their schema default, so
// that terraform query -generate-config-out writes only what differs from
// the defaults, as a person would (pinning = "node" written out would even
// warn that it has no effect). Once imported the defaults fill them in
// again, so the plan stays empty.
func omitDefaults(m *virtualClusterModel) {
	d := clusterspec.Defaults()
	if m.UseGPUs.ValueBool() == d.UseGPUs {
		m.UseGPUs = types.BoolNull()
	}
	if m.NumGPUsPerNode.ValueInt64() == int64(d.NumGPUsPerNode) {
		m.NumGPUsPerNode = types.Int64Null()
	}
	if m.MaxColocatedWorkerGroups.ValueInt64() == int64(d.MaxColocatedWorkerGroups) {
		m.MaxColocatedWorkerGroups = types.Int64Null()
	}
	if m.PlacementGroupStrategy.ValueString() == d.Strategy {
		m.PlacementGroupStrategy = types.StringNull()
	}
	if m.UseUnifiedPG.ValueBool() == d.UseUnifiedPG {
		m.UseUnifiedPG = types.BoolNull()
	}
	if m.PortRangeLow.ValueInt64() == int64(d.Ports.Low) {
		m.PortRangeLow = types.Int64Null()
	}
	if m.PortRangeHigh.ValueInt64() == int64(d.Ports.High) {
		m.PortRangeHigh = types.Int64Null()
	}
	if m.ReadyTimeout.ValueString() == clusterspec.DefaultReadyTimeoutText {
		m.ReadyTimeout = timetypes.NewGoDurationNull()
	}
	if m.SelectNodes.ValueBool() == d.SelectNodes {
		m.SelectNodes = types.BoolNull()
	}
	if m.Pinning.ValueString() == d.Pinning {
		m.Pinning = types.StringNull()
	}
	if !m.ExclusiveNodes.ValueBool() {
		m.ExclusiveNodes = types.BoolNull()
	}
}
