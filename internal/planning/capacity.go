package planning

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// checkedCapacity is the node capacity the checks compare the cluster with:
// what is free now (the spec's own groups not counted, a replacement frees
// them first) under CapacityFree, the alive nodes' totals otherwise.
func checkedCapacity(s clusterspec.Spec, snap *Snapshot) []topology.NodeCapacity {
	capacity := snap.Capacity(s.GroupNames())
	if s.CapacityMode() != clusterspec.CapacityFree {
		for i := range capacity {
			capacity[i].Available = nil // CheckPlacement then reads Total
		}
	}
	return capacity
}

// nodeDemand is what the largest logical node needs on one node: the sum of
// each logical node's bundles, the per-resource maximum over logical nodes.
// A node that holds it holds any logical node's bundles.
func nodeDemand(s clusterspec.Spec) topology.Resources {
	s = s.WithDefaults()
	most := topology.Resources{}
	for i, c := range s.BundleCtPerNode {
		if c <= 0 {
			continue
		}
		for k, v := range s.NodeBundle(i) {
			most[k] = max(most[k], v*float64(c))
		}
	}
	return most
}

// holds reports whether have holds need, in Ray's fixed-point units.
func holds(need, have topology.Resources) bool {
	for k, v := range need {
		if amount(have[k]) < amount(v) {
			return false
		}
	}
	return true
}

// nodeUse is one alive node as node selection sees it.
type nodeUse struct {
	free    topology.Resources // what the checks count as available
	total   topology.Resources
	holders []string // groups holding resources on it, other than the spec's own
	claimed bool     // it cannot hold the cluster beside other reservations (Snapshot.Claims)
}

// nodeUses is every alive node's free resources under the spec's capacity
// mode, minus the bundles that others (clusters this process chose nodes for
// and whose groups snap does not list yet) pinned to it, and which placement
// groups hold it.
func nodeUses(s clusterspec.Spec, snap *Snapshot, others []clusterspec.GroupRequest) map[string]*nodeUse {
	out := map[string]*nodeUse{}
	for _, c := range checkedCapacity(s, snap) {
		free := c.Available
		if free == nil {
			free = c.Total
		}
		out[c.ID] = &nodeUse{free: maps.Clone(free), total: c.Total}
	}
	for id, who := range snap.Claims {
		if u := out[id]; u != nil {
			u.claimed = true
			u.holders = append(u.holders, who)
		}
	}
	for id, res := range snap.Reserved {
		if u := out[id]; u != nil {
			for k, v := range res {
				u.free[k] -= v
			}
		}
	}
	own := s.GroupNames()
	listed := map[string]bool{}
	for _, g := range snap.Groups {
		listed[g.Name] = true
		if own[g.Name] || g.State != raystate.PlacementGroupStateCreated {
			continue
		}
		seen := map[string]bool{}
		for _, b := range g.Bundles {
			if u := out[b.NodeID]; u != nil && !seen[b.NodeID] {
				seen[b.NodeID] = true
				u.holders = append(u.holders, holderName(g))
			}
		}
	}
	if s.CapacityMode() != clusterspec.CapacityFree {
		return out
	}
	for _, g := range others {
		if listed[g.Name] || own[g.Name] {
			continue // counted from Ray's list
		}
		seen := map[string]bool{}
		for _, b := range g.Bundles {
			id := pinnedNode(b)
			u := out[id]
			if u == nil {
				continue
			}
			for k, v := range b {
				if _, pseudo := pseudoResource(k); !pseudo {
					u.free[k] -= v
				}
			}
			if !seen[id] {
				seen[id] = true
				u.holders = append(u.holders, fmt.Sprintf("%q (being created)", g.Name))
			}
		}
	}
	return out
}

// holderName names a placement group for a reader: its name, or its id
// when it has none.
func holderName(g raystate.PlacementGroup) string {
	if g.Name != "" {
		return fmt.Sprintf("%q", g.Name)
	}
	return "unnamed group " + g.PlacementGroupID
}

// pinnedNode is the node a feasibility bundle is pinned to, or "".
func pinnedNode(b topology.Resources) string {
	for k := range b {
		if id, ok := strings.CutPrefix(k, pinnedNodeResource); ok {
			return id
		}
	}
	return ""
}

// pseudoResource reports whether name stands for a pin or selector in the
// static check rather than a resource Ray has, with how to say it.
func pseudoResource(name string) (readable string, ok bool) {
	switch {
	case strings.HasPrefix(name, pinnedNodeResource):
		return clusterspec.NodeIDLabel + "=" + strings.TrimPrefix(name, pinnedNodeResource), true
	case strings.HasPrefix(name, pinnedLabelResource):
		return strings.TrimPrefix(name, pinnedLabelResource), true
	case strings.HasPrefix(name, selectorResourcePrefix):
		return "label selector " + strings.TrimPrefix(name, selectorResourcePrefix), true
	}
	return "", false
}

