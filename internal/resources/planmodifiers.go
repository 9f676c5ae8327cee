package resources

import (
	"context"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"

	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// modifierDescription is a plan modifier's description, plain and Markdown.
type modifierDescription string

func (d modifierDescription) Description(context.Context) string { return string(d) }

func (d modifierDescription) MarkdownDescription(context.Context) string { return string(d) }

// keepSameFloats and keepSameDuration are the plan modifiers of this file.
var (
	keepSameFloats   = sameFloatsKeepState{"keeps the prior value when the configured numbers are equal as float64"}
	keepSameDuration = sameDurationKeepsState{"keeps the prior value when the configured duration is the same length of time"}
)

// resizeDescription is the description of resizeOrReplace.
const resizeDescription = "Appending logical nodes to, or dropping the last ones of, a per-node cluster resizes it in place; " +
	"any other change replaces it."

// resizeOrReplace replaces the cluster when its logical nodes change in a
// way session.PlanResize cannot apply in place, or are not known yet. It
// reads the whole plan and state: whether a node list's change resizes
// depends on the others and on use_unified_pg and select_nodes.
var resizeOrReplace = listplanmodifier.RequiresReplaceIf(func(ctx context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
	var plan, state virtualClusterModel
	if req.Plan.Get(ctx, &plan).HasError() || req.State.Get(ctx, &state).HasError() {
		resp.RequiresReplace = true
		return
	}
	r, known := resizeOf(ctx, state, plan)
	resp.RequiresReplace = !known || r.Replace != ""
}, resizeDescription, resizeDescription)

// resizeOf is session.PlanResize of state's nodes to plan's; known is
// false while the plan's shape is not known.
func resizeOf(ctx context.Context, state, plan virtualClusterModel) (session.Resize, bool) {
	if plan.TopologyLabels.IsUnknown() {
		// ModifyPlan resolves it later; a change of it replaces by itself (planTopologyLabels).
		plan.TopologyLabels = state.TopologyLabels
	}
	planned, known, d := clusterSpec(ctx, plan)
	if !known || d.HasError() {
		return session.Resize{}, false
	}
	upgradeState(&state)
	prior, known, d := clusterSpec(ctx, state)
	if !known || d.HasError() {
		return session.Resize{}, false
	}
	return session.PlanResize(prior, planned), true
}

// sameFloatsKeepState keeps the state's constraint maps when the configured
// ones hold the same float64 values. A value computed by a provider function
// (e.g. 0.001 as a binary float) and the same value read back from state (the
// decimal 0.001) differ in Terraform's arbitrary-precision numbers, which
// would otherwise plan a perpetual change.
type sameFloatsKeepState struct{ modifierDescription }

func (sameFloatsKeepState) PlanModifyList(ctx context.Context, req planmodifier.ListRequest, resp *planmodifier.ListResponse) {
	if req.StateValue.IsNull() || req.PlanValue.IsNull() || req.PlanValue.IsUnknown() || req.StateValue.Equal(req.PlanValue) {
		return
	}
	var plan, state []map[string]float64
	if req.PlanValue.ElementsAs(ctx, &plan, false).HasError() || req.StateValue.ElementsAs(ctx, &state, false).HasError() {
		return
	}
	if len(plan) != len(state) {
		return
	}
	for i := range plan {
		if len(plan[i]) != len(state[i]) {
			return
		}
		for k, v := range plan[i] {
			s, ok := state[i][k]
			if !ok || math.Abs(s-v) > 1e-12*math.Max(1, math.Abs(v)) {
				return
			}
		}
	}
	resp.PlanValue = req.StateValue
}

// sameDurationKeepsState keeps the prior duration when the configured one is
// the same length of time spelled otherwise ("3m" for "180s"): Terraform
// accepts the prior value as the plan of an equivalent configuration, so the
// plan is empty. The framework applies a type's semantic equality only to
// what Create, Update and Read return, not to a plan.
type sameDurationKeepsState struct{ modifierDescription }

func (sameDurationKeepsState) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.Equal(req.PlanValue) {
		return
	}
	if sameDuration(timetypes.GoDuration{StringValue: req.PlanValue}, timetypes.GoDuration{StringValue: req.StateValue}) {
		resp.PlanValue = req.StateValue
	}
}

// sameDuration reports whether two durations are the same length of time,
// as timetypes' semantic equality has it. Null, unknown and unparsable values
// are the same only when equal as written (the semantic equality would read
// any two unparsable values as equal zeros).
func sameDuration(a, b timetypes.GoDuration) bool {
	if a.Equal(b) {
		return true
	}
	if a.IsNull() || a.IsUnknown() || b.IsNull() || b.IsUnknown() {
		return false
	}
	da, errA := time.ParseDuration(a.ValueString())
	db, errB := time.ParseDuration(b.ValueString())
	return errA == nil && errB == nil && da == db
}
