package resources

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// objectsAs reads a list of objects into structs whose fields carry tfsdk
// tags and are string, int64 or the attribute's own value type: what
// list.ElementsAs(ctx, &out, false) does for the recorded groups and
// bundles, without the framework's reflection, which parses every field's
// tag (compiling a regular expression each time) for every element. A
// steady plan reads each cluster's groups and bundles in Read and ModifyPlan:
// that reflection was most of the provider's own CPU in the plan of 50
// clusters (bench/README.md, part 2b). A list it does not read plainly (an
// unknown list, a null or unknown element or plain field, attributes that
// do not match the fields one for one) goes to ElementsAs, which also words
// the diagnostics; a null list reads as none, as there.
func objectsAs[T any](ctx context.Context, list types.List) ([]T, diag.Diagnostics) {
	if out, ok := plainObjects[T](list); ok {
		return out, nil
	}
	var out []T
	d := list.ElementsAs(ctx, &out, false)
	return out, d
}

// plainObjects is objectsAs's own reading; ok is false where it leaves the
// list to the framework.
func plainObjects[T any](list types.List) (out []T, ok bool) {
	if list.IsNull() {
		return nil, true
	}
	if list.IsUnknown() {
		return nil, false
	}
	fields := fieldsByTag(reflect.TypeFor[T]())
	out = make([]T, len(list.Elements()))
	for i, e := range list.Elements() {
		if objectInto(reflect.ValueOf(&out[i]).Elem(), fields, e) != nil {
			return nil, false
		}
	}
	return out, true
}

func objectInto(target reflect.Value, fields map[string]int, e attr.Value) error {
	obj, ok := e.(types.Object)
	if !ok || obj.IsNull() || obj.IsUnknown() {
		return errors.New("not a known object")
	}
	attrs := obj.Attributes()
	if len(attrs) != len(fields) {
		return fmt.Errorf("%d attributes for %d fields", len(attrs), len(fields))
	}
	for name, a := range attrs {
		i, ok := fields[name]
		if !ok {
			return fmt.Errorf("no field for attribute %q", name)
		}
		if err := setField(target.Field(i), a); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func setField(f reflect.Value, a attr.Value) error {
	if v := reflect.ValueOf(a); v.Type() == f.Type() { // the framework wants the exact type
		if _, validates := a.(xattr.ValidateableAttribute); validates {
			return errors.New("a value that validates itself is the framework's to read")
		}
		f.Set(v)
		return nil
	}
	if a.IsNull() || a.IsUnknown() {
		return errors.New("null or unknown value for a plain field")
	}
	switch v := a.(type) {
	case types.String:
		if f.Kind() == reflect.String {
			f.SetString(v.ValueString())
			return nil
		}
	case types.Int64:
		if f.Kind() == reflect.Int64 {
			f.SetInt(v.ValueInt64())
			return nil
		}
	}
	return fmt.Errorf("cannot read %T into %s", a, f.Type())
}

// tagFields caches fieldsByTag per struct type.
var tagFields sync.Map // reflect.Type -> map[string]int

// fieldsByTag maps each tfsdk tag of struct type t to its field's index, or
// is nil (every read left to the framework, which then names the mistake)
// where t breaks the framework's tag rules: an embedded or exported untagged
// field, a tagged unexported one, or a tag used twice.
func fieldsByTag(t reflect.Type) map[string]int {
	if f, ok := tagFields.Load(t); ok {
		return f.(map[string]int) //nolint:forcetypeassert // only this function stores
	}
	f := map[string]int{}
	for i := range t.NumField() {
		field := t.Field(i)
		tag := field.Tag.Get("tfsdk")
		_, dup := f[tag]
		if field.Anonymous || (tag == "" && field.IsExported()) || (tag != "" && tag != "-" && !field.IsExported()) || dup {
			f = nil
			break
		}
		if tag != "" && tag != "-" {
			f[tag] = i
		}
	}
	tagFields.Store(t, f)
	return f
}

// modelTypes is the type of each attribute and block of the resource's
// schema, built once: the schema does not change while the plugin runs.
var modelTypes = sync.OnceValue(func() map[string]attr.Type {
	var sch resource.SchemaResponse
	(&virtualClusterResource{}).Schema(context.Background(), resource.SchemaRequest{}, &sch)
	if obj, ok := sch.Schema.Type().(attr.TypeWithAttributeTypes); ok {
		return obj.AttributeTypes()
	}
	return nil // fastGet leaves every read to the framework
})

// fastGet is get (the framework's State.Get, Plan.Get or Config.Get of the
// same data) for the model, reading raw without the framework's reflection
// (its tag parsing was a tenth of the plugin's CPU in the plan of 50
// clusters): each attribute's value comes from its schema type's
// ValueFromTerraform, as the framework's reflection does for a field of an
// attribute value type. Whatever fastGet does not read exactly so (another
// target, a value that is not a known object, a value whose own validation
// says anything) goes to get, which also words the diagnostics.
func fastGet(raw tftypes.Value, get getFunc) getFunc {
	return func(ctx context.Context, target any) diag.Diagnostics {
		if m, ok := target.(*virtualClusterModel); ok && modelFromTerraform(ctx, raw, m) {
			return nil
		}
		return get(ctx, target)
	}
}

// modelFromTerraform fills m from raw and reports whether it did.
func modelFromTerraform(ctx context.Context, raw tftypes.Value, m *virtualClusterModel) bool {
	var values map[string]tftypes.Value
	if raw.IsNull() || !raw.IsKnown() || raw.As(&values) != nil {
		return false
	}
	fields, attrTypes := fieldsByTag(reflect.TypeFor[virtualClusterModel]()), modelTypes()
	if len(values) != len(fields) {
		return false
	}
	var out virtualClusterModel
	target := reflect.ValueOf(&out).Elem()
	for name, v := range values {
		i, ok := fields[name]
		typ, typed := attrTypes[name]
		if !ok || !typed {
			return false
		}
		val, err := typ.ValueFromTerraform(ctx, v)
		if err != nil || !quietlyValid(ctx, name, typ, v, val) {
			return false
		}
		rv := reflect.ValueOf(val)
		if rv.Type() != target.Field(i).Type() {
			return false
		}
		target.Field(i).Set(rv)
	}
	*m = out
	return true
}

// quietlyValid reports whether the framework's reflection would validate
// the value without a word: a value that validates itself (e.g. a
// duration's syntax) does so, else its type may (the base types check, for
// instance, that an Int64 fits).
func quietlyValid(ctx context.Context, name string, typ attr.Type, raw tftypes.Value, v attr.Value) bool {
	if va, ok := v.(xattr.ValidateableAttribute); ok {
		var resp xattr.ValidateAttributeResponse
		va.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: path.Root(name)}, &resp)
		return len(resp.Diagnostics) == 0
	}
	if tv, ok := typ.(xattr.TypeWithValidate); ok { //nolint:staticcheck // deprecated, and still run by the framework
		return len(tv.Validate(ctx, raw, path.Root(name))) == 0
	}
	return true
}
