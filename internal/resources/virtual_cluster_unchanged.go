package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The protocol server answers the RPCs of an unchanged virtual cluster
// itself (PlanUnchangedCluster, ReadUnchangedCluster, UpgradeClusterState),
// as the framework would. This file holds what they share: what the schema
// must be for that, and the framework's conversions they repeat.

// VirtualClusterSuffix follows the provider's type name in the virtual
// cluster resource's.
const VirtualClusterSuffix = "_virtual_cluster"

// unchangedSchemaFor is the schema the shortcuts answer with, or nil when
// the request is not for a virtual cluster (resourceType, of the provider
// typeName) or the schema is not one they can answer for.
func unchangedSchemaFor(typeName, resourceType string) *unchangedSchema {
	if resourceType != typeName+VirtualClusterSuffix {
		return nil
	}
	return unchangedClusterSchema()
}

// unchangedInputs reads what both the plan and the refresh shortcut start
// from: the schema (nil when the request is not a virtual cluster's of a
// configured provider, or the schema not one they answer for), the prior
// private state and the identity Terraform sent. It reports false when any
// is missing or one the framework would refuse.
func unchangedInputs(typeName, resourceType string, data *ProviderData, private []byte,
	identity *tfprotov6.ResourceIdentityData) (*unchangedSchema, priorPrivate, tftypes.Value, bool) {
	s := unchangedSchemaFor(typeName, resourceType)
	if s == nil || data == nil {
		return nil, nil, tftypes.Value{}, false
	}
	prior, ok := decodePrivate(private)
	if !ok {
		return nil, nil, tftypes.Value{}, false
	}
	sent, ok := s.identity(identity)
	return s, prior, sent, ok
}

// identityOf is an identity value of the resource, as the framework hands
// it to ModifyPlan and Read.
func (s *unchangedSchema) identityOf(v tftypes.Value) *tfsdk.ResourceIdentity {
	return &tfsdk.ResourceIdentity{Schema: s.identitySchema, Raw: v}
}

// unchangedSchema is what the shortcuts need of the schema, built once.
type unchangedSchema struct {
	schema         schema.Schema
	typ            tftypes.Object
	identitySchema identityschema.Schema
	identityTyp    tftypes.Type
	// defaults holds each top-level attribute's default.
	defaults map[string]tftypes.Value
	// customTyped are the top-level attributes with a custom type at any
	// depth: only those can have semantic equality.
	customTyped map[string]bool
}

// unchangedClusterSchema is nil (every request goes to the framework) when
// the schema has what the shortcuts do not reproduce: write-only
// attributes, a default it cannot read statically (any default but a
// top-level bool, int64 or string one), a plan modifier not known to keep a
// value equal to the prior one (keepEqualValues), or a block other than a
// single one of plain attributes (the timeouts block).
var unchangedClusterSchema = sync.OnceValue(func() *unchangedSchema {
	ctx := context.Background()
	r := &virtualClusterResource{}
	var sch resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sch)
	var ident resource.IdentitySchemaResponse
	r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ident)
	typ, ok := sch.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil
	}
	for _, b := range sch.Schema.Blocks {
		if !plainBlock(b) {
			return nil
		}
	}
	s := &unchangedSchema{schema: sch.Schema, typ: typ, identitySchema: ident.IdentitySchema,
		identityTyp: ident.IdentitySchema.Type().TerraformType(ctx), defaults: map[string]tftypes.Value{},
		customTyped: map[string]bool{}}
	for name, a := range sch.Schema.Attributes {
		if a.IsWriteOnly() || nestedDefault(a) || !keepsEqualValues(a) {
			return nil
		}
		s.customTyped[name] = customTyped(a)
		v, has, ok := staticDefault(ctx, name, a)
		if !ok {
			return nil
		}
		if has {
			s.defaults[name] = v
		}
	}
	return s
})

