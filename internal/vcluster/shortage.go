package vcluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Shortage says why groups do not fit the given node capacity: Errors are
// certain failures, Warnings possible ones, Nodes a per-node free/total
// summary for the reader.
type Shortage struct {
	Errors, Warnings []string
	Nodes            string
}

// ExplainShortage checks groups against capacity with topology.CheckPlacement
// and summarises the nodes. It is the one explanation of "it does not fit",
// used at plan time (capacity from a Snapshot) and after a failed create
// (capacity from the driver's NodeView).
func ExplainShortage(groups []GroupRequest, capacity []topology.NodeCapacity) Shortage {
	f := topology.CheckPlacement(groups, capacity)
	return Shortage{Errors: f.Errors, Warnings: f.Warnings, Nodes: CapacitySummary(capacity)}
}

// CapacitySummary lists free CPU/GPU per alive node.
func CapacitySummary(capacity []topology.NodeCapacity) string {
	lines := make([]string, 0, len(capacity))
	for _, c := range capacity {
		avail := c.Available
		if avail == nil {
			avail = c.Total
		}
		domain, rank := topology.ParseNodeTopology(c.Total)
		lines = append(lines, fmt.Sprintf("  %s: CPU %g/%g, GPU %g/%g free, %s, topo_rank %d",
			ShortID(c.ID), avail["CPU"], c.Total["CPU"], avail["GPU"], c.Total["GPU"], domain, rank))
	}
	return "Alive nodes (free/total):\n" + strings.Join(lines, "\n")
}

// NodeCapacities turns the driver's per-node view into capacities.
func NodeCapacities(view []NodeView) []topology.NodeCapacity {
	out := make([]topology.NodeCapacity, 0, len(view))
	for _, n := range view {
		out = append(out, topology.NodeCapacity{ID: n.NodeID, Total: n.Total, Available: n.Free})
	}
	slices.SortFunc(out, func(a, b topology.NodeCapacity) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// ExplainApplyShortage explains a create that Ray could not place in time:
// the pending groups checked against the free resources the driver saw.
// It returns "" when the result carries no node view.
func ExplainApplyShortage(spec Spec, res *Result) string {
	if res == nil || len(res.Nodes) == 0 || len(res.Pending) == 0 {
		return ""
	}
	var pending []GroupRequest
	for _, g := range spec.Groups() {
		if slices.Contains(res.Pending, g.Name) {
			pending = append(pending, g)
		}
	}
	s := ExplainShortage(pending, NodeCapacities(res.Nodes))
	var b strings.Builder
	switch {
	case len(s.Errors) > 0:
		b.WriteString("Why: " + strings.Join(s.Errors, "; "))
	case len(s.Warnings) > 0:
		b.WriteString("Why (possibly): " + strings.Join(s.Warnings, "; "))
	default:
		names := make([]string, len(pending))
		for i, g := range pending {
			names[i] = fmt.Sprintf("%q", g.Name)
		}
		b.WriteString("The resources for " + strings.Join(names, ", ") +
			" appear free now; the groups may be competing with other pending requests.")
	}
	b.WriteString("\n\n" + s.Nodes)
	return b.String()
}
