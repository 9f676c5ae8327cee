package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
	var sch resource.SchemaResponse
	(&virtualClusterResource{}).Schema(ctx, resource.SchemaRequest{}, &sch)
	typ := sch.Schema.Type().TerraformType(ctx).(tftypes.Object)
	nulls := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		nulls[name] = tftypes.NewValue(at, nil)
	}
	var a virtualClusterModel
	if d := (tfsdk.State{Schema: sch.Schema, Raw: tftypes.NewValue(typ, nulls)}).Get(ctx, &a); d.HasError() {
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
