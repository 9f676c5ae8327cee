package driver

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

var updateRequests = flag.Bool("update-requests", false, "rewrite driverpy/tests/testdata/requests.json from Go")

const requestsPath = "driverpy/tests/testdata/requests.json"

// pytestRequests are the requests the driver's pytest suite runs, built by
// Go as the provider builds them, so the Python tests never copy a contract
// value or the request's layout.
func pytestRequests() map[string]any {
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1, 1}, UseGPUs: true, NumGPUsPerNode: 1,
		MaxColocatedWorkerGroups: 1}.WithDefaults()
	manifest := record.NewManifest(spec, "owner-a", "test", record.Placement{})
	selected := spec
	selected.SelectNodes, selected.SelectedNodeIDs = true, []string{"node-1", "node-2"}
	selectedManifest := record.NewManifest(selected, "owner-a", "test", record.Placement{})
	pair := spec
	pair.BundleCtPerNode, pair.NumGPUsPerNode, pair.SelectNodes, pair.SelectedNodeIDs = []int{2}, 2, true, []string{"node-1"}
	pairManifest := record.NewManifest(pair, "owner-a", "test", record.Placement{})
	pairElsewhere := pair
	pairElsewhere.SelectedNodeIDs = []string{"node-2"}
	grown := spec
	grown.BundleCtPerNode = []int{1, 1, 1}
	grownManifest := record.NewManifest(grown, "owner-a", "test", record.Placement{})
	shrunk := spec
	shrunk.BundleCtPerNode = []int{1}
	shrunkManifest := record.NewManifest(shrunk, "owner-a", "test", record.Placement{})
	grow := contract.RequestFor(grown, contract.ActionResize).Owned(grown, "owner-a", false, &grownManifest)
	shrink := contract.RequestFor(shrunk, contract.ActionResize).Owned(shrunk, "owner-a", false, &shrunkManifest)
	shrink.RemoveGroups = []string{"vc-node1", "vc-node2"}
	return map[string]any{
		"resize_grow":     grow,
		"resize_shrink":   shrink,
		"contract":        contract.DriverContract(),
		"create":          contract.RequestFor(spec, contract.ActionCreate).Owned(spec, "owner-a", false, &manifest),
		"create_selected": contract.RequestFor(selected, contract.ActionCreate).Owned(selected, "owner-a", false, &selectedManifest),
		"create_alternative": contract.RequestFor(pair, contract.ActionCreate).Owned(pair, "owner-a", false, &pairManifest).
			WithAlternatives([]clusterspec.Spec{pairElsewhere}, "owner-a", "test"),
		"inspect":         contract.RequestFor(spec, contract.ActionInspect).Owned(spec, "owner-a", false, &manifest),
		"inspect_nowrite": contract.RequestFor(spec, contract.ActionInspect).Owned(spec, "owner-a", false, nil),
		"record":          contract.RequestFor(spec, contract.ActionRecord).Owned(spec, "owner-a", false, &manifest),
		"delete":          contract.RequestFor(spec, contract.ActionDelete).Owned(spec, "owner-a", false, nil),
		"delete_selected": contract.RequestFor(selected, contract.ActionDelete).Owned(selected, "owner-a", false, nil),
		"read":            contract.ReadRequest(spec.Namespace, spec.Name, "vc-node0", "vc-node1"),
		"reservations":    contract.ReservationsRequest(spec.Namespace),
		"quota_write":     contract.QuotaWriteRequest(spec.Namespace, "owner-q", &contract.QuotaCaps{Limits: map[string]float64{"GPU": 8}, LabelLimits: []contract.LabelLimit{{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 4}}}}, false),
		"quota_usage":     contract.QuotaUsageRequest(spec.Namespace),
	}
}

// TestPytestRequestsCurrent fails when the pytest suite's requests differ
// from what Go builds now: `go test ./internal/driver -run TestPytestRequestsCurrent -update-requests`.
func TestPytestRequestsCurrent(t *testing.T) {
	want, err := json.MarshalIndent(pytestRequests(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateRequests {
		if err := os.MkdirAll(filepath.Dir(requestsPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(requestsPath, want, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(requestsPath)
	if err != nil || !bytes.Equal(have, want) {
		t.Fatalf("%s is stale (%v); rerun with -update-requests", requestsPath, err)
	}
}
