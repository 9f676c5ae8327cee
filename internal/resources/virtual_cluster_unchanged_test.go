package resources

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// alwaysUnknown is a plan modifier that changes an unchanged value.
type alwaysUnknown struct{ modifierDescription }

func (alwaysUnknown) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.PlanValue = types.StringUnknown()
}

// TestUnchangedPlanSchema: the schema is one the shortcuts answer for (else
// every plan and refresh silently goes to the framework), and a plan
// modifier not known to keep an equal value turns them off.
func TestUnchangedPlanSchema(t *testing.T) {
	s := unchangedClusterSchema()
	if s == nil {
		t.Fatal("the schema has what PlanUnchangedCluster cannot plan: every plan goes to the framework")
	}
	if !s.customTyped["ready_timeout"] || s.customTyped["name"] || s.customTyped["bundles"] {
		t.Errorf("custom-typed attributes: %v", s.customTyped)
	}
	known := schema.StringAttribute{PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	unknown := schema.StringAttribute{PlanModifiers: []planmodifier.String{alwaysUnknown{"marks the value unknown"}}}
	nested := schema.ListNestedAttribute{NestedObject: schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{"inner": unknown}}}
	for _, c := range []struct {
		attr schema.Attribute
		want bool
	}{{known, true}, {unknown, false}, {nested, false}, {schema.ListAttribute{ElementType: types.StringType}, true}} {
		if got := keepsEqualValues(c.attr); got != c.want {
			t.Errorf("keepsEqualValues(%#v) = %v", c.attr, got)
		}
	}
}
