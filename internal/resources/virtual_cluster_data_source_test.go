package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// testRecord is the record fixture the Python attach helper's tests use too.
func testRecord(t *testing.T) *record.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "python", "tests", "testdata", "record_v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// liveOf is what the state API reports for rec's groups, all CREATED where recorded.
func liveOf(rec *record.Manifest) []raystate.PlacementGroup {
	var live []raystate.PlacementGroup
	for _, g := range rec.Groups {
		pg := raystate.PlacementGroup{PlacementGroupID: g.ID, Name: g.Name, State: raystate.PlacementGroupStateCreated}
		for _, b := range rec.Bundles {
			if b.PlacementGroup == g.Name {
				pg.Bundles = append(pg.Bundles, raystate.Bundle{PlacementGroupID: g.ID, BundleIndex: b.BundleIndex, NodeID: b.NodeID})
			}
		}
		live = append(live, pg)
	}
	return live
}

func TestVirtualClusterDataSourceFromRecord(t *testing.T) {
	rec := testRecord(t)
	m, summary, detail := readVirtualCluster("train", "terraform-ray", rec, nil, liveOf(rec))
	if summary != "" {
		t.Fatalf("%s: %s", summary, detail)
	}
	if m.ID.ValueString() != "terraform-ray/train" || m.WorldSize.ValueInt64() != 4 || m.NodeCount.ValueInt64() != 2 ||
		m.MasterAddress.ValueString() != rec.MasterAddress || m.MasterPort.ValueInt64() != int64(rec.MasterPort) ||
		m.OwnerID.ValueString() != record.StoredOwner(rec.Owner) || strings.Contains(m.OwnerID.ValueString(), rec.Owner) || m.ProviderVersion.ValueString() != rec.ProviderVersion || !m.UseGPUs.ValueBool() {
		t.Fatalf("cluster attributes: %+v", m)
	}
	if len(m.PlacementGroups) != 2 || m.PlacementGroups[1] != (dataGroup{Name: "train-node1", ID: rec.Groups[1].ID,
		State: raystate.PlacementGroupStateCreated, Strategy: "PACK", NodeIndex: 1, BundleCount: 2}) {
		t.Fatalf("groups: %+v", m.PlacementGroups)
	}
	if len(m.Bundles) != 4 {
		t.Fatalf("bundles: %+v", m.Bundles)
	}
	for i, b := range m.Bundles {
		want := rec.Bundles[i]
		if b.Rank != int64(i) || b.NodeID != want.NodeID || b.GPUID.ValueInt64() != int64(*want.GPUID) || b.Port != int64(want.Port) ||
			m.NVLinkDomainPerBundle[want.GlobalIndex] != want.NVLinkDomain {
			t.Fatalf("bundle %d: %+v, record %+v", i, b, want)
		}
	}
}

func TestVirtualClusterDataSourceWithoutGPUs(t *testing.T) {
	rec := testRecord(t)
	rec.UseGPUs = false
	for i := range rec.Bundles {
		rec.Bundles[i].GPUID = nil
	}
	m, summary, _ := readVirtualCluster("train", "terraform-ray", rec, nil, liveOf(rec))
	if summary != "" || !m.Bundles[0].GPUID.IsNull() {
		t.Fatalf("gpu_id without GPUs: %s %+v", summary, m.Bundles[0])
	}
}

