package provider

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// The protocol server answers an unchanged virtual cluster's plan, refresh
// and state upgrade itself (server.go). These tests put each of its answers
// beside the framework's, from another provider configured alike against
// the same stand-in dashboard, and check that they are the same answer, and
// that it declines what it must leave to the framework.

const clusterType = typeName + resources.VirtualClusterSuffix

// unchangedRig is one provider whose data the shortcuts use, and one whose
// framework server answers the same requests. Each plan claims its cluster's
// name in its provider, so a rig serves one plan.
type unchangedRig struct {
	fast      *rayProvider
	framework tfprotov6.ProviderServer
	typ       tftypes.Object
	identity  tftypes.Object
}

func newUnchangedRig(t *testing.T, address string) unchangedRig {
	t.Helper()
	ctx := context.Background()
	fast := newProvider("test")
	framework := providerserver.NewProtocol6(newProvider("test"))()
	schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	identities, err := framework.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	configType := schemas.Provider.ValueType().(tftypes.Object) //nolint:forcetypeassert // a schema's type is an object
	values := map[string]tftypes.Value{}
	for name, at := range configType.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	values["address"] = tftypes.NewValue(tftypes.String, address)
	config, err := tfprotov6.NewDynamicValue(configType, tftypes.NewValue(configType, values))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []tfprotov6.ProviderServer{providerserver.NewProtocol6(fast)(), framework} {
		resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &config})
		if err != nil || len(resp.Diagnostics) > 0 {
			t.Fatalf("configure: %v %v", err, resp.Diagnostics)
		}
	}
	return unchangedRig{fast: fast, framework: framework,
		typ:      schemas.ResourceSchemas[clusterType].ValueType().(tftypes.Object),    //nolint:forcetypeassert // as above
		identity: identities.IdentitySchemas[clusterType].ValueType().(tftypes.Object)} //nolint:forcetypeassert // as above
}