// plainBlock reports whether b is a single nested block whose attributes
// have no default and no plan modifier, and which nests no block: the
// framework's passes over it change nothing in a plan equal to the prior
// state.
func plainBlock(b schema.Block) bool {
	single, ok := b.(schema.SingleNestedBlock)
	if !ok || len(single.PlanModifiers) > 0 || len(single.Blocks) > 0 {
		return false
	}
	for _, a := range single.Attributes {
		if hasDefault(a) || nestedDefault(a) || hasPlanModifiers(a) || a.IsWriteOnly() {
			return false
		}
	}
	return true
}

// keepEqualValues are the plan modifiers known to leave a planned value that
// equals the prior state's as it is, and to ask for no replacement then:
// the framework's RequiresReplace(If) and UseStateForUnknown (they return at
// once for an equal, known value) and the provider's own two.
var keepEqualValues = map[string]bool{
	"boolplanmodifier.requiresReplaceIfModifier": true, "int64planmodifier.requiresReplaceIfModifier": true,
	"listplanmodifier.requiresReplaceIfModifier": true, "mapplanmodifier.requiresReplaceIfModifier": true,
	"objectplanmodifier.requiresReplaceIfModifier": true, "stringplanmodifier.requiresReplaceIfModifier": true,
	"listplanmodifier.useStateForUnknownModifier": true, "mapplanmodifier.useStateForUnknownModifier": true,
	"stringplanmodifier.useStateForUnknownModifier": true,
	"resources.sameDurationKeepsState":              true, "resources.sameFloatsKeepState": true,
}

// keepsEqualValues reports whether every plan modifier of a, and of its
// nested attributes at any depth, is in keepEqualValues.
func keepsEqualValues(a schema.Attribute) bool {
	mods := []reflect.Value{reflect.ValueOf(a).FieldByName("PlanModifiers")}
	if nested := reflect.ValueOf(a).FieldByName("NestedObject"); nested.IsValid() {
		mods = append(mods, nested.FieldByName("PlanModifiers"))
	}
	for _, m := range mods {
		for i := 0; m.IsValid() && i < m.Len(); i++ {
			if !keepEqualValues[fmt.Sprintf("%T", m.Index(i).Interface())] {
				return false
			}
		}
	}
	for _, n := range nestedAttributes(a) {
		if !keepsEqualValues(n) {
			return false
		}
	}
	return true
}

// customTyped reports whether a, or an attribute nested in it at any depth,
// has a custom type.
func customTyped(a schema.Attribute) bool {
	if interfaceSet(reflect.ValueOf(a), "CustomType") || interfaceSet(reflect.ValueOf(a).FieldByName("NestedObject"), "CustomType") {
		return true
	}
	for _, n := range nestedAttributes(a) {
		if customTyped(n) {
			return true
		}
	}
	return false
}

// hasPlanModifiers reports whether an attribute value of any schema type
// sets its PlanModifiers field.
func hasPlanModifiers(a any) bool {
	f := reflect.ValueOf(a).FieldByName("PlanModifiers")
	return f.IsValid() && f.Kind() == reflect.Slice && f.Len() > 0
}

// staticDefault is a's default as a Terraform value, whether it has one, and
// whether it could be read.
func staticDefault(ctx context.Context, name string, a schema.Attribute) (v tftypes.Value, has, ok bool) {
	p := path.Root(name)
	switch a := a.(type) {
	case schema.BoolAttribute:
		if a.Default == nil {
			return v, false, true
		}
		var resp defaults.BoolResponse
		a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: p}, &resp)
		return evaluated(ctx, resp.PlanValue, resp.Diagnostics)
	case schema.Int64Attribute:
		if a.Default == nil {
			return v, false, true
		}
		var resp defaults.Int64Response
		a.Default.DefaultInt64(ctx, defaults.Int64Request{Path: p}, &resp)
		return evaluated(ctx, resp.PlanValue, resp.Diagnostics)
	case schema.StringAttribute:
		if a.Default == nil {
			return v, false, true
		}
		var resp defaults.StringResponse
		a.Default.DefaultString(ctx, defaults.StringRequest{Path: p}, &resp)
		return evaluated(ctx, resp.PlanValue, resp.Diagnostics)
	}
	return v, false, !hasDefault(a)
}