// pseudoInVector and pseudoBare find the static check's stand-ins for pins
// and selectors in its messages: inside a quoted resource vector
// ("pinned_node:<id>":0.0001) and bare (pinned_node:<id> 0 free).
var (
	pseudoPrefixes = "(?:" + regexp.QuoteMeta(pinnedNodeResource) + "|" + regexp.QuoteMeta(pinnedLabelResource) + "|" +
		regexp.QuoteMeta(selectorResourcePrefix) + ")"
	pseudoInVector = regexp.MustCompile(`"(` + pseudoPrefixes + `(?:[^"\\]|\\.)*)":[0-9.e+-]+`)
	pseudoBare     = regexp.MustCompile(pseudoPrefixes + `\S+`)
)

// readableMessage rewrites the static check's stand-ins in msg as what they
// mean (a bundle "on ray.io/node-id=<id>"), never as resources.
func readableMessage(msg string) string {
	msg = pseudoInVector.ReplaceAllStringFunc(msg, func(m string) string {
		name, err := strconv.Unquote(`"` + pseudoInVector.FindStringSubmatch(m)[1] + `"`)
		if err != nil {
			return m
		}
		readable, _ := pseudoResource(name)
		return strconv.Quote("on " + readable)
	})
	return pseudoBare.ReplaceAllStringFunc(msg, func(m string) string {
		readable, _ := pseudoResource(m)
		return "(" + readable + ")"
	})
}

// ChooseFreeNodes is ChooseLabelledNodes over the nodes that can hold the
// cluster's largest logical node under its capacity mode: with
// CapacityFree what other placement groups leave free (others: groups this
// process is creating that snap does not list yet), else the nodes' totals.
// When no complete segments remain, the error lists per NVLink domain the
// nodes left out and the placement groups that hold them.
func ChooseFreeNodes(s clusterspec.Spec, snap *Snapshot, exclude map[string]bool, others []clusterspec.GroupRequest) (ids, domains []string, issues []clusterspec.Issue) {
	topo := snap.TopologyFrom(s.Topology)
	need := nodeDemand(s)
	uses := nodeUses(s, snap, others)
	usable := make([]topology.Node, 0, len(topo))
	var left []topology.Node
	for _, n := range topo {
		if u := uses[n.ID]; u != nil && (!holds(need, u.free) || u.claimed || s.ExclusiveNodes && len(u.holders) > 0) && !exclude[n.ID] &&
			n.Domain != topology.NVLinkDomainUnknown {
			left = append(left, n)
			continue
		}
		usable = append(usable, n)
	}
	ids, domains, issues = ChooseLabelledNodes(s, usable, exclude, NodeLabels(snap.Nodes))
	if len(left) == 0 {
		return ids, domains, issues
	}
	for i, is := range issues {
		if is.Path == clusterspec.AttrSelectNodes && !is.Warning {
			issues[i].Detail += "\n\n" + busyReport(s, left, uses, need) + "\n\n" + ShortageNextStep(s)
		}
	}
	return ids, domains, issues
}

// maxHolderGroups bounds how many holding groups a refusal names.
const maxHolderGroups = 5

