package drift

import (
	"math"
	"slices"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The one rule for "does the live group match": how amounts compare, and
// how a live group differs from what was recorded of it. Drift detection
// (CompareGroups), the ray_virtual_cluster data source, driver.py (it gets
// AmountUnit in the contract) and raytf_attach (cluster.py) follow it; the
// shared vectors in python/tests/testdata/live_match.json keep them equal
// (TestMatchVectors here, test_live_match.py there, and
// TestDriverMatchRuleMatchesGo in internal/driver).

// amountSlack absorbs float noise in the unit arithmetic: two amounts one
// unit apart are different even when their difference rounds below a unit.
const amountSlack = 1e-6

// SameAmount reports whether two resource amounts are the same for Ray:
// less than one AmountUnit apart.
func SameAmount(a, b float64) bool {
	return math.Abs(a/topology.ResourceUnit-b/topology.ResourceUnit) < 1-amountSlack
}

// SameResources reports whether two resource maps reserve the same amounts;
// entries that are zero for Ray (below one unit) count as absent, as Ray
// drops them.
func SameResources(a, b map[string]float64) bool {
	for k, v := range a {
		if !SameAmount(v, b[k]) {
			return false
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && !SameAmount(v, 0) {
			return false
		}
	}
	return true
}

// Kinds of LiveMismatch, in the order MatchRecorded reports them.
const (
	MismatchMissing     = "missing"      // no live group of the name
	MismatchRecreated   = "recreated"    // a live group of the name with another id
	MismatchState       = "state"        // the group is not CREATED
	MismatchBundleCount = "bundle_count" // the live group has another number of bundles
	MismatchMoved       = "moved"        // a bundle is on another node than recorded
)

// LiveMismatch is one way a live group differs from its record.
type LiveMismatch struct {
	Kind string `json:"kind"`
	// LiveID is the live group's id (recreated), State its state (state),
	// BundleCount its bundle count (bundle_count).
	LiveID      string `json:"live_id,omitempty"`
	State       string `json:"state,omitempty"`
	BundleCount int    `json:"bundle_count,omitempty"`
	// Bundle, From and To say which bundle moved from which node (moved).
	Bundle int    `json:"bundle,omitempty"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
}

// MatchRecorded compares a recorded group (ID "" when none was recorded,
// BundleCount 0 when unknown) with the live groups of its name (the one
// with the recorded id is preferred). A missing group is the only mismatch
// reported for it; bundles moved are looked at only when the live group is
// the recorded one (a recreated group was never placed as recorded).
func MatchRecorded(rec RecordedGroup, candidates []raystate.PlacementGroup) (raystate.PlacementGroup, []LiveMismatch) {
	got, ok := pickGroup(candidates, rec.ID)
	if !ok {
		return got, []LiveMismatch{{Kind: MismatchMissing}}
	}
	var out []LiveMismatch
	recreated := rec.ID != "" && got.PlacementGroupID != rec.ID
	if recreated {
		out = append(out, LiveMismatch{Kind: MismatchRecreated, LiveID: got.PlacementGroupID})
	}
	if got.State != raystate.PlacementGroupStateCreated {
		out = append(out, LiveMismatch{Kind: MismatchState, State: got.State})
	}
	if rec.BundleCount > 0 && len(got.Bundles) != rec.BundleCount {
		out = append(out, LiveMismatch{Kind: MismatchBundleCount, BundleCount: len(got.Bundles)})
	}
	if !recreated {
		bundles := slices.Clone(got.Bundles)
		slices.SortFunc(bundles, func(a, b raystate.Bundle) int { return a.BundleIndex - b.BundleIndex })
		for _, b := range bundles {
			if was, ok := rec.BundleNodes[b.BundleIndex]; ok && was != "" && b.NodeID != "" && b.NodeID != was {
				out = append(out, LiveMismatch{Kind: MismatchMoved, Bundle: b.BundleIndex, From: was, To: b.NodeID})
			}
		}
	}
	return got, out
}
