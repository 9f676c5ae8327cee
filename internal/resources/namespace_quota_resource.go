package resources

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// Ray's resource names for the quota's gpus and cpus arguments.
const (
	resourceGPU = "GPU"
	resourceCPU = "CPU"
)

var (
	_ resource.ResourceWithConfigValidators = (*namespaceQuotaResource)(nil)
	_ resource.ResourceWithImportState      = (*namespaceQuotaResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*namespaceQuotaResource)(nil)
)

// NewNamespaceQuotaResource is ray_namespace_quota: a team's cap on what
// the placement groups of one Ray namespace hold.
func NewNamespaceQuotaResource() resource.Resource { return &namespaceQuotaResource{} }

type namespaceQuotaResource struct{ data *session.Session }

type namespaceQuotaModel struct {
	ID              types.String  `tfsdk:"id"`
	Namespace       types.String  `tfsdk:"namespace"`
	GPUs            types.Float64 `tfsdk:"gpus"`
	CPUs            types.Float64 `tfsdk:"cpus"`
	Resources       types.Map     `tfsdk:"resources"`
	NodeLabelLimits types.List    `tfsdk:"node_label_limits"`
	OwnerID         types.String  `tfsdk:"owner_id"`
}

func (r *namespaceQuotaResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_namespace_quota"
}

func (r *namespaceQuotaResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = sessionFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *namespaceQuotaResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A team's cap on what the placement groups of one Ray namespace hold: GPUs, CPUs and custom " +
			"resources. Every plan of a `ray_virtual_cluster` that creates or replaces a cluster in that namespace checks it, " +
			"and the create checks it again atomically, under the lock that guards the reservations, so two states racing past " +
			"the last GPUs of one quota cannot both land. Every group of the namespace counts, virtual cluster or not. A quota " +
			"changes no placement group: lowering it below what the namespace holds warns at plan and refuses the next create.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The Ray namespace.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "The Ray namespace capped: the provider's `namespace` for its own clusters. One quota per " +
					"namespace. Validated as the provider's `namespace`: " + clusterspec.NamespaceRule + ".",
				Required:      true,
				Validators:    []validator.String{stringvalidator.RegexMatches(clusterspec.NamespacePattern, clusterspec.NamespaceRule)},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"gpus":              gpusAttribute("the namespace's groups"),
			"cpus":              cpusAttribute("the namespace's groups"),
			"resources":         resourcesAttribute("the namespace's groups"),
			"node_label_limits": nodeLabelLimitsAttribute(),
			"owner_id": schema.StringAttribute{
				MarkdownDescription: "The token that makes this state the quota's owner: another state's `ray_namespace_quota` " +
					"of the same namespace is refused. `\"\"` after an import, until the apply that takes the quota over.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *namespaceQuotaResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{resourcevalidator.AtLeastOneOf(path.MatchRoot("gpus"), path.MatchRoot("cpus"),
		path.MatchRoot("resources"), path.MatchRoot("node_label_limits"))}
}

// caps are the quota's limits by Ray resource name, in all and per label limit.
func (m namespaceQuotaModel) caps(ctx context.Context, diags *diag.Diagnostics) *contract.QuotaCaps {
	return &contract.QuotaCaps{Limits: limitsOf(ctx, m.GPUs, m.CPUs, m.Resources, diags),
		LabelLimits: labelLimitsOf(ctx, m.NodeLabelLimits, diags)}
}

// setCaps fills the model's limit arguments from a note's.
func (m *namespaceQuotaModel) setCaps(ctx context.Context, caps contract.QuotaCaps, diags *diag.Diagnostics) {
	m.GPUs, m.CPUs, m.Resources = limitValues(ctx, caps.Limits, diags)
	m.NodeLabelLimits = labelLimitValues(ctx, caps.LabelLimits, diags)
}

