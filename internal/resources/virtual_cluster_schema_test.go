package resources

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
)

func resourceSchema(t *testing.T) schema.Schema {
	var resp resource.SchemaResponse
	(&virtualClusterResource{}).Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	return resp.Schema
}

func replacingInSchema(t *testing.T, s schema.Schema) []string {
	var out []string
	for name, a := range s.Attributes {
		mods := reflect.ValueOf(a).FieldByName("PlanModifiers")
		for i := 0; mods.IsValid() && i < mods.Len(); i++ {
			m := mods.Index(i).Interface().(interface{ Description(context.Context) string })
			if m.Description(context.Background()) == requiresReplaceDescription {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestReplacingAttributesAgree checks that the schema's RequiresReplace
// attributes are exactly the resource's shape-change list, and that every
// configurable attribute is either replacing or applied in place.
func TestReplacingAttributesAgree(t *testing.T) {
	s := resourceSchema(t)
	want := slices.Clone(replacingAttributes)
	sort.Strings(want)
	if got := replacingInSchema(t, s); !slices.Equal(got, want) {
		t.Fatalf("RequiresReplace attributes %v, shape-change list %v", got, want)
	}
	model := reflect.TypeOf(virtualClusterModel{})
	for i := 0; i < model.NumField(); i++ {
		name := model.Field(i).Tag.Get("tfsdk")
		configurable := name == "timeouts"
		if a, ok := s.Attributes[name]; ok {
			configurable = a.IsOptional() || a.IsRequired()
		}
		listed := slices.Contains(replacingAttributes, name) || slices.Contains(inPlaceAttributes, name) ||
			slices.Contains(resizingAttributes, name)
		if configurable != listed {
			t.Errorf("attribute %q: configurable=%v but listed=%v in replacingAttributes/inPlaceAttributes/resizingAttributes", name, configurable, listed)
		}
	}
	for _, name := range resizingAttributes {
		a, ok := s.Attributes[name].(schema.ListAttribute)
		if !ok || !slices.ContainsFunc(a.PlanModifiers, func(m planmodifier.List) bool {
			return m.Description(context.Background()) == resizeDescription
		}) {
			t.Errorf("attribute %q: no resizeOrReplace modifier", name)
		}
	}
}
