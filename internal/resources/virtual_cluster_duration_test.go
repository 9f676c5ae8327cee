package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

func timeoutsValue(create string) timeouts.Value {
	types4 := map[string]attr.Type{"create": types.StringType, "update": types.StringType, "delete": types.StringType, "read": types.StringType}
	return timeouts.Value{Object: types.ObjectValueMust(types4, map[string]attr.Value{
		"create": types.StringValue(create), "update": types.StringNull(), "delete": types.StringNull(), "read": types.StringNull(),
	})}
}

// Durations compare as lengths of time: "3m" is "180s", and unparsable,
// null or unknown values are only equal to themselves.
func TestSameAttributeDurations(t *testing.T) {
	cases := []struct {
		a, b attr.Value
		same bool
	}{
		{goDuration("180s"), goDuration("3m"), true},
		{goDuration("1h"), goDuration("60m0s"), true},
		{goDuration("180s"), goDuration("4m"), false},
		{goDuration("soon"), goDuration("later"), false},
		{goDuration("soon"), goDuration("soon"), true},
		{goDuration("180s"), timetypes.NewGoDurationNull(), false},
		{timetypes.NewGoDurationNull(), timetypes.NewGoDurationNull(), true},
		{timeoutsValue("180s"), timeoutsValue("3m"), true},
		{timeoutsValue("180s"), timeoutsValue("4m"), false},
		{timeoutsValue("180s"), timeouts.Value{Object: types.ObjectNull(timeoutsValue("1s").AttributeTypes(context.Background()))}, false},
		{types.StringValue("180s"), types.StringValue("3m"), false}, // a plain string is compared as written
	}
	for _, c := range cases {
		if got := sameAttribute(c.a, c.b); got != c.same {
			t.Errorf("sameAttribute(%v, %v) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// A configuration that only respells ready_timeout or a timeout plans no
// change: configEqual holds, nothing is replaced, and the plan keeps the
// prior spelling (which Terraform accepts for an equivalent configuration).
func TestPlanRespelledDurationsChangeNothing(t *testing.T) {
	state := selectingState(t)
	state.Timeouts = timeoutsValue("10m")
	plan := state
	plan.ReadyTimeout, plan.Timeouts = goDuration("3m"), timeoutsValue("600s")
	if !configEqual(plan, state) || shapeChanged(plan, state) {
		t.Fatalf("configEqual = %v, shapeChanged = %v", configEqual(plan, state), shapeChanged(plan, state))
	}
	p := newPlanning(state, plan)
	p.compareWithState()
	if p.replacing || len(p.resp.RequiresReplace) != 0 {
		t.Fatalf("replacing=%v %v", p.replacing, p.resp.RequiresReplace)
	}
	if !p.plan.Timeouts.Equal(state.Timeouts) {
		t.Errorf("timeouts planned %v, want the prior %v", p.plan.Timeouts, state.Timeouts)
	}
	plan.ReadyTimeout = goDuration("4m")
	if configEqual(plan, state) {
		t.Error("a different ready_timeout must be a change")
	}
	if got := changedAttributes(plan, state, inPlaceAttributes); len(got) != 1 || got[0] != "ready_timeout" {
		t.Errorf("changed %v, want [ready_timeout]", got)
	}
}

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

// Import and the model conversions keep ready_timeout as declared, typed as
// a duration; the spec reads the same length of time from either spelling.
func TestReadyTimeoutConversions(t *testing.T) {
	ctx := context.Background()
	m := selectingState(t)
	spec := clusterspec.Defaults()
	spec.Name, spec.BundleCtPerNode, spec.ReadyTimeoutText = "vc", []int{1}, "3m"
	var diags diag.Diagnostics
	setConfigFromSpec(ctx, &m, spec, &diags)
	if diags.HasError() || m.ReadyTimeout.ValueString() != "3m" {
		t.Fatalf("imported ready_timeout %q (%v), want 3m", m.ReadyTimeout.ValueString(), diags)
	}
	if got, d := m.ReadyTimeout.ValueGoDuration(); d.HasError() || got != clusterspec.DefaultReadyTimeout {
		t.Fatalf("ready_timeout as a duration: %v %v", got, d)
	}
	back, known, d := clusterSpec(ctx, m)
	if !known || d.HasError() || back.ReadyTimeout != clusterspec.DefaultReadyTimeout || back.ReadyTimeoutText != "3m" {
		t.Fatalf("spec ready timeout %v %q (%v %v)", back.ReadyTimeout, back.ReadyTimeoutText, known, d)
	}
	spec.ReadyTimeoutText = ""
	setConfigFromSpec(ctx, &m, spec, &diags)
	if m.ReadyTimeout.ValueString() != clusterspec.DefaultReadyTimeoutText {
		t.Fatalf("imported default ready_timeout %q", m.ReadyTimeout.ValueString())
	}
}
