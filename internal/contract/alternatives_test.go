package contract

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Alternatives belong to a create of chosen nodes only, each with the
// request's groups in order, its record and its ask.
func TestAlternativesValidate(t *testing.T) {
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1}, UseGPUs: true, NumGPUsPerNode: 1,
		MaxColocatedWorkerGroups: 1, SelectNodes: true, SelectedNodeIDs: []string{"n1"}}.WithDefaults()
	elsewhere := spec
	elsewhere.SelectedNodeIDs = []string{"n2"}
	manifest := record.NewManifest(spec, "owner", "test", record.Placement{})
	create := RequestFor(spec, ActionCreate).Owned(spec, "owner", false, &manifest)
	ok := create.WithAlternatives([]clusterspec.Spec{elsewhere}, "owner", "test")
	if err := ok.Validate(); err != nil {
		t.Fatalf("a create with an alternative: %v", err)
	}
	if got := ok.Alternatives[0]; got.Manifest.SelectedNodeIDs[0] != "n2" || got.Nodes["n2"]["GPU"] != 1 || got.Groups[0].Name != create.Groups[0].Name {
		t.Errorf("alternative %+v", got)
	}
	renamed := ok
	renamed.Alternatives = []Alternative{ok.Alternatives[0]}
	renamed.Alternatives[0].Groups = []RequestGroup{{Name: "other", Strategy: "PACK", Bundles: []map[string]float64{{"GPU": 1}}}}
	inspect := RequestFor(spec, ActionInspect).Owned(spec, "owner", false, &manifest)
	inspect.Alternatives = ok.Alternatives
	for name, req := range map[string]Request{"renamed group": renamed, "inspect": inspect} {
		if err := req.Validate(); err == nil || !strings.Contains(err.Error(), "alternatives") {
			t.Errorf("%s: %v; want the alternatives refused", name, err)
		}
	}
}
