package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Ray's answer to a node's loss (GCS: the dead node's bundles are unplaced,
// the group goes RESCHEDULING and keeps its id, only those bundles are
// placed again, the others and the workers in them are untouched) decides
// what a plan does with a cluster in state:
//   - a bundle pinned to the lost node (select_nodes, a ray.io/node-id
//     selector) can never be placed again: replace;
//   - lost bundles Ray may still place: the cluster is recovering, the plan
//     warns and waits, replacing only once recovery_timeout has passed since
//     the node died;
//   - bundles Ray placed again elsewhere: an in-place update re-probes them
//     and the others keep running.

// RecordedBundle is where state recorded one bundle of a cluster.
type RecordedBundle struct {
	Group          string // its placement group's name
	Index          int    // its index in the group
	NodeID, NodeIP string
}

// lostBundle is a recorded bundle whose node is gone or that Ray moved.
type lostBundle struct {
	RecordedBundle
	now string // the node Ray has it on now; "" while it is not placed
}

func (b lostBundle) String() string {
	s := fmt.Sprintf("bundle %d of %s (was on %s, %s)", b.Index, b.Group, raystate.ShortID(b.NodeID), b.NodeIP)
	if b.now != "" {
		s += " now on " + raystate.ShortID(b.now)
	}
	return s
}

// recovery is what a plan found of a cluster's node losses.
type recovery struct {
	pinned     []lostBundle // on a dead node they are pinned to
	recovering []lostBundle // not placed again yet
	moved      []lostBundle // placed again on another node
	states     []string     // "<group> RESCHEDULING (scheduling state X)"
}

// findRecovery compares the recorded bundles with the live groups (by the
// recorded id of each group, groupIDs by name) and the alive nodes.
func findRecovery(spec clusterspec.Spec, bundles []RecordedBundle, groupIDs map[string]string, snap *planning.Snapshot, alive map[string]bool) recovery {
	var r recovery
	live := map[string]raystate.PlacementGroup{} // by group name, the recorded id's
	for name, id := range groupIDs {
		if i := slices.IndexFunc(snap.Groups, func(l raystate.PlacementGroup) bool { return l.PlacementGroupID == id }); i >= 0 {
			live[name] = snap.Groups[i]
		}
	}
	for name, g := range live {
		if g.State == raystate.PlacementGroupStateRescheduling {
			scheduling, _ := g.Stats["scheduling_state"].(string)
			r.states = append(r.states, fmt.Sprintf("%s %s (scheduling state %s)", name, g.State, cmp.Or(scheduling, "unknown")))
		}
	}
	slices.Sort(r.states)
	pins := map[string][]map[string]string{}
	groups := map[string]clusterspec.GroupRequest{}
	for _, g := range spec.Groups() {
		pins[g.Name], groups[g.Name] = spec.BundleSelectors(g), g
	}
	for _, b := range bundles {
		g, found := live[b.Group]
		if !found || b.NodeID == "" {
			continue // removed or recreated: refresh's drift replaces it
		}
		now := ""
		if i := slices.IndexFunc(g.Bundles, func(l raystate.Bundle) bool { return l.BundleIndex == b.Index }); i >= 0 {
			now = g.Bundles[i].NodeID
		}
		lost := lostBundle{RecordedBundle: b, now: now}
		switch {
		case now != "" && now != b.NodeID:
			r.moved = append(r.moved, lost)
		case alive[b.NodeID]:
		case pinnedToNode(pins[b.Group], b.Index), !domainAlive(spec, groups[b.Group], b.Index, snap):
			r.pinned = append(r.pinned, lost)
		default:
			r.recovering = append(r.recovering, lost)
		}
	}
	return r
}

// domainAlive reports whether an alive node offers the NVLink domain that
// bundle index of g is pinned to (select_nodes with pinning = "domain": the
// domain's resource or label); true for a bundle pinned to no domain.
func domainAlive(spec clusterspec.Spec, g clusterspec.GroupRequest, index int, snap *planning.Snapshot) bool {
	nodes := spec.BundleNodes(g)
	if !spec.SelectNodes || spec.Pinning != clusterspec.PinningDomain || index >= len(nodes) {
		return true
	}
	var keys []string
	for k := range spec.NodeBundle(nodes[index]) {
		if strings.HasPrefix(k, topology.NVLinkDomainPrefix) {
			keys = append(keys, k)
		}
	}
	labels, _ := spec.DomainLabelPin(nodes[index])
	if len(keys) == 0 && len(labels) == 0 {
		return true
	}
	return slices.ContainsFunc(snap.Nodes, func(n raystate.Node) bool {
		for _, k := range keys {
			if n.ResourcesTotal[k] <= 0 {
				return false
			}
		}
		for k, v := range labels {
			if n.Labels[k] != v {
				return false
			}
		}
		return true
	})
}

func pinnedToNode(selectors []map[string]string, index int) bool {
	return index < len(selectors) && selectors[index][clusterspec.NodeIDLabel] != ""
}

func joinLost(bs []lostBundle) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return strings.Join(parts, "; ")
}

