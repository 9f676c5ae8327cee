package bench

import (
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// CompareGroups runs the resource's own drift comparison
// (vcluster.CompareGroups) with recorded group ids by name, returning how
// many wanted groups still exist and one drift text per wanted group.
func CompareGroups(want []vcluster.GroupRequest, recorded map[string]string, live []raystate.PlacementGroup) (int, []string) {
	rec := make(map[string]vcluster.RecordedGroup, len(recorded))
	for name, id := range recorded {
		rec[name] = vcluster.RecordedGroup{ID: id}
	}
	present := 0
	drift := make([]string, 0, len(want))
	for _, c := range vcluster.CompareGroups(want, rec, live) {
		if c.Found {
			present++
		}
		drift = append(drift, c.Drift)
	}
	return present, drift
}