func (r *namespaceQuotaResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m namespaceQuotaModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	owner, err := record.NewOwnerToken()
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the namespace quota", err.Error())
		return
	}
	m.OwnerID, m.ID = types.StringValue(owner), m.Namespace
	if r.write(ctx, m, m.caps(ctx, &resp.Diagnostics), false, &resp.Diagnostics) {
		// Stored in Ray (the note may have failed: then Terraform taints it and the next apply writes both again).
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *namespaceQuotaResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, prior namespaceQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	claim := prior.OwnerID.ValueString() == "" // imported: this apply takes the quota over
	m.OwnerID = prior.OwnerID
	if claim {
		owner, err := record.NewOwnerToken()
		if err != nil {
			resp.Diagnostics.AddError("Cannot write the namespace quota", err.Error())
			return
		}
		m.OwnerID = types.StringValue(owner)
	}
	if r.write(ctx, m, m.caps(ctx, &resp.Diagnostics), claim, &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *namespaceQuotaResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m namespaceQuotaModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	// The quota first: a note left behind only makes plans refuse too much,
	// and the next import or create of the namespace's quota replaces it.
	if !r.write(ctx, m, nil, false, &resp.Diagnostics) {
		return
	}
	if err := r.data.DeleteQuotaNote(ctx, m.Namespace.ValueString()); err != nil {
		resp.Diagnostics.AddWarning("Namespace quota note left behind",
			fmt.Sprintf("The quota of %s is deleted, but its note for plans could not be removed (%v): plans of the namespace "+
				"still check the old limits until the job record %s is deleted.", m.Namespace.ValueString(), err,
				session.QuotaNoteID(m.Namespace.ValueString())))
	}
}

// write stores the quota's limits (nil: deletes the quota) in Ray's KV and,
// for a quota that stays, its note. It reports whether the quota is in Ray
// as asked; a failed note is then an error of its own.
func (r *namespaceQuotaResource) write(ctx context.Context, m namespaceQuotaModel, caps *contract.QuotaCaps, claim bool, diags *diag.Diagnostics) bool {
	if diags.HasError() {
		return false
	}
	ns, owner := m.Namespace.ValueString(), m.OwnerID.ValueString()
	what := "Cannot write the namespace quota"
	if caps == nil {
		what = "Cannot delete the namespace quota"
	}
	if err := r.data.StoreQuota(ctx, ns, owner, caps, claim); err != nil {
		if contract.IsKind(err, contract.KindConflict) {
			diags.AddAttributeError(path.Root("namespace"), "Ray namespace already has a quota",
				fmt.Sprintf("%v\n\nNothing was changed. %s", err, contract.Fix(err)))
			return false
		}
		diags.AddError(what, session.ErrorDetail(err))
		return false
	}
	if caps == nil {
		return true
	}
	if err := r.data.RecordQuotaNote(ctx, ns, owner, *caps); err != nil {
		diags.AddError(what, fmt.Sprintf("The quota is stored in Ray, and every create in %s checks it, but the note that lets plans "+
			"check it too could not be left: %v. Apply again.", ns, err))
	}
	return true
}

// Read follows the quota's note: changed outside this state, its limits
// show the drift. Without a note it asks the KV (a read-only job): a quota
// still there plans the update that writes its note again; none, and the
// quota is gone from state.
func (r *namespaceQuotaResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	ctx = session.ReadOnly(ctx, "refresh")
	var m namespaceQuotaModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	ns := m.Namespace.ValueString()
	note, err := r.readNote(ctx, ns, &resp.Diagnostics)
	if err != nil {
		return
	}
	if note == nil {
		resp.State.RemoveResource(ctx)
		return
	}
	m.setCaps(ctx, note.QuotaCaps, &resp.Diagnostics) // a quota in the KV without its note shows no limit

	if owner := m.OwnerID.ValueString(); owner != "" && !record.OwnedBy(note.Owner, owner) {
		resp.Diagnostics.AddWarning("Namespace quota declared by another state",
			fmt.Sprintf("The quota of Ray namespace %s now belongs to another state (owner %s…): this state's destroy leaves it.",
				ns, record.OwnerPrefix(note.Owner)))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readNote is the quota of ns: its note, or, with none, the KV's (Limits
// nil: a quota whose note is missing); nil when the namespace has no quota.
func (r *namespaceQuotaResource) readNote(ctx context.Context, ns string, diags *diag.Diagnostics) (*session.QuotaNote, error) {
	note, err := r.data.ReadQuota(ctx, ns)
	if err != nil && !failUnanswered(r.data, diags, err) {
		diags.AddError("Cannot read the namespace quota", err.Error())
	}
	return note, err
}

// ImportState takes the namespace. The state holds owner_id "" until the
// apply that takes the quota over (the plan shows it): never the former
// owner's token.
func (r *namespaceQuotaResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ctx = session.ReadOnly(ctx, "import")
	note, err := r.readNote(ctx, req.ID, &resp.Diagnostics)
	if err != nil {
		return
	}
	if note == nil {
		resp.Diagnostics.AddError("Cannot import the namespace quota",
			fmt.Sprintf("Ray namespace %q has no quota this provider declared.", req.ID))
		return
	}
	m := namespaceQuotaModel{ID: types.StringValue(req.ID), Namespace: types.StringValue(req.ID), OwnerID: types.StringValue("")}
	m.setCaps(ctx, note.QuotaCaps, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// ModifyPlan records the planned limits for the plans of the namespace's
// clusters, shows the takeover of an imported quota, and warns when a change
// lowers a limit below what the namespace holds: nothing is removed, and the
// namespace's next create is refused.
func (r *namespaceQuotaResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	ctx = session.ReadOnly(ctx, "plan")
	if !r.data.Configured() || req.Plan.Raw.IsNull() || !req.Plan.Raw.IsFullyKnown() {
		return
	}
	var plan, state namespaceQuotaModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	ns := plan.Namespace.ValueString()
	caps := plan.caps(ctx, &resp.Diagnostics)
	r.data.PlanQuota(ns, caps)
	if !req.State.Raw.IsNull() && state.OwnerID.ValueString() == "" {
		plan.OwnerID = types.StringUnknown()
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		resp.Diagnostics.AddWarning("Apply takes over the imported namespace quota",
			fmt.Sprintf("The apply makes this state the owner of the quota of Ray namespace %s; until then its former owner keeps it.", ns))
	}
	if !req.State.Raw.IsNull() && !caps.Lowers(state.caps(ctx, &resp.Diagnostics)) {
		return
	}
	addIssues(&resp.Diagnostics, r.data.CheckQuotaLowered(ctx, ns, *caps))
}

// notGPUOrCPU keeps GPU and CPU in their own arguments.
type notGPUOrCPU struct{}

func (notGPUOrCPU) Description(context.Context) string {
	return "names a custom resource (GPU and CPU have arguments of their own)"
}
func (v notGPUOrCPU) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (notGPUOrCPU) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if k := req.ConfigValue.ValueString(); k == resourceGPU || k == resourceCPU {
		resp.Diagnostics.AddAttributeError(req.Path, "Use gpus or cpus",
			fmt.Sprintf("resources names %q; set it with the %s argument.", k, strings.ToLower(k)+"s"))
	}
}