// RecoveryPlan is what a plan does with a cluster in state after node
// losses: nothing (the zero value), replace it (Replace names the attribute
// whose change the plan shows), warn while Ray places it again, or update
// it in place to probe bundles Ray placed elsewhere (Reprobe).
type RecoveryPlan struct {
	Replace string
	Reprobe bool
	// Summary and Detail word the warning (a replacement's included).
	Summary, Detail string
}

// RecoveryTimeout is a cluster's recovery_timeout; Set is false when unset.
type RecoveryTimeout struct {
	Limit time.Duration
	Set   bool
}

// PlanRecovery replaces a cluster that holds a node no longer alive when
// Ray cannot place its bundles there again (a gone node they are pinned
// to) or recovery_timeout has passed; a gone selected node that holds none
// of its bundles (domain pinning: Ray placed them elsewhere in the domain)
// only warns; otherwise it warns that the cluster is
// recovering, or plans the in-place update that re-probes moved bundles.
// bundles and groupIDs are what state recorded (nil: nothing recorded).
func (d *Session) PlanRecovery(ctx context.Context, spec clusterspec.Spec, bundles []RecordedBundle, groupIDs map[string]string,
	snap *planning.Snapshot, timeout RecoveryTimeout) RecoveryPlan {
	alive := map[string]bool{}
	for _, n := range snap.Nodes {
		alive[n.NodeID] = true
	}
	name := spec.Name
	gone := spec.GoneSelectedNodes(alive)
	holding := holdingNodes(gone, bundles)
	if len(holding) > 0 && (spec.PinsNodes() || bundles == nil) {
		return RecoveryPlan{Replace: clusterspec.AttrSelectedNodeIDs, Summary: "A node of the virtual cluster is gone",
			Detail: fmt.Sprintf("Ray no longer lists node(s) %s, selected for %q, as alive. Its bundles there are pinned to "+
				"the node (pinning = \"node\"), so Ray can never place them again: the cluster chooses again among the nodes "+
				"alive.", strings.Join(holding, ", "), name)}
	}
	r := findRecovery(spec, bundles, groupIDs, snap, alive)
	if len(gone) > 0 && len(holding) == 0 && len(r.pinned)+len(r.recovering)+len(r.moved) == 0 {
		return RecoveryPlan{Summary: "A selected node of the virtual cluster is gone",
			Detail: fmt.Sprintf("Ray no longer lists node(s) %s, selected for %q, as alive, but none of the cluster's bundles "+
				"is there (Ray placed them on other nodes of their domain), so nothing is replaced and its workers keep "+
				"running. The node stays in selected_node_ids until the cluster is replaced.", strings.Join(gone, ", "), name)}
	}
	switch {
	case len(r.pinned) > 0:
		return RecoveryPlan{Replace: AttrPlacementGroups, Summary: "A node of the virtual cluster is gone",
			Detail: fmt.Sprintf("Ray no longer lists the node of %s as alive, and those bundles are pinned to it (a ray.io/node-id "+
				"selector): Ray can never place them again.", joinLost(r.pinned))}
	case len(r.recovering) > 0:
		return d.waitForRecovery(ctx, spec, r, timeout)
	case len(r.moved) > 0:
		return RecoveryPlan{Reprobe: true, Summary: "Virtual cluster recovered from a node's loss",
			Detail: fmt.Sprintf("Ray placed the lost bundles of %q again on other nodes, in the same placement groups: %s. The apply "+
				"probes those bundles (GPU id, port) and records where they are; the other bundles, and the workers in them, "+
				"stay as they are. Workers that ran in the lost bundles are gone: start them again in the bundles' new places.",
				name, joinLost(r.moved))}
	}
	return RecoveryPlan{}
}

