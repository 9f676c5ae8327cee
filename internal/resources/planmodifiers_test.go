package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The ready_timeout plan modifier keeps the prior value for the same
// duration and leaves any other plan alone.
func TestSameDurationKeepsState(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name        string
		state, plan types.String
		want        types.String
	}{
		{"respelled", types.StringValue("180s"), types.StringValue("3m"), types.StringValue("180s")},
		{"changed", types.StringValue("180s"), types.StringValue("4m"), types.StringValue("4m")},
		{"create", types.StringNull(), types.StringValue("3m"), types.StringValue("3m")},
		{"unknown", types.StringValue("180s"), types.StringUnknown(), types.StringUnknown()},
		{"unparsable", types.StringValue("soon"), types.StringValue("later"), types.StringValue("later")},
	}
	for _, c := range cases {
		resp := &planmodifier.StringResponse{PlanValue: c.plan}
		keepSameDuration.PlanModifyString(ctx, planmodifier.StringRequest{StateValue: c.state, PlanValue: c.plan, ConfigValue: c.plan}, resp)
		if !resp.PlanValue.Equal(c.want) {
			t.Errorf("%s: planned %v, want %v", c.name, resp.PlanValue, c.want)
		}
	}
}
