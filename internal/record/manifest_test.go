package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func readRecordFile(t *testing.T, name string) *Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(clusterspectest.RepoRoot(t), "python", "tests", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

// TestManifestVersions reads the records raytf_attach is tested with
// (python/tests/test_record.py): version 1 keeps no declaration, version 2
// every declared argument.
func TestManifestVersions(t *testing.T) {
	v1 := readRecordFile(t, "record_v1.json")
	spec, unrecovered := v1.DeclaredSpec()
	if v1.HasDeclaration() || len(unrecovered) == 0 || !slices.Equal(spec.BundleCtPerNode, []int{2, 2}) || spec.NumGPUsPerNode != 4 {
		t.Errorf("v1: %+v, unrecovered %v", spec, unrecovered)
	}
	v2 := readRecordFile(t, "record_v2.json")
	if v2.SchemaVersion != ManifestSchemaVersion {
		t.Fatalf("record_v2.json has schema_version %d, the provider writes %d", v2.SchemaVersion, ManifestSchemaVersion)
	}
	spec, unrecovered = v2.DeclaredSpec()
	if len(unrecovered) > 0 || !spec.SelectNodes || spec.Pinning != clusterspec.PinningNode || spec.SegmentSize == nil || *spec.SegmentSize != 2 ||
		spec.ReadyTimeout != 3*time.Minute || spec.ReadyTimeoutText != "3m" || len(spec.SelectedNodeIDs) != 2 || len(spec.ExcludeNodeIDs) != 1 ||
		spec.Topology.RankLabel == "" || len(spec.NodeResourceConstraints) != 2 {
		t.Errorf("v2: %+v, unrecovered %v", spec, unrecovered)
	}
}

// TestManifestKeepsDeclaration: what NewManifest records, DeclaredSpec
// gives back.
func TestManifestKeepsDeclaration(t *testing.T) {
	seg := 2
	spec := clusterspec.Spec{
		Name: "vc", BundleCtPerNode: []int{2, 2, 2, 2}, UseGPUs: true, NumGPUsPerNode: 2, MaxColocatedWorkerGroups: 1,
		Strategy: topology.StrategyPack, UseUnifiedPG: true, SegmentSize: &seg, SelectNodes: true, Pinning: clusterspec.PinningNode,
		SelectedNodeIDs: []string{"a", "b", "c", "d"}, ExcludeNodeIDs: []string{"x"}, ReadyTimeoutText: "2m", ReadyTimeout: 2 * time.Minute,
		NodeResourceConstraints: []topology.Resources{{"r": 0.5}, {}, {}, {}},
		NodeLabelSelectors:      []map[string]string{{"k": "v"}, {}, {}, {}}, TopologyStrategy: map[string]string{"rack": "PACK"},
		Topology: clusterspec.TopologySource{DomainLabel: "d"}, Ports: topology.PortRange{Low: 1600, High: 1700}, Namespace: "ns",
	}.WithDefaults()
	m := NewManifest(spec, "owner", "test", Placement{})
	raw, _ := json.Marshal(m)
	var back Manifest
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, unrecovered := back.DeclaredSpec()
	got.SelectedNodeDomains = spec.SelectedNodeDomains
	if len(unrecovered) > 0 || !cmp.Equal(got.WithDefaults(), spec) {
		t.Errorf("declared spec after a round trip:\n got %+v\nwant %+v", got.WithDefaults(), spec)
	}
}