// evaluated is a default's planned value as staticDefault returns it.
func evaluated(ctx context.Context, planned attr.Value, diags diag.Diagnostics) (v tftypes.Value, has, ok bool) {
	v, err := planned.ToTerraformValue(ctx)
	return v, true, err == nil && !diags.HasError()
}

// hasDefault reports whether an attribute value of any schema type sets its
// Default field.
func hasDefault(a any) bool { return interfaceSet(reflect.ValueOf(a), "Default") }

// interfaceSet reports whether struct v (invalid: none) has an interface
// field of that name, set. The schema's attribute kinds share field names,
// not an interface to read them through.
func interfaceSet(v reflect.Value, field string) bool {
	if !v.IsValid() {
		return false
	}
	f := v.FieldByName(field)
	return f.IsValid() && f.Kind() == reflect.Interface && !f.IsNil()
}

// nestedDefault reports whether an attribute of a's nested object, at any
// depth, has a default.
func nestedDefault(a schema.Attribute) bool {
	for _, n := range nestedAttributes(a) {
		if hasDefault(n) || nestedDefault(n) {
			return true
		}
	}
	return false
}

// identity is the identity Terraform sent, or a null one where it sent none
// (as the framework has it: a CLI without identities, or a state from before
// them), and whether it could be read.
func (s *unchangedSchema) identity(sent *tfprotov6.ResourceIdentityData) (tftypes.Value, bool) {
	if sent == nil || sent.IdentityData == nil {
		return tftypes.NewValue(s.identityTyp, nil), true
	}
	v, err := sent.IdentityData.Unmarshal(s.identityTyp)
	return v, err == nil
}

// nestedAttributes are the attributes of a's nested object, if it has one.
func nestedAttributes(a schema.Attribute) map[string]schema.Attribute {
	switch a := a.(type) {
	case schema.SingleNestedAttribute:
		return a.Attributes
	case schema.ListNestedAttribute:
		return a.NestedObject.Attributes
	case schema.SetNestedAttribute:
		return a.NestedObject.Attributes
	case schema.MapNestedAttribute:
		return a.NestedObject.Attributes
	}
	return nil
}

// encodeIdentity is the identity to answer with: what Terraform sent (read
// as sentValue) when now is the same, else now encoded.
func (s *unchangedSchema) encodeIdentity(sent *tfprotov6.ResourceIdentityData, sentValue, now tftypes.Value,
	diags *diag.Diagnostics) *tfprotov6.ResourceIdentityData {
	if sent != nil && sent.IdentityData != nil && now.Equal(sentValue) {
		return sent
	}
	encoded, err := tfprotov6.NewDynamicValue(s.identityTyp, now)
	if err != nil {
		diags.AddError(unchangedClusterBug, "This is a bug in the provider: cannot encode the identity: "+err.Error())
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &encoded}
}

// encodeState is a state or plan of the resource, encoded.
func (s *unchangedSchema) encodeState(v tftypes.Value, diags *diag.Diagnostics) *tfprotov6.DynamicValue {
	encoded, err := tfprotov6.NewDynamicValue(s.typ, v)
	if err != nil {
		diags.AddError(unchangedClusterBug, "This is a bug in the provider: cannot encode the state: "+err.Error())
	}
	return &encoded
}

// defaultsHeld reports whether prior already holds the default of every
// attribute the configuration leaves null: the framework would plan the
// default there.
func (s *unchangedSchema) defaultsHeld(config, prior tftypes.Value) bool {
	var c, p map[string]tftypes.Value
	if config.As(&c) != nil || prior.As(&p) != nil {
		return false
	}
	for name, d := range s.defaults {
		if c[name].IsNull() && !p[name].Equal(d) {
			return false
		}
	}
	return true
}

