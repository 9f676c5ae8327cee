package planning

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Shortage says why groups do not fit the given node capacity: Errors are
// certain failures, Warnings possible ones, Nodes a per-node free/total
// summary for the reader. Messages that differ only in the group they name
// are merged, so 2,048 per-node groups short of the same thing give one line.
type Shortage struct {
	Errors, Warnings []string
	Nodes            string
}

// Diagnostic bounds: a shortage on a 10,000-node cluster must stay readable.
const (
	// MaxSummaryNodes is how many nodes CapacitySummary lists one per line.
	MaxSummaryNodes = 16
	// MaxShortageLines is how many error lines Detail shows.
	MaxShortageLines = 8
	// maxNamedGroups is how many group names a merged message lists.
	maxNamedGroups = 3
)

// ExplainShortage checks groups against capacity with topology.CheckPlacement
// and summarises the nodes. It is the one explanation of "it does not fit",
// used at plan time (capacity from a Snapshot) and after a failed create
// (capacity from the driver's NodeView).
func ExplainShortage(groups []clusterspec.GroupRequest, capacity []topology.NodeCapacity) Shortage {
	f := topology.CheckPlacement(groups, capacity)
	for _, msgs := range [][]string{f.Errors, f.Warnings} {
		for i, m := range msgs {
			msgs[i] = readableMessage(m)
		}
	}
	return Shortage{Errors: mergeByGroup(f.Errors), Warnings: mergeByGroup(f.Warnings), Nodes: CapacitySummary(capacity)}
}

// Detail is the whole explanation as one text: the error lines (at most
// MaxShortageLines, then a count) and the node summary once.
func (s Shortage) Detail() string {
	lines := s.Errors
	if len(lines) > MaxShortageLines {
		lines = append(slices.Clone(lines[:MaxShortageLines]), fmt.Sprintf("... and %d more problems", len(s.Errors)-MaxShortageLines))
	}
	return strings.Join(lines, "\n") + "\n\n" + s.Nodes
}

var groupName = regexp.MustCompile(`group "[^"]*"`)

// mergeByGroup folds messages that are equal once the group name is taken
// out into the first of them, naming how many other groups share it.
func mergeByGroup(msgs []string) []string {
	if len(msgs) < 2 {
		return msgs
	}
	type merged struct {
		first  string
		others []string
	}
	var order []string
	byShape := map[string]*merged{}
	for _, m := range msgs {
		shape := groupName.ReplaceAllString(m, `group ""`)
		if e, ok := byShape[shape]; ok {
			if name := groupName.FindString(m); name != "" {
				e.others = append(e.others, strings.TrimPrefix(name, "group "))
			}
			continue
		}
		byShape[shape] = &merged{first: m}
		order = append(order, shape)
	}
	out := make([]string, 0, len(order))
	for _, shape := range order {
		e := byShape[shape]
		msg := e.first
		if n := len(e.others); n > 0 {
			named := e.others[:min(n, maxNamedGroups)]
			msg += fmt.Sprintf(" (the same for %d more group(s): %s", n, strings.Join(named, ", "))
			if n > len(named) {
				msg += ", ..."
			}
			msg += ")"
		}
		out = append(out, msg)
	}
	return out
}

