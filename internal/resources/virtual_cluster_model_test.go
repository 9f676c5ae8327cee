package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// TestSameModel: Read and ModifyPlan skip writing a model equal to the one
// the framework holds, so sameModel must see a change in any attribute,
// nested ones included.
func TestSameModel(t *testing.T) {
	group := func(drift string) attr.Value {
		return types.ObjectValueMust(groupObjectType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue("c-node0"), "id": types.StringValue("01"), "state": types.StringValue("CREATED"),
			"strategy": types.StringValue("PACK"), "node_index": types.Int64Value(0), "bundle_count": types.Int64Value(2),
			"drift": types.StringValue(drift)})
	}
	// Every attribute null, as the framework decodes it (typed, unlike a
	// zero virtualClusterModel).
	ctx := context.Background()
	var a virtualClusterModel
	if d := nullState(ctx).Get(ctx, &a); d.HasError() {
		t.Fatal(d)
	}
	a.Name = types.StringValue("c")
	a.PlacementGroups = types.ListValueMust(groupObjectType, []attr.Value{group("")})
	b := a
	if !sameModel(a, b) {
		t.Fatal("a copy differs")
	}
	b.PlacementGroups = types.ListValueMust(groupObjectType, []attr.Value{group("bundle 0 moved")})
	if sameModel(a, b) {
		t.Fatal("a drift inside placement_groups went unseen")
	}
	b = a
	b.Namespace = types.StringValue("other")
	if sameModel(a, b) {
		t.Fatal("a changed namespace went unseen")
	}
}

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

// nullState is the resource's state with every attribute null, typed as the
// framework decodes it (unlike a zero virtualClusterModel).
func nullState(ctx context.Context) tfsdk.State {
	var sch resource.SchemaResponse
	(&virtualClusterResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx).(tftypes.Object)
	nulls := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		nulls[name] = tftypes.NewValue(at, nil)
	}
	return tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(typ, nulls)}
}
