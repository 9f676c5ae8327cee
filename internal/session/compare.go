package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// AttrNamespace is the computed attribute a cluster created in another Ray
// namespace than the provider's shows as changed.
const AttrNamespace = "namespace"

// GroupDrift is the drift refresh recorded for one placement group.
type GroupDrift struct{ Group, Drift string }

// StateComparison is what a plan compares of a cluster in state with its
// configuration, as plain values.
type StateComparison struct {
	Name, Namespace string // the cluster's, as state holds them
	// Replacing: the plan already replaces it (its topology source changed).
	Replacing bool
	// ShapeChanged: an attribute that forces replacement differs.
	ShapeChanged bool
	Drift        []GroupDrift
	// Removing names the groups an in-place resize removes: their drift
	// (e.g. already gone) replaces nothing.
	Removing []string
	// Held is selected_node_ids in state; Exclude the configured
	// exclude_node_ids, when ExcludeKnown.
	Held         []string
	Exclude      map[string]bool
	ExcludeKnown bool
}

// Replacement is one reason a plan replaces a cluster in state: the
// attribute it shows as changed ("" for an attribute that forces
// replacement by itself) and, for a reason the configuration does not show,
// the warning.
type Replacement struct{ Attribute, Summary, Detail string }

// CompareWithState decides whether a cluster in state is replaced, and
// why: its namespace is no longer the provider's, refresh recorded drift, an
// attribute that forces replacement changed, or exclude_node_ids now lists a
// node it holds. None is an update or no change.
func (d *Session) CompareWithState(c StateComparison) []Replacement {
	var out []Replacement
	if c.Namespace != d.Namespace {
		out = append(out, Replacement{Attribute: AttrNamespace})
	}
	var parts []string
	for _, g := range c.Drift {
		if !slices.Contains(c.Removing, g.Group) {
			parts = append(parts, g.Group+" "+g.Drift)
		}
	}
	if len(parts) > 0 {
		out = append(out, Replacement{Attribute: AttrPlacementGroups, Summary: "Virtual cluster drifted outside Terraform",
			Detail: fmt.Sprintf("Ray's placement groups of %q no longer match the configuration: %s.", c.Name, strings.Join(parts, "; "))})
	}
	if c.ShapeChanged {
		out = append(out, Replacement{})
	}
	if c.Replacing || len(out) > 0 || !c.ExcludeKnown {
		return out
	}
	for _, id := range c.Held {
		if c.Exclude[id] {
			return append(out, Replacement{Attribute: clusterspec.AttrSelectedNodeIDs, Summary: "Virtual cluster holds an excluded node",
				Detail: fmt.Sprintf("exclude_node_ids now lists node %s, which %q holds.", id, c.Name)})
		}
	}
	return out
}
