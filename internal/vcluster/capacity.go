package vcluster

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Capacity checks (capacity_check): what the plan and the apply compare a
// cluster with before any placement group is created.
const (
	// CapacityFree checks the resources free now: a cluster that does not fit
	// what other placement groups leave fails the plan.
	CapacityFree = "free"
	// CapacityTotal is the reference's rule: only a cluster the alive nodes'
	// total resources can never hold fails; the apply waits ready_timeout
	// for Ray to place the groups.
	CapacityTotal = "total"
	// CapacityNone checks no capacity at all (autoscaling clusters, where a
	// pending placement group is what makes Ray add nodes); the apply waits.
	CapacityNone = "none"
	// DefaultCapacityCheck is the provider's default.
	DefaultCapacityCheck = CapacityFree
	// AttrCapacityCheck names the attribute (resource and provider).
	AttrCapacityCheck = "capacity_check"
)

// CapacityChecks lists the valid capacity_check values.
var CapacityChecks = []string{CapacityFree, CapacityTotal, CapacityNone}

// CapacityMode is CapacityCheck, or DefaultCapacityCheck when unset.
func (s Spec) CapacityMode() string { return cmp.Or(s.CapacityCheck, DefaultCapacityCheck) }

// checkedCapacity is the node capacity the checks compare the cluster with:
// what is free now (the spec's own groups not counted, a replacement frees
// them first) under CapacityFree, the alive nodes' totals otherwise.
func (s Spec) checkedCapacity(snap *Snapshot) []topology.NodeCapacity {
	capacity := snap.Capacity(s.GroupNames())
	if s.CapacityMode() != CapacityFree {
		for i := range capacity {
			capacity[i].Available = nil // CheckPlacement then reads Total
		}
	}
	return capacity
}

// nodeDemand is what the largest logical node needs on one node: the sum of
// each logical node's bundles, the per-resource maximum over logical nodes.
// A node that holds it holds any logical node's bundles.
func (s Spec) nodeDemand() topology.Resources {
	s = s.WithDefaults()
	most := topology.Resources{}
	for i, c := range s.BundleCtPerNode {
		if c <= 0 {
			continue
		}
		for k, v := range s.bundle(i) {
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
	claimed bool     // another cluster claimed it (Snapshot.Claims)
}

// nodeUses is every alive node's free resources under the spec's capacity
// mode, minus the bundles that others (clusters this process chose nodes for
// and whose groups snap does not list yet) pinned to it, and which placement
// groups hold it.
func (s Spec) nodeUses(snap *Snapshot, others []GroupRequest) map[string]*nodeUse {
	out := map[string]*nodeUse{}
	for _, c := range s.checkedCapacity(snap) {
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
	own := s.GroupNames()
	listed := map[string]bool{}
	for _, g := range snap.Groups {
		listed[g.Name] = true
		if own[g.Name] || g.State != rayclient.PlacementGroupStateCreated {
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
	if s.CapacityMode() != CapacityFree {
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
func holderName(g rayclient.PlacementGroup) string {
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
		return NodeIDLabel + "=" + strings.TrimPrefix(name, pinnedNodeResource), true
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
func (s Spec) ChooseFreeNodes(snap *Snapshot, exclude map[string]bool, others []GroupRequest) (ids, domains []string, issues []Issue) {
	topo := snap.TopologyFrom(s.Topology)
	need := s.nodeDemand()
	uses := s.nodeUses(snap, others)
	usable := make([]topology.Node, 0, len(topo))
	var left []topology.Node
	for _, n := range topo {
		if u := uses[n.ID]; u != nil && (!holds(need, u.free) || u.claimed) && !exclude[n.ID] && n.Domain != topology.NVLinkDomainUnknown {
			left = append(left, n)
			continue
		}
		usable = append(usable, n)
	}
	ids, domains, issues = s.ChooseLabelledNodes(usable, exclude, NodeLabels(snap.Nodes))
	if len(left) == 0 {
		return ids, domains, issues
	}
	for i, is := range issues {
		if is.Path == AttrSelectNodes && !is.Warning {
			issues[i].Detail += "\n\n" + s.busyReport(left, uses, need) + "\n\n" + s.ShortageNextStep()
		}
	}
	return ids, domains, issues
}

// ShortageNextStep says what a user can do when other clusters hold what
// the cluster needs.
func (s Spec) ShortageNextStep() string {
	step := "Wait for those clusters to be destroyed and apply again, or add nodes"
	if s.SegmentSize != nil && *s.SegmentSize > 1 {
		step += ", or choose another segment_size"
	}
	if s.CapacityMode() != CapacityTotal {
		step += `; or set capacity_check = "total" to queue until ready_timeout for nodes to free (on an autoscaling cluster, for nodes to be added)`
	}
	return step + "."
}

// busyReport lists the nodes selection left out, per NVLink domain in
// topological order, with the groups that hold each.
func (s Spec) busyReport(left []topology.Node, uses map[string]*nodeUse, need topology.Resources) string {
	what := "free resources"
	if s.CapacityMode() != CapacityFree {
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

// TakenSelectedNodes checks, under CapacityFree, that every node the plan
// pinned the cluster to can still hold its logical node's bundles (others
// as in ChooseFreeNodes): another cluster may have taken it since the plan. It returns "" when all can, else which
// nodes cannot and the groups that now hold them.
func (s Spec) TakenSelectedNodes(snap *Snapshot, others []GroupRequest) string {
	if s.CapacityMode() != CapacityFree || !s.pinsNodes() {
		return ""
	}
	uses := s.nodeUses(snap, others)
	ranks := map[string]topology.Node{}
	for _, n := range snap.TopologyFrom(s.Topology) {
		ranks[n.ID] = n
	}
	var lines []string
	for i, id := range s.SelectedNodeIDs {
		u := uses[id]
		if u == nil || s.BundleCtPerNode[i] <= 0 {
			continue // a gone node is reported by the caller
		}
		need := topology.Resources{}
		for k, v := range s.bundle(i) {
			need[k] = v * float64(s.BundleCtPerNode[i])
		}
		if !holds(need, u.free) {
			lines = append(lines, fmt.Sprintf("  logical node %d needs %s on %s", i, formatResources(need), describeNode(ranks[id], u, need)))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("The nodes the plan selected for %q are no longer free:\n%s\n\nNothing was created. "+
		"Run `terraform plan` again to choose among the nodes free now.", s.Name, strings.Join(lines, "\n"))
}
