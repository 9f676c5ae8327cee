package session

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// A record tells a leftover of this configuration by its shape: the record a
// create of the spec writes matches it; another count, GPU count, strategy
// or port range does not.
func TestSameShape(t *testing.T) {
	spec := clusterspectest.ValidSpec()
	rec := record.NewManifest(spec, "owner", "test", record.Placement{})
	if !sameShape(spec, &rec) {
		t.Fatalf("the record of the spec's own create does not match it: %+v", rec)
	}
	for what, change := range map[string]func(*record.Manifest){
		"counts":   func(m *record.Manifest) { m.BundleCtPerNodeList = []int{8} },
		"gpus":     func(m *record.Manifest) { m.NumGPUsPerNode = 4 },
		"strategy": func(m *record.Manifest) { m.PlacementGroupStrategy = "PACK" },
		"unified":  func(m *record.Manifest) { m.UseUnifiedPG = true },
		"ports":    func(m *record.Manifest) { m.PortRangeLow++ },
	} {
		other := record.NewManifest(spec, "owner", "test", record.Placement{})
		change(&other)
		if sameShape(spec, &other) {
			t.Errorf("a record with other %s matches the spec", what)
		}
	}
}