// CapacitySummary lists free CPU/GPU per alive node: every node of a small
// cluster in id order; of a large one a total line, the MaxSummaryNodes
// nodes with the most free GPUs (then CPUs), the ones closest to holding a
// bundle, and how many more there are.
func CapacitySummary(capacity []topology.NodeCapacity) string {
	free := func(c topology.NodeCapacity) topology.Resources {
		if c.Available == nil {
			return c.Total
		}
		return c.Available
	}
	line := func(c topology.NodeCapacity) string {
		avail := free(c)
		domain, rank := topology.ParseNodeTopology(c.Total)
		return fmt.Sprintf("  %s: CPU %g/%g, GPU %g/%g free, %s, topo_rank %d", raystate.ShortID(c.ID),
			amount(avail["CPU"]), amount(c.Total["CPU"]), amount(avail["GPU"]), amount(c.Total["GPU"]), domain, rank)
	}
	shown := capacity
	header := "Alive nodes (free/total):"
	if len(capacity) > MaxSummaryNodes {
		var sum [4]float64
		domains := map[string]bool{}
		for _, c := range capacity {
			avail := free(c)
			sum[0], sum[1], sum[2], sum[3] = sum[0]+avail["CPU"], sum[1]+c.Total["CPU"], sum[2]+avail["GPU"], sum[3]+c.Total["GPU"]
			if domain, _ := topology.ParseNodeTopology(c.Total); domain != topology.NVLinkDomainUnknown {
				domains[domain] = true
			}
		}
		header = fmt.Sprintf("%d alive nodes in %d NVLink domain(s), CPU %g/%g, GPU %g/%g free; the %d with the most free GPUs (free/total):",
			len(capacity), len(domains), amount(sum[0]), amount(sum[1]), amount(sum[2]), amount(sum[3]), MaxSummaryNodes)
		shown = slices.Clone(capacity)
		slices.SortStableFunc(shown, func(a, b topology.NodeCapacity) int {
			fa, fb := free(a), free(b)
			return cmp.Or(cmp.Compare(fb["GPU"], fa["GPU"]), cmp.Compare(fb["CPU"], fa["CPU"]), strings.Compare(a.ID, b.ID))
		})
		shown = shown[:MaxSummaryNodes]
	}
	lines := make([]string, 0, len(shown)+2)
	lines = append(lines, header)
	for _, c := range shown {
		lines = append(lines, line(c))
	}
	if more := len(capacity) - len(shown); more > 0 {
		lines = append(lines, fmt.Sprintf("  ... and %d more", more))
	}
	return strings.Join(lines, "\n")
}

// amount rounds a resource amount to Ray's 1e-4 fixed point, so that sums
// print as 1.73, not 1.7300000000000022.
func amount(v float64) float64 { return math.Round(v/topology.ResourceUnit) * topology.ResourceUnit }

// ShortageAttribute names the configuration attribute behind a shortage:
// max_colocated_worker_groups when it asks more CPUs per bundle than any
// node has, node_resource_constraints when no node has a constrained
// resource at all, else bundle_ct_per_node_list (too many bundles).
func ShortageAttribute(s clusterspec.Spec, capacity []topology.NodeCapacity) string {
	s = s.WithDefaults()
	most := topology.Resources{}
	for _, c := range capacity {
		for k, v := range c.Total {
			most[k] = max(most[k], v)
		}
	}
	if float64(s.MaxColocatedWorkerGroups) > most["CPU"] {
		return clusterspec.AttrMaxColocatedWorkerGroups
	}
	for _, constraint := range s.NodeResourceConstraints {
		for k, v := range constraint {
			if v > most[k] {
				return clusterspec.AttrNodeResourceConstraints
			}
		}
	}
	return clusterspec.AttrBundleCtPerNodeList
}

// ExplainApplyShortage explains a create that Ray could not place in time:
// the groups still pending checked against the capacities the driver saw
// (nodes, in node id order). It returns "" without either.
func ExplainApplyShortage(spec clusterspec.Spec, stillPending []string, nodes []topology.NodeCapacity) string {
	if len(nodes) == 0 || len(stillPending) == 0 {
		return ""
	}
	var pending []clusterspec.GroupRequest
	for _, g := range FeasibilityGroups(spec) { // with node pins: a pinned group needs its own nodes free
		if slices.Contains(stillPending, g.Name) {
			pending = append(pending, g)
		}
	}
	s := ExplainShortage(pending, withPins(nodes))
	var b strings.Builder
	switch {
	case len(s.Errors) > 0:
		b.WriteString("Why: " + strings.Join(s.Errors[:min(len(s.Errors), MaxShortageLines)], "; "))
	case len(s.Warnings) > 0:
		b.WriteString("Why (possibly): " + strings.Join(s.Warnings[:min(len(s.Warnings), MaxShortageLines)], "; "))
	default:
		names := make([]string, 0, maxNamedGroups)
		for _, g := range pending[:min(len(pending), maxNamedGroups)] {
			names = append(names, fmt.Sprintf("%q", g.Name))
		}
		if len(pending) > maxNamedGroups {
			names = append(names, fmt.Sprintf("and %d more", len(pending)-maxNamedGroups))
		}
		where := "on the cluster"
		if nodes := spec.PinnedNodes(); len(nodes) > 0 {
			where = "on the nodes they are pinned to (" + strings.Join(nodes, ", ") + ")"
		}
		b.WriteString("When the wait ended, Ray had not placed " + strings.Join(names, ", ") + ", although their resources were free " +
			where + " a moment later: other placement groups queued before them, or the holders left just then. " +
			"Apply again, or raise ready_timeout.")
	}
	b.WriteString("\n\n" + s.Nodes)
	return b.String()
}
