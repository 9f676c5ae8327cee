package bench

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// CompareGroups runs the resource's own drift comparison
// (drift.CompareGroups) with recorded group ids by name, returning how
// many wanted groups still exist and one drift text per wanted group.
func CompareGroups(want []clusterspec.GroupRequest, recorded map[string]string, live []raystate.PlacementGroup) (int, []string) {
	rec := make(map[string]drift.RecordedGroup, len(recorded))
	for name, id := range recorded {
		rec[name] = drift.RecordedGroup{ID: id}
	}
	present := 0
	drifts := make([]string, 0, len(want))
	for _, c := range drift.CompareGroups(want, rec, live) {
		if c.Found {
			present++
		}
		drifts = append(drifts, c.Drift)
	}
	return present, drifts
}
