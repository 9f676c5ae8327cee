package resources

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

// sameFloatsKeepState keeps the state's constraint maps when the configured
// ones hold the same float64 values. A value computed by a provider function
// (e.g. 0.001 as a binary float) and the same value read back from state (the
// decimal 0.001) differ in Terraform's arbitrary-precision numbers, which
// would otherwise plan a perpetual change.
type sameFloatsKeepState struct{}

func (sameFloatsKeepState) Description(context.Context) string {
	return "keeps the prior value when the configured numbers are equal as float64"
}

func (m sameFloatsKeepState) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

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