// standinCluster is a stand-in dashboard with one GPU node and, when placed,
// the group of a one-bundle cluster "vc" on it.
func standinCluster(t *testing.T, placed bool) string {
	t.Helper()
	nodes := standin.Generate(standin.Shape{Nodes: 2, GPUsPerNode: 8, CPUsPerNode: 8, Head: true})
	s := standin.New(nodes)
	if placed {
		s.SetPlacementGroups([]standin.PlacementGroup{{PlacementGroupID: groupID, Name: "vc-node0", State: "CREATED",
			IsDetached: true, Bundles: []standin.Bundle{{PlacementGroupID: groupID, NodeID: nodes[1].NodeID,
				UnitResources: map[string]float64{"CPU": 1, "GPU": 1}}}}})
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

const groupID = "3a049e62240af4a25baccc181ff102000000"

// clusterState is a refreshed one-bundle cluster "vc" on the stand-in's GPU
// node, as JSON state with overrides.
func clusterState(t *testing.T, override map[string]any) []byte {
	t.Helper()
	node := standin.Generate(standin.Shape{Nodes: 2, GPUsPerNode: 8, CPUsPerNode: 8, Head: true})[1]
	state := map[string]any{
		"id": "vc", "name": "vc", "namespace": "terraform-ray", "bundle_ct_per_node_list": []int{1},
		"use_gpus": true, "num_gpus_per_node": 8, "max_colocated_worker_groups": 1, "placement_group_strategy": "SPREAD",
		"use_unified_pg": false, "port_range_low": 3000, "port_range_high": 3010, "ready_timeout": "180s",
		"select_nodes": false, "exclusive_nodes": false, "pinning": "node", "owner_id": "aa903aedd494f8e3522379a1d27ffa4e",
		"world_size": 1, "node_count": 1, "master_address": node.NodeIP, "master_port": 3008,
		"sorted_bundle_indices": []int{0}, "nvlink_domain_per_bundle": []string{"unknown"},
		"bundles": []map[string]any{{"bundle_index": 0, "global_index": 0, "gpu_id": 0, "node_id": node.NodeID,
			"node_ip": node.NodeIP, "nvlink_domain": "unknown", "placement_group": "vc-node0", "port": 3008, "rank": 0,
			"topo_rank": 2}},
		"placement_groups": []map[string]any{{"bundle_count": 1, "drift": "", "id": groupID, "name": "vc-node0",
			"node_index": 0, "state": "CREATED", "strategy": "PACK"}},
	}
	for k, v := range override {
		state[k] = v
	}
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fromJSON reads JSON state as Terraform stores it (missing attributes null).
func fromJSON(t *testing.T, typ tftypes.Type, raw []byte) tftypes.Value {
	t.Helper()
	v, err := (&tfprotov6.RawState{JSON: raw}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dynamic(t *testing.T, typ tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// withAttributes is obj with some attributes replaced.
func withAttributes(t *testing.T, obj tftypes.Value, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	var values map[string]tftypes.Value
	if err := obj.As(&values); err != nil {
		t.Fatal(err)
	}
	attrs := maps.Clone(values) // As shares obj's map
	for k, v := range set {
		attrs[k] = v
	}
	return tftypes.NewValue(obj.Type(), attrs)
}

// configOf is the configuration that proposes state: every computed-only
// attribute left out, and those named.
func configOf(t *testing.T, state tftypes.Value, leftOut []string) tftypes.Value {
	t.Helper()
	schemas, err := NewProtocol6Server("test")().GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	nulls := map[string]tftypes.Value{}
	for _, a := range schemas.ResourceSchemas[clusterType].Block.Attributes {
		if a.Computed && !a.Optional || slices.Contains(leftOut, a.Name) {
			nulls[a.Name] = tftypes.NewValue(a.ValueType(), nil)
		}
	}
	return withAttributes(t, state, nulls)
}

// sameValue checks that two encoded values are the same value.
func sameValue(t *testing.T, what string, typ tftypes.Type, fast, framework *tfprotov6.DynamicValue) {
	t.Helper()
	if (fast == nil) != (framework == nil) {
		t.Errorf("%s: shortcut %v, framework %v", what, fast, framework)
		return
	}
	if fast == nil {
		return
	}
	a, errA := fast.Unmarshal(typ)
	b, errB := framework.Unmarshal(typ)
	if errA != nil || errB != nil || !a.Equal(b) {
		t.Errorf("%s differs (%v, %v):\nshortcut  %v\nframework %v", what, errA, errB, a, b)
	}
}

// samePrivate checks that two private states hold the same keys.
func samePrivate(t *testing.T, fast, framework []byte) {
	t.Helper()
	var a, b map[string][]byte
	if len(fast) > 0 && json.Unmarshal(fast, &a) != nil || len(framework) > 0 && json.Unmarshal(framework, &b) != nil {
		t.Fatalf("private state: %q, %q", fast, framework)
	}
	if len(a) != len(b) {
		t.Errorf("private state: shortcut %q, framework %q", fast, framework)
	}
	for k, v := range a {
		if string(b[k]) != string(v) {
			t.Errorf("private state %s: shortcut %q, framework %q", k, v, b[k])
		}
	}
}

func sameIdentity(t *testing.T, typ tftypes.Type, fast, framework *tfprotov6.ResourceIdentityData) {
	t.Helper()
	if (fast == nil) != (framework == nil) {
		t.Errorf("identity: shortcut %v, framework %v", fast, framework)
		return
	}
	if fast != nil {
		sameValue(t, "identity", typ, fast.IdentityData, framework.IdentityData)
	}
}

func sameDiagnostics(t *testing.T, fast, framework []*tfprotov6.Diagnostic) {
	t.Helper()
	if len(fast) != len(framework) {
		t.Errorf("diagnostics: shortcut %d, framework %d:\n%v\n%v", len(fast), len(framework), fast, framework)
		return
	}
	for i := range fast {
		a, b := fast[i], framework[i]
		if a.Severity != b.Severity || a.Summary != b.Summary || a.Detail != b.Detail || !a.Attribute.Equal(b.Attribute) {
			t.Errorf("diagnostic %d:\nshortcut  %+v\nframework %+v", i, a, b)
		}
	}
}

// privateState is private state as the framework stores it, of one key.
func privateState(t *testing.T, key, value string) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string][]byte{key: []byte(value)})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// defaulted are the attributes with a default.
var defaulted = []string{"use_gpus", "num_gpus_per_node", "max_colocated_worker_groups", "placement_group_strategy",
	"use_unified_pg", "port_range_low", "port_range_high", "ready_timeout", "select_nodes", "exclusive_nodes", "pinning"}

func TestPlanUnchangedClusterAnswersAsTheFramework(t *testing.T) {
	ctx := context.Background()
	address := standinCluster(t, true)
	formerOwner := privateState(t, "import_former_owner", `"0123456789abcdef0123456789abcdef"`)
	frameworkKey := privateState(t, ".import_before_read", "true")
	notJSON := privateState(t, "import_former_owner", "not json")
	cases := []struct {
		name     string
		state    map[string]any
		private  []byte
		identity bool
		// noIdentityData sends an identity without its data.
		noIdentityData bool
		typeName       string // clusterType when empty
		leftOut        []string
		edit           map[string]tftypes.Value // configuration and proposal
		answers        bool
		warning        string // a warning of the answer
	}{
		{name: "steady", answers: true},
		{name: "steady, with an identity", identity: true, answers: true},
		{name: "steady, defaults left out", state: map[string]any{"port_range_low": clusterspec.DefaultPorts.Low, "port_range_high": clusterspec.DefaultPorts.High},
			leftOut: defaulted, answers: true},
		// The plan takes ownership: computed attributes unknown, and a warning.
		{name: "import pending", state: map[string]any{"owner_id": ""}, private: formerOwner, answers: true,
			warning: "Apply takes ownership of the imported virtual cluster"},
		// Two replacements (sorted), a warning.
		{name: "drift in another namespace", answers: true, warning: "Virtual cluster drifted outside Terraform",
			state: map[string]any{"namespace": "elsewhere", "placement_groups": []map[string]any{{"bundle_count": 1,
				"drift": "bundle 0 moved", "id": groupID, "name": "vc-node0", "node_index": 0, "state": "CREATED", "strategy": "PACK"}}}},
		{name: "an identity without data", identity: true, noIdentityData: true, answers: true},
		{name: "private state of no keys", private: []byte("{}"), answers: true},
		{name: "framework private state", private: frameworkKey, answers: true},
		{name: "a private value that is not JSON", private: notJSON},
		{name: "a default the state lacks", state: map[string]any{"ready_timeout": "300s"}, leftOut: []string{"ready_timeout"}},
		{name: "a changed configuration", edit: map[string]tftypes.Value{"port_range_high": tftypes.NewValue(tftypes.Number, 3020)}},
		{name: "another resource type", typeName: typeName + "_namespace_quota"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rig := newUnchangedRig(t, address)
			prior := fromJSON(t, rig.typ, clusterState(t, c.state))
			proposed := withAttributes(t, prior, c.edit)
			req := &tfprotov6.PlanResourceChangeRequest{TypeName: cmp.Or(c.typeName, clusterType), PriorState: dynamic(t, rig.typ, prior),
				ProposedNewState: dynamic(t, rig.typ, proposed),
				Config:           dynamic(t, rig.typ, withAttributes(t, configOf(t, prior, c.leftOut), c.edit)), PriorPrivate: c.private}
			if c.identity {
				id := tftypes.NewValue(rig.identity, map[string]tftypes.Value{
					"namespace": tftypes.NewValue(tftypes.String, "terraform-ray"), "name": tftypes.NewValue(tftypes.String, "vc")})
				req.PriorIdentity = &tfprotov6.ResourceIdentityData{IdentityData: dynamic(t, rig.identity, id)}
				if c.noIdentityData {
					req.PriorIdentity.IdentityData = nil
				}
			}
			fast, answered := resources.PlanUnchangedCluster(ctx, typeName, rig.fast.configured.Load(), req)
			if answered != c.answers {
				t.Fatalf("answered = %v, want %v", answered, c.answers)
			}
			if !answered {
				return
			}
			if c.warning != "" && !slices.ContainsFunc(fast.Diagnostics, func(d *tfprotov6.Diagnostic) bool { return d.Summary == c.warning }) {
				t.Errorf("no warning %q: %v", c.warning, fast.Diagnostics)
			}
			framework, err := rig.framework.PlanResourceChange(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			samePlan(t, rig, fast, framework)
		})
	}
}

// samePlan checks that two answers to a plan are the same answer.
func samePlan(t *testing.T, rig unchangedRig, fast, framework *tfprotov6.PlanResourceChangeResponse) {
	t.Helper()
	sameValue(t, "planned state", rig.typ, fast.PlannedState, framework.PlannedState)
	if !slices.EqualFunc(fast.RequiresReplace, framework.RequiresReplace, (*tftypes.AttributePath).Equal) {
		t.Errorf("requires replace: shortcut %v, framework %v", fast.RequiresReplace, framework.RequiresReplace)
	}
	samePrivate(t, fast.PlannedPrivate, framework.PlannedPrivate)
	sameIdentity(t, rig.identity, fast.PlannedIdentity, framework.PlannedIdentity)
	sameDiagnostics(t, fast.Diagnostics, framework.Diagnostics)
	if (fast.Deferred == nil) != (framework.Deferred == nil) {
		t.Errorf("deferred: shortcut %v, framework %v", fast.Deferred, framework.Deferred)
	}
}

// TestPlanUnchangedClusterClaimsItsName: two clusters of one name in one
// plan, the second answered by the shortcut, fail on the name as the
// framework fails them.
func TestPlanUnchangedClusterClaimsItsName(t *testing.T) {
	ctx := context.Background()
	rig := newUnchangedRig(t, standinCluster(t, true))
	var fast, framework *tfprotov6.PlanResourceChangeResponse
	for _, owner := range []string{"aa903aedd494f8e3522379a1d27ffa4e", "bb903aedd494f8e3522379a1d27ffa4e"} {
		prior := fromJSON(t, rig.typ, clusterState(t, map[string]any{"owner_id": owner}))
		req := &tfprotov6.PlanResourceChangeRequest{TypeName: clusterType, PriorState: dynamic(t, rig.typ, prior),
			ProposedNewState: dynamic(t, rig.typ, prior), Config: dynamic(t, rig.typ, configOf(t, prior, nil))}
		var answered bool
		if fast, answered = resources.PlanUnchangedCluster(ctx, typeName, rig.fast.configured.Load(), req); !answered {
			t.Fatal("not answered")
		}
		var err error
		if framework, err = rig.framework.PlanResourceChange(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if len(fast.Diagnostics) == 0 || fast.Diagnostics[0].Summary != "Duplicate virtual cluster name" {
		t.Fatalf("the second cluster's plan: %v", fast.Diagnostics)
	}
	samePlan(t, rig, fast, framework)
}

func TestReadUnchangedClusterAnswersAsTheFramework(t *testing.T) {
	ctx := context.Background()
	placed, gone := standinCluster(t, true), standinCluster(t, false)
	cases := []struct {
		name     string
		address  string
		state    map[string]any
		private  []byte
		identity bool
		answers  bool
	}{
		{name: "steady", address: placed, answers: true},
		{name: "steady, with an identity", address: placed, identity: true, answers: true},
		// The cluster leaves state, with a warning.
		{name: "groups gone", address: gone, answers: true},
		// Ray reports the group under another id: a changed state.
		{name: "drift", address: placed, state: map[string]any{"placement_groups": []map[string]any{{"bundle_count": 1,
			"drift": "", "id": "ffff", "name": "vc-node0", "node_index": 0, "state": "CREATED", "strategy": "PACK"}}},
			answers: true},
		{name: "framework private state", address: placed, private: privateState(t, ".import_before_read", "true")},
		{name: "just imported", address: placed, state: map[string]any{"bundles": nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rig := newUnchangedRig(t, c.address)
			current := fromJSON(t, rig.typ, clusterState(t, c.state))
			req := &tfprotov6.ReadResourceRequest{TypeName: clusterType, CurrentState: dynamic(t, rig.typ, current), Private: c.private}
			if c.identity {
				id := tftypes.NewValue(rig.identity, map[string]tftypes.Value{
					"namespace": tftypes.NewValue(tftypes.String, "terraform-ray"), "name": tftypes.NewValue(tftypes.String, "vc")})
				req.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: dynamic(t, rig.identity, id)}
			}
			fast, answered := resources.ReadUnchangedCluster(ctx, typeName, rig.fast.configured.Load(), req)
			if answered != c.answers {
				t.Fatalf("answered = %v, want %v", answered, c.answers)
			}
			if !answered {
				return
			}
			framework, err := rig.framework.ReadResource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			sameValue(t, "new state", rig.typ, fast.NewState, framework.NewState)
			samePrivate(t, fast.Private, framework.Private)
			sameIdentity(t, rig.identity, fast.NewIdentity, framework.NewIdentity)
			sameDiagnostics(t, fast.Diagnostics, framework.Diagnostics)
		})
	}
}

func TestUpgradeClusterStateAnswersAsTheFramework(t *testing.T) {
	ctx := context.Background()
	rig := newUnchangedRig(t, standinCluster(t, true))
	for _, state := range [][]byte{clusterState(t, nil), clusterState(t, map[string]any{"an_attribute_since_removed": 1})} {
		req := &tfprotov6.UpgradeResourceStateRequest{TypeName: clusterType, RawState: &tfprotov6.RawState{JSON: state}}
		fast, answered := resources.UpgradeClusterState(typeName, req)
		if !answered {
			t.Fatalf("not answered: %s", state)
		}
		framework, err := rig.framework.UpgradeResourceState(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		sameValue(t, "upgraded state", rig.typ, fast.UpgradedState, framework.UpgradedState)
		sameDiagnostics(t, fast.Diagnostics, framework.Diagnostics)
	}
	if _, answered := resources.UpgradeClusterState(typeName, &tfprotov6.UpgradeResourceStateRequest{TypeName: clusterType,
		Version: 1, RawState: &tfprotov6.RawState{JSON: clusterState(t, nil)}}); answered {
		t.Error("answered the upgrade of another schema version")
	}
}