// HoldersReport names the placement groups (other than the spec's own) that
// hold resources on the alive nodes, the largest first by GPUs then CPUs,
// each with what it holds and on how many nodes; at most maxHolderGroups,
// then "and N more". "" when none holds anything.
func HoldersReport(s clusterspec.Spec, snap *Snapshot) string {
	own := s.GroupNames()
	type held struct {
		name  string
		res   topology.Resources
		nodes map[string]bool
	}
	var all []held
	for _, g := range snap.Groups {
		if own[g.Name] || g.State != raystate.PlacementGroupStateCreated {
			continue
		}
		h := held{name: holderName(g), res: topology.Resources{}, nodes: map[string]bool{}}
		if g.CreatorJobID != "" {
			h.name += " (creator job " + g.CreatorJobID + ")"
		}
		for _, b := range g.Bundles {
			h.nodes[b.NodeID] = true
			for k, v := range UserResources(b.UnitResources) {
				h.res[k] += v
			}
		}
		all = append(all, h)
	}
	if len(all) == 0 {
		return ""
	}
	slices.SortStableFunc(all, func(a, b held) int {
		return cmp.Or(cmp.Compare(b.res["GPU"], a.res["GPU"]), cmp.Compare(b.res["CPU"], a.res["CPU"]), strings.Compare(a.name, b.name))
	})
	lines := []string{"Placement groups holding resources (Ray namespace and owner are in the cluster records; " +
		"`ray list placement-groups --detail` shows the rest):"}
	for i, h := range all {
		if i == maxHolderGroups {
			lines = append(lines, fmt.Sprintf("  and %d more", len(all)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("  %s holds %s on %d node(s)", h.name, formatResources(h.res), len(h.nodes)))
	}
	return strings.Join(lines, "\n")
}

// ShortageNextStep says what a user can do when other clusters hold what
// the cluster needs.
func ShortageNextStep(s clusterspec.Spec) string {
	step := "Wait for those clusters to be destroyed and apply again, or add nodes"
	if s.SegmentSize != nil && *s.SegmentSize > 1 {
		step += ", or choose another segment_size"
	}
	if s.CapacityMode() != clusterspec.CapacityTotal {
		step += `; or set capacity_check = "total" to queue until ready_timeout for nodes to free (on an autoscaling cluster, for nodes to be added)`
	}
	return step + "."
}

// maxSpreadChoices bounds the disjoint choices a create picks from (after a
// lost race) and falls back on.
const maxSpreadChoices = 4

// Choice is one choice of nodes for a select_nodes cluster: the node of
// each logical node and its NVLink domain.
type Choice struct{ IDs, Domains []string }

// DisjointChoices is the choice ids (ChooseFreeNodes' choice) followed by
// up to maxSpreadChoices-1 more, each ChooseFreeNodes' choice without the
// nodes of those before it: the choices a create may fall back on, in
// order, when another cluster reserved the nodes of the ones before.
func DisjointChoices(s clusterspec.Spec, snap *Snapshot, exclude map[string]bool, others []clusterspec.GroupRequest, ids, domains []string) []Choice {
	alts := []Choice{{ids, domains}}
	used := map[string]bool{}
	for id := range exclude {
		used[id] = true
	}
	for len(alts) < maxSpreadChoices {
		for _, id := range alts[len(alts)-1].IDs {
			used[id] = true
		}
		next, nextDomains, issues := ChooseFreeNodes(s, snap, used, others)
		if clusterspec.HasError(issues) {
			break
		}
		alts = append(alts, Choice{next, nextDomains})
	}
	return alts
}

// busyReport lists the nodes selection left out, per NVLink domain in
// topological order, with the groups that hold each.
func busyReport(s clusterspec.Spec, left []topology.Node, uses map[string]*nodeUse, need topology.Resources) string {
	what := "free resources"
	if s.CapacityMode() != clusterspec.CapacityFree {
		what = "total resources"
	}
	ordered := slices.Clone(left)
	lowest := map[string]int{}
	for _, n := range ordered {
		if r, ok := lowest[n.Domain]; !ok || n.TopoRank < r {
			lowest[n.Domain] = n.TopoRank
		}
	}
	slices.SortStableFunc(ordered, func(a, b topology.Node) int {
		return cmp.Or(cmp.Compare(lowest[a.Domain], lowest[b.Domain]), strings.Compare(a.Domain, b.Domain), cmp.Compare(a.TopoRank, b.TopoRank))
	})
	lines := []string{fmt.Sprintf("%d node(s) were left out: their %s cannot hold one logical node's bundles %s. By NVLink domain:",
		len(left), what, formatResources(need))}
	domain := ""
	for i, n := range ordered {
		if i == MaxSummaryNodes {
			lines = append(lines, fmt.Sprintf("  ... and %d more", len(ordered)-i))
			break
		}
		if n.Domain != domain {
			domain = n.Domain
			lines = append(lines, "  "+domain+":")
		}
		lines = append(lines, "    "+describeNode(n, uses[n.ID], need))
	}
	return strings.Join(lines, "\n")
}

// describeNode says why node n cannot hold need: who holds it, or that it is
// too small even when empty.
func describeNode(n topology.Node, u *nodeUse, need topology.Resources) string {
	head := fmt.Sprintf("node %s (topo_rank %d, GPU %g/%g free)", n.ID, n.TopoRank, amount(u.free["GPU"]), amount(u.total["GPU"]))
	if !holds(need, u.total) {
		return head + ": too small even when empty"
	}
	if u.claimed {
		return head + ": claimed at apply by " + strings.Join(u.holders, ", ")
	}
	if len(u.holders) == 0 {
		return head + ": busy (no placement group holds it; other Ray tasks or actors do)"
	}
	return head + ": held by " + strings.Join(u.holders, ", ")
}

// formatResources renders resources with sorted names.
func formatResources(r topology.Resources) string {
	parts := make([]string, 0, len(r))
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%s %g", k, amount(r[k])))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
