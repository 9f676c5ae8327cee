package bench

import (
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// CompareGroups runs the resource's own drift comparison
// (resources.CompareGroups) with recorded group ids by name, returning how
// many wanted groups still exist and one drift text per wanted group.
func CompareGroups(want []topology.GroupRequest, recorded map[string]string, live []rayclient.PlacementGroup) (int, []string) {
	rec := make(map[string]resources.RecordedGroup, len(recorded))
	for name, id := range recorded {
		rec[name] = resources.RecordedGroup{ID: id}
	}
	present := 0
	drift := make([]string, 0, len(want))
	for _, c := range resources.CompareGroups(want, rec, live) {
		if c.Found {
			present++
		}
		drift = append(drift, c.Drift)
	}
	return present, drift
}