// decodePrivate reads Terraform's private state as the framework stores it
// (a JSON object of base64 values; keys starting with "." are the
// framework's own).
func decodePrivate(raw []byte) (priorPrivate, bool) {
	if len(raw) == 0 {
		return priorPrivate{}, true
	}
	var m map[string][]byte
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	for _, v := range m {
		if !utf8.Valid(v) || !json.Valid(v) { // the framework refuses such a value
			return nil, false
		}
	}
	return m, true
}

// encoded is the private state as the framework writes it back: nothing
// for no keys, else raw as Terraform sent it.
func (p priorPrivate) encoded(raw []byte) []byte {
	if len(p) == 0 {
		return nil
	}
	return raw
}

// unchangedClusterBug is the summary of what the shortcuts for an unchanged
// cluster fail at only through a bug of their own (encoding what the
// framework encodes, writing private state a plan does not write).
const unchangedClusterBug = "Cannot answer for the unchanged virtual cluster"

// priorPrivate is the provider's keys of the prior private state, read-only.
type priorPrivate map[string][]byte

func (p priorPrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	if frameworkKey(key) {
		return nil, nil
	}
	return p[key], nil
}

// frameworkKey reports whether a private state key is the framework's own.
func frameworkKey(key string) bool { return strings.HasPrefix(key, ".") }

func (p priorPrivate) SetKey(context.Context, string, []byte) diag.Diagnostics {
	var d diag.Diagnostics
	d.AddError(unchangedClusterBug, "This is a bug in the provider: planning an unchanged cluster writes no private state.")
	return d
}

// attributePaths converts paths as the framework does for RequiresReplace:
// sorted by their text, each once.
func attributePaths(ctx context.Context, paths path.Paths, diags *diag.Diagnostics) []*tftypes.AttributePath {
	byText := map[string]path.Path{}
	for _, p := range paths {
		byText[p.String()] = p
	}
	texts := make([]string, 0, len(byText))
	for t := range byText {
		texts = append(texts, t)
	}
	sort.Strings(texts)
	var out []*tftypes.AttributePath
	for _, t := range texts {
		out = append(out, attributePath(ctx, byText[t], diags))
	}
	return out
}

// attributePath is p as a Terraform attribute path.
func attributePath(ctx context.Context, p path.Path, diags *diag.Diagnostics) *tftypes.AttributePath {
	out := tftypes.NewAttributePath()
	for _, step := range p.Steps() {
		switch step := step.(type) {
		case path.PathStepAttributeName:
			out = out.WithAttributeName(string(step))
		case path.PathStepElementKeyInt:
			out = out.WithElementKeyInt(int(step))
		case path.PathStepElementKeyString:
			out = out.WithElementKeyString(string(step))
		case path.PathStepElementKeyValue:
			v, err := step.ToTerraformValue(ctx)
			if err != nil {
				diags.AddError(unchangedClusterBug, "This is a bug in the provider: cannot encode an attribute path: "+err.Error())
			}
			out = out.WithElementKeyValue(v)
		}
	}
	return out
}

// protoSeverity is each diagnostic severity in the protocol.
var protoSeverity = map[diag.Severity]tfprotov6.DiagnosticSeverity{
	diag.SeverityError:   tfprotov6.DiagnosticSeverityError,
	diag.SeverityWarning: tfprotov6.DiagnosticSeverityWarning,
}

// protoDiagnostics converts diagnostics as the framework does.
func protoDiagnostics(ctx context.Context, diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Summary: d.Summary(), Detail: d.Detail(), Severity: protoSeverity[d.Severity()]}
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			var ignored diag.Diagnostics
			pd.Attribute = attributePath(ctx, wp.Path(), &ignored)
		}
		out = append(out, pd)
	}
	return out
}
