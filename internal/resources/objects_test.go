package resources

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// objectsAs reads recorded groups and bundles as the framework's ElementsAs
// does, and fails where it fails.
func TestObjectsAsMatchesElementsAs(t *testing.T) {
	ctx := context.Background()
	var diags diag.Diagnostics
	gpu := 3
	bundles := mustList(bundleObjectType, []attr.Value{
		bundleValue(record.PlacedBundle{Rank: 1, Group: "c-node0", BundleIndex: 2, GlobalIndex: 5, NodeID: "n1", NodeIP: "10.0.0.1",
			GPUID: &gpu, NVLinkDomain: "rackA", TopoRank: 7, Port: 41000}, &diags),
		bundleValue(record.PlacedBundle{Rank: 0, Group: "c-node1", NodeID: "n2", NodeIP: "10.0.0.2"}, &diags), // no GPU: null gpu_id
	}, &diags)
	groups := mustList(groupObjectType, []attr.Value{
		groupValue(clusterspec.GroupRequest{Name: "c-node0", Strategy: "PACK", NodeIndex: 0}, "id0", "CREATED", "", 4, ""),
		groupValue(clusterspec.GroupRequest{Name: "c-node1", Strategy: "PACK", NodeIndex: 1}, "id1", "REMOVED", "SPREAD", 2, "was moved"),
	}, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var wantBundles []recordedBundle
	var wantGroups []recordedGroup
	diags.Append(bundles.ElementsAs(ctx, &wantBundles, false)...)
	diags.Append(groups.ElementsAs(ctx, &wantGroups, false)...)
	gotBundles, d1 := objectsAs[recordedBundle](ctx, bundles)
	gotGroups, d2 := objectsAs[recordedGroup](ctx, groups)
	if diags.HasError() || d1.HasError() || d2.HasError() {
		t.Fatal(diags, d1, d2)
	}
	if diff := cmp.Diff(wantBundles, gotBundles); diff != "" {
		t.Errorf("objectsAs bundles (-ElementsAs +objectsAs):\n%s", diff)
	}
	if diff := cmp.Diff(wantGroups, gotGroups); diff != "" {
		t.Errorf("objectsAs groups (-ElementsAs +objectsAs):\n%s", diff)
	}

	nullName, _ := types.ObjectValue(groupObjectType.AttrTypes, map[string]attr.Value{
		"name": types.StringNull(), "id": types.StringValue("x"), "state": types.StringValue("CREATED"),
		"strategy": types.StringValue("PACK"), "node_index": types.Int64Value(0), "bundle_count": types.Int64Value(1),
		"drift": types.StringValue(""),
	})
	if _, ok := plainObjects[recordedBundle](bundles); !ok {
		t.Error("known bundles went to the framework, not objectsAs's own reading")
	}
	if got, ok := plainObjects[recordedGroup](types.ListNull(groupObjectType)); got != nil || !ok {
		t.Errorf("null list: read plainly = %v, %v; want none, as ElementsAs", got, ok)
	}
	for name, l := range map[string]types.List{
		"unknown list":     types.ListUnknown(groupObjectType),
		"null plain field": mustList(groupObjectType, []attr.Value{nullName}, &diags),
		"unknown element":  mustList(groupObjectType, []attr.Value{types.ObjectUnknown(groupObjectType.AttrTypes)}, &diags),
		"other attributes": bundles,
		"null element":     mustList(groupObjectType, []attr.Value{types.ObjectNull(groupObjectType.AttrTypes)}, &diags),
	} {
		var want []recordedGroup
		frameworkFails := l.ElementsAs(ctx, &want, false).HasError()
		_, plain := plainObjects[recordedGroup](l)
		_, d := objectsAs[recordedGroup](ctx, l)
		if !frameworkFails || plain || !d.HasError() {
			t.Errorf("%s: ElementsAs fails: %v, read plainly: %v, objectsAs fails: %v; want the framework's failure", name, frameworkFails, plain, d.HasError())
		}
	}
}

// fastGet reads the model exactly as the framework's Get: the same values
// for a full state with nulls, unknowns, nested lists and timeouts, and the
// framework's own answer (its diagnostics) where a value validates itself
// and fails.
func TestFastGetMatchesGet(t *testing.T) {
	ctx := context.Background()
	state := nullState(ctx)
	var m virtualClusterModel
	if d := state.Get(ctx, &m); d.HasError() {
		t.Fatal(d)
	}
	var diags diag.Diagnostics
	m.Name, m.ReadyTimeout = types.StringValue("c"), timetypes.NewGoDurationValueFromStringMust("90s")
	m.BundleCtPerNodeList = types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(4), types.Int64Value(4)})
	m.PlacementGroups = mustList(groupObjectType, []attr.Value{
		groupValue(clusterspec.GroupRequest{Name: "c-node0", Strategy: "PACK"}, "id0", "CREATED", "", 4, "")}, &diags)
	m.Bundles = mustList(bundleObjectType, []attr.Value{bundleValue(record.PlacedBundle{Group: "c-node0", NodeID: "n1"}, &diags)}, &diags)
	m.OwnerID, m.SelectedNodeIDs = types.StringUnknown(), types.ListUnknown(types.StringType)
	diags.Append(state.Set(ctx, &m)...)
	if diags.HasError() {
		t.Fatal(diags)
	}
	badDuration := state
	badDuration.Raw = badDuration.Raw.Copy()
	diags.Append(badDuration.SetAttribute(ctx, path.Root("ready_timeout"), types.StringValue("ninety seconds"))...)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var invalid virtualClusterModel
	if !badDuration.Get(ctx, &invalid).HasError() {
		t.Fatal("the framework reads an invalid duration without an error: the case below tests nothing")
	}
	for name, s := range map[string]tfsdk.State{"full": state, "all null": nullState(ctx),
		"invalid duration": badDuration} {
		var want, got virtualClusterModel
		wantDiags := s.Get(ctx, &want)
		gotDiags := fastGet(s.Raw, s.Get)(ctx, &got)
		// Field by field, as reflect sees them: the framework's Equal calls two
		// zero-valued lists (no element type) different.
		if !reflect.DeepEqual(got, want) || !gotDiags.Equal(wantDiags) {
			t.Errorf("%s: fastGet against Get (-Get +fastGet):\n%s\ndiagnostics %v, want %v", name, cmp.Diff(want, got), gotDiags, wantDiags)
		}
	}
	for name, raw := range map[string]tftypes.Value{"full": state.Raw, "all null": nullState(ctx).Raw} {
		if !modelFromTerraform(ctx, raw, &m) {
			t.Errorf("the %s state took the framework's path, not fastGet's own", name)
		}
	}
}

