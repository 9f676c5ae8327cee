package resources

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// keepEqualValues are the plan modifiers known to leave a planned value that
// equals the prior state's as it is, and to ask for no replacement then:
// the framework's RequiresReplace(If) and UseStateForUnknown (they return
// at once for an equal, known value) and the provider's own two.
var keepEqualValues = map[string]bool{
	"boolplanmodifier.requiresReplaceIfModifier": true, "int64planmodifier.requiresReplaceIfModifier": true,
	"listplanmodifier.requiresReplaceIfModifier": true, "mapplanmodifier.requiresReplaceIfModifier": true,
	"objectplanmodifier.requiresReplaceIfModifier": true, "stringplanmodifier.requiresReplaceIfModifier": true,
	"listplanmodifier.useStateForUnknownModifier": true, "mapplanmodifier.useStateForUnknownModifier": true,
	"stringplanmodifier.useStateForUnknownModifier": true,
	"resources.sameDurationKeepsState":              true, "resources.sameFloatsKeepState": true,
}

// TestUnchangedPlanKeepsTheSchemasModifiers: PlanUnchangedCluster skips the
// framework's run of every plan modifier on a plan equal to the prior state,
// which is right only while each modifier keeps an equal value. A new kind of
// modifier fails here until it is checked and listed.
func TestUnchangedPlanKeepsTheSchemasModifiers(t *testing.T) {
	if unchangedPlanSchema() == nil {
		t.Fatal("the schema has what PlanUnchangedCluster cannot plan: every plan goes to the framework")
	}
	var sch resource.SchemaResponse
	(&virtualClusterResource{}).Schema(context.Background(), resource.SchemaRequest{}, &sch)
	var check func(where string, attrs map[string]schema.Attribute)
	check = func(where string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			mods := []reflect.Value{reflect.ValueOf(a).FieldByName("PlanModifiers")}
			if nested := reflect.ValueOf(a).FieldByName("NestedObject"); nested.IsValid() {
				mods = append(mods, nested.FieldByName("PlanModifiers"))
			}
			for _, m := range mods {
				for i := 0; m.IsValid() && i < m.Len(); i++ {
					if kind := fmt.Sprintf("%T", m.Index(i).Interface()); !keepEqualValues[kind] {
						t.Errorf("%s%s: plan modifier %s is not known to keep an unchanged value", where, name, kind)
					}
				}
			}
			check(where+name+".", nestedAttributes(a))
		}
	}
	check("", sch.Schema.Attributes)
	for name, b := range sch.Schema.Blocks {
		if !plainBlock(b) {
			t.Errorf("block %s is not plain", name)
		}
	}
}
