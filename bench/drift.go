package bench

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// CompareGroups is the drift comparison of the resource's Read
// (internal/resources/virtual_cluster_state.go refreshGroups, pickGroup and
// groupDrift, which are unexported and work on Terraform framework values):
// for each wanted group it picks the live group of that name (preferring the
// recorded id) and describes how it differs. It returns how many wanted
// groups still exist and one drift text per wanted group ("" when none).
func CompareGroups(want []topology.GroupRequest, recorded map[string]string, live []rayclient.PlacementGroup) (int, []string) {
	liveByName := map[string][]rayclient.PlacementGroup{}
	for _, g := range live {
		liveByName[g.Name] = append(liveByName[g.Name], g)
	}
	present := 0
	drift := make([]string, 0, len(want))
	for _, w := range want {
		id := recorded[w.Name]
		got, ok := pick(liveByName[w.Name], id)
		if !ok {
			drift = append(drift, "removed outside Terraform")
			continue
		}
		present++
		drift = append(drift, groupDrift(w, got, id))
	}
	return present, drift
}

func pick(candidates []rayclient.PlacementGroup, id string) (rayclient.PlacementGroup, bool) {
	for _, g := range candidates {
		if g.PlacementGroupID == id {
			return g, true
		}
	}
	if len(candidates) > 0 {
		return candidates[0], true
	}
	return rayclient.PlacementGroup{}, false
}

func groupDrift(want topology.GroupRequest, got rayclient.PlacementGroup, id string) string {
	var parts []string
	if id != "" && got.PlacementGroupID != id {
		parts = append(parts, fmt.Sprintf("recreated outside Terraform (id %s, recorded %s)", got.PlacementGroupID, id))
	}
	if got.State != "CREATED" {
		parts = append(parts, fmt.Sprintf("Ray reports state %s", got.State))
	}
	if len(got.Bundles) != len(want.Bundles) {
		parts = append(parts, fmt.Sprintf("has %d bundles, the configuration wants %d", len(got.Bundles), len(want.Bundles)))
	} else {
		for i, b := range got.Bundles {
			if !sameResources(b.UnitResources, want.Bundles[i]) {
				parts = append(parts, fmt.Sprintf("bundle %d reserves %s, the configuration wants %s", i,
					formatResources(b.UnitResources), formatResources(want.Bundles[i])))
				break
			}
		}
	}
	return strings.Join(parts, "; ")
}

func sameResources(a, b map[string]float64) bool {
	nonZero := func(m map[string]float64) int {
		n := 0
		for _, v := range m {
			if v != 0 {
				n++
			}
		}
		return n
	}
	if nonZero(a) != nonZero(b) {
		return false
	}
	for k, v := range b {
		if v != 0 && math.Abs(a[k]-v) > 1e-9 {
			return false
		}
	}
	return true
}

func formatResources(r map[string]float64) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %g", k, r[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