// Every refusal names the cluster and its namespace and says what to do.
func TestVirtualClusterDataSourceErrors(t *testing.T) {
	cases := []struct {
		name   string
		change func(rec **record.Manifest, tomb **record.Tombstone, live *[]raystate.PlacementGroup)
		want   []string
	}{
		{"no record", func(rec **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			*rec, *live = nil, nil
		}, []string{"Virtual cluster not found", "no record", "key vc/terraform-ray/train", "Apply the configuration"}},
		{"destroyed", func(rec **record.Manifest, tomb **record.Tombstone, _ *[]raystate.PlacementGroup) {
			*rec, *tomb = nil, &record.Tombstone{DeletedBy: "0123456789abcdef", DeletedAt: "2026-12-02T19:00:00Z"}
		}, []string{"Virtual cluster not found", "destroyed at 2026-12-02T19:00:00Z", "owner " + record.OwnerPrefix("0123456789abcdef")}},
		{"groups without a record", func(rec **record.Manifest, _ **record.Tombstone, _ *[]raystate.PlacementGroup) {
			*rec = nil
		}, []string{"Virtual cluster not found", `"train-node0" (CREATED)`, "terraform import"}},
		{"newer schema", func(rec **record.Manifest, _ **record.Tombstone, _ *[]raystate.PlacementGroup) {
			(*rec).SchemaVersion = record.ManifestSchemaVersion + 1
		}, []string{"too new", fmt.Sprintf("schema_version %d", record.ManifestSchemaVersion+1), "upgrade"}},
		{"unreadable", func(rec **record.Manifest, _ **record.Tombstone, _ *[]raystate.PlacementGroup) {
			*rec = &record.Manifest{}
		}, []string{"unreadable", "not a cluster record"}},
		{"missing group", func(_ **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			*live = (*live)[:1]
		}, []string{"not ready", "train-node1 (id b2b2", "removed outside Terraform", "re-apply"}},
		{"recreated group", func(_ **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			(*live)[1].PlacementGroupID = "ffff"
		}, []string{"not ready", "train-node1 was recreated outside Terraform: its id is ffff"}},
		{"rescheduling", func(_ **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			(*live)[0].State = raystate.PlacementGroupStateRescheduling
		}, []string{"not ready", "train-node0 is RESCHEDULING", "retry later"}},
		{"pending", func(_ **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			(*live)[0].State = raystate.PlacementGroupStatePending
		}, []string{"train-node0 is PENDING, not CREATED"}},
		{"being created", func(rec **record.Manifest, _ **record.Tombstone, _ *[]raystate.PlacementGroup) {
			(*rec).Groups[0].ID = ""
		}, []string{"train-node0 is being created"}},
		{"moved bundle", func(_ **record.Manifest, _ **record.Tombstone, live *[]raystate.PlacementGroup) {
			(*live)[1].Bundles[0].NodeID = "elsewhere"
		}, []string{"train-node1 bundle 0 is on node elsewhere, the record says b39466"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := testRecord(t)
			live := liveOf(rec)
			var tomb *record.Tombstone
			c.change(&rec, &tomb, &live)
			_, summary, detail := readVirtualCluster("train", "terraform-ray", rec, tomb, live)
			got := summary + "\n" + detail
			for _, want := range append(c.want, `virtual cluster "train" in Ray namespace "terraform-ray"`) {
				if !strings.Contains(got, want) {
					t.Errorf("missing %q in:\n%s", want, got)
				}
			}
		})
	}
}

// The model fits the schema (State.Set would fail at read time otherwise)
// and bundles have the resource's type, so configurations can swap one for the other.
func TestVirtualClusterDataSourceSchema(t *testing.T) {
	ctx := context.Background()
	var resp datasource.SchemaResponse
	(&virtualClusterDataSource{}).Schema(ctx, datasource.SchemaRequest{}, &resp)
	if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
		t.Fatal(diags)
	}
	rec := testRecord(t)
	m, _, _ := readVirtualCluster("train", "terraform-ray", rec, nil, liveOf(rec))
	state := tfsdk.State{Schema: resp.Schema, Raw: tftypes.NewValue(resp.Schema.Type().TerraformType(ctx), nil)}
	if diags := state.Set(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	if got := resp.Schema.Attributes["bundles"].GetType(); !got.Equal(types.ListType{ElemType: bundleObjectType}) {
		t.Fatalf("bundles type %s, the resource's is %s", got, bundleObjectType)
	}
}
