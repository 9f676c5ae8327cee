package drift

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// RecordedGroup is what the state remembers of one placement group.
type RecordedGroup struct {
	ID          string
	BundleNodes map[int]string // bundle index -> node id it was probed on
	// BundleCount is the number of bundles the group has (0: unknown).
	BundleCount int
}

// GroupCheck is one wanted group compared with what Ray reports.
type GroupCheck struct {
	Want  clusterspec.GroupRequest
	Live  raystate.PlacementGroup
	Found bool
	Drift string // empty when the group matches
}

// CompareGroups is refresh's drift detection: for every wanted group it picks
// the live group of that name (preferring the recorded id) and describes how
// it differs: removed, recreated, reshaped, or not CREATED for another
// reason than a node's loss (RESCHEDULING, bundles moved: the plan's call).
func CompareGroups(want []clusterspec.GroupRequest, recorded map[string]RecordedGroup, live []raystate.PlacementGroup) []GroupCheck {
	liveByName := map[string][]raystate.PlacementGroup{}
	for _, g := range live {
		liveByName[g.Name] = append(liveByName[g.Name], g)
	}
	out := make([]GroupCheck, 0, len(want))
	for _, w := range want {
		rec := recorded[w.Name]
		rec.BundleCount = len(w.Bundles)
		got, mismatches := MatchRecorded(rec, liveByName[w.Name])
		if len(mismatches) > 0 && mismatches[0].Kind == MismatchMissing {
			out = append(out, GroupCheck{Want: w, Drift: "removed outside Terraform"})
			continue
		}
		out = append(out, GroupCheck{Want: w, Live: got, Found: true, Drift: groupDrift(w, got, rec, mismatches)})
	}
	return out
}

// pickGroup prefers the group with the recorded id among same-named groups.
func pickGroup(candidates []raystate.PlacementGroup, id string) (raystate.PlacementGroup, bool) {
	for _, g := range candidates {
		if g.PlacementGroupID == id {
			return g, true
		}
	}
	if len(candidates) > 0 {
		return candidates[0], true
	}
	return raystate.PlacementGroup{}, false
}

// groupDrift words how a live group differs from the wanted one: the
// mismatches of MatchRecorded, and bundles that reserve other amounts.
func groupDrift(want clusterspec.GroupRequest, got raystate.PlacementGroup, rec RecordedGroup, mismatches []LiveMismatch) string {
	var parts []string
	for _, m := range mismatches {
		switch m.Kind {
		case MismatchRecreated:
			parts = append(parts, fmt.Sprintf("recreated outside Terraform (id %s, recorded %s)", m.LiveID, rec.ID))
		case MismatchState:
			if !recovering(m, mismatches) {
				parts = append(parts, fmt.Sprintf("Ray reports state %s", m.State))
			}
		case MismatchBundleCount:
			parts = append(parts, fmt.Sprintf("has %d bundles, the configuration wants %d", m.BundleCount, len(want.Bundles)))
		}
	}
	if len(got.Bundles) == len(want.Bundles) {
		for i, b := range got.Bundles {
			if !SameResources(b.UnitResources, want.Bundles[i]) {
				parts = append(parts, fmt.Sprintf("bundle %d reserves %s, the configuration wants %s", i, raystate.FormatResources(b.UnitResources), raystate.FormatResources(want.Bundles[i])))
				break
			}
		}
	}
	return strings.Join(parts, "; ")
}

// recovering tells a group Ray is placing again after a node's loss (the
// recorded group, RESCHEDULING) from drift: the plan decides whether it
// waits for Ray or replaces (a pinned bundle, recovery_timeout). Bundles Ray
// placed again elsewhere (moved) are no drift either: the plan re-probes them.
func recovering(m LiveMismatch, all []LiveMismatch) bool {
	return m.Kind == MismatchState && m.State == raystate.PlacementGroupStateRescheduling &&
		!slices.ContainsFunc(all, func(o LiveMismatch) bool { return o.Kind == MismatchRecreated })
}

// CompareLive is CompareGroups for the spec's groups plus the drift of what
// Ray keeps of node_label_selectors, node pins and topology_strategy: the
// bundles' label selectors and the unified group's topology strategy.
func CompareLive(s clusterspec.Spec, recorded map[string]RecordedGroup, live []raystate.PlacementGroup) []GroupCheck {
	checks := CompareGroups(s.Groups(), recorded, live)
	for i, c := range checks {
		if !c.Found {
			continue
		}
		var parts []string
		if c.Drift != "" {
			parts = append(parts, c.Drift)
		}
		if d := nativeDrift(s, c.Want, c.Live); d != "" {
			parts = append(parts, d)
		}
		checks[i].Drift = strings.Join(parts, "; ")
	}
	return checks
}

// nativeDrift compares the label selectors and topology strategy Ray
// reports for got with those the spec sends for want. The node-level entry
// of the topology strategy is not compared: Ray keeps it as the strategy.
func nativeDrift(s clusterspec.Spec, want clusterspec.GroupRequest, got raystate.PlacementGroup) string {
	var parts []string
	selectors := s.BundleSelectors(want)
	// A server that reports no label_selector at all cannot show drift.
	reported := slices.ContainsFunc(got.Bundles, func(b raystate.Bundle) bool { return b.LabelSelector != nil })
	for i, b := range got.Bundles {
		if !reported {
			break
		}
		var w map[string]string
		if i < len(selectors) {
			w = selectors[i]
		}
		if !clusterspec.SameSelector(b.LabelSelector, w) {
			parts = append(parts, fmt.Sprintf("bundle %d has label selector %s, the configuration wants %s",
				b.BundleIndex, clusterspec.FormatSelector(b.LabelSelector), clusterspec.FormatSelector(w)))
			break
		}
	}
	wantTopo := map[string]string{}
	for k, v := range s.GroupTopologyStrategy(want) {
		if k != clusterspec.NodeIDLabel {
			wantTopo[k] = v
		}
	}
	if !clusterspec.SameSelector(got.TopologyStrategy, wantTopo) {
		parts = append(parts, fmt.Sprintf("has topology strategy %s, the configuration wants %s",
			clusterspec.FormatSelector(got.TopologyStrategy), clusterspec.FormatSelector(wantTopo)))
	}
	return strings.Join(parts, "; ")
}