// holdingNodes are the nodes of gone on which state recorded bundles; all
// of gone when nothing is recorded.
func holdingNodes(gone []string, bundles []RecordedBundle) []string {
	if bundles == nil {
		return gone
	}
	var out []string
	for _, id := range gone {
		if slices.ContainsFunc(bundles, func(b RecordedBundle) bool { return b.NodeID == id }) {
			out = append(out, id)
		}
	}
	return out
}

// AttrPlacementGroups is the computed attribute a replacement after a node's
// loss shows as changed.
const AttrPlacementGroups = "placement_groups"

// waitForRecovery warns about a cluster whose lost bundles Ray may still
// place, or replaces it once recovery_timeout has passed since its node died.
func (d *Session) waitForRecovery(ctx context.Context, spec clusterspec.Spec, r recovery, timeout RecoveryTimeout) RecoveryPlan {
	name := spec.Name
	what := fmt.Sprintf("Ray lost the node of %s; %s.", joinLost(r.recovering), cmp.Or(strings.Join(r.states, ", "), "the groups are being placed again"))
	const recovering = "Virtual cluster is recovering"
	limit := timeout.Limit
	if !timeout.Set {
		return RecoveryPlan{Summary: recovering,
			Detail: fmt.Sprintf("%s Ray places those bundles again by itself, in the same placement groups, as soon as a node has "+
				"room (its other bundles, and the workers in them, keep running). The plan waits for it and replaces nothing; "+
				"set recovery_timeout on %q to replace a cluster Ray has not placed again by then.", what, name)}
	}
	var nodes []string
	for _, b := range r.recovering {
		if !slices.Contains(nodes, b.NodeID) {
			nodes = append(nodes, b.NodeID)
		}
	}
	since, known, err := d.NodeDeathTime(ctx, nodes)
	if err != nil {
		return RecoveryPlan{Summary: recovering,
			Detail: fmt.Sprintf("%s The plan could not read when the node died (%v), so it replaces nothing now; recovery_timeout "+
				"(%s) is checked again at the next plan.", what, err, limit)}
	}
	waited := time.Since(since)
	if known && waited < limit {
		return RecoveryPlan{Summary: recovering,
			Detail: fmt.Sprintf("%s Ray places those bundles again by itself as soon as a node has room. The node died %s ago; "+
				"recovery_timeout (%s) replaces the cluster if Ray has not placed them %s from now.",
				what, waited.Round(time.Second), limit, (limit - waited).Round(time.Second))}
	}
	when := "Ray no longer lists the node"
	if known {
		when = fmt.Sprintf("the node died %s ago", waited.Round(time.Second))
	}
	return RecoveryPlan{Replace: AttrPlacementGroups, Summary: "Virtual cluster did not recover within recovery_timeout",
		Detail: fmt.Sprintf("%s %s, longer than recovery_timeout (%s).", what, when, limit)}
}