// Structs that break the framework's tag rules are left to the framework
// (which names the mistake); the models the provider reads take the fast path.
func TestFieldsByTagFollowsTheFrameworksRules(t *testing.T) {
	type embedded struct{ A types.String }
	bad := map[string]reflect.Type{
		"untagged exported": reflect.TypeFor[struct {
			A types.String `tfsdk:"a"`
			B types.String
		}](),
		"tagged unexported": reflect.TypeFor[struct {
			a types.String `tfsdk:"a"`
		}](),
		"tag used twice": reflect.TypeFor[struct {
			A types.String `tfsdk:"a"`
			B types.String `tfsdk:"a"`
		}](),
		"embedded": reflect.TypeFor[struct {
			embedded
			C types.String `tfsdk:"c"`
		}](),
	}
	for name, typ := range bad {
		if f := fieldsByTag(typ); f != nil {
			t.Errorf("%s: fast path fields %v, want none", name, f)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[virtualClusterModel](), reflect.TypeFor[recordedGroup](), reflect.TypeFor[recordedBundle]()} {
		if f := fieldsByTag(typ); len(f) == 0 {
			t.Errorf("%s: no fast path", typ)
		}
	}
	if _, validates := any(types.Int64Value(1)).(xattr.ValidateableAttribute); validates {
		t.Error("Int64 values validate themselves: bundles would never take the fast path")
	}
}
