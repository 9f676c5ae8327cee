package resources

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
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
//     (keptBundles) and the others keep running.

// lostBundle is a recorded bundle whose node is gone or that Ray moved.
type lostBundle struct {
	recordedBundle
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

// findRecovery compares the recorded bundles of state with the live groups
// (by recorded id) and the alive nodes.
func findRecovery(ctx context.Context, spec clusterspec.Spec, state virtualClusterModel, snap *planning.Snapshot, alive map[string]bool) recovery {
	var r recovery
	if state.Bundles.IsNull() || state.Bundles.IsUnknown() || state.PlacementGroups.IsNull() || state.PlacementGroups.IsUnknown() {
		return r
	}
	bundles, d := objectsAs[recordedBundle](ctx, state.Bundles)
	groups, d2 := objectsAs[recordedGroup](ctx, state.PlacementGroups)
	if d.HasError() || d2.HasError() {
		return r
	}
	live := map[string]raystate.PlacementGroup{} // by group name, the recorded id's
	for _, g := range groups {
		if i := slices.IndexFunc(snap.Groups, func(l raystate.PlacementGroup) bool { return l.PlacementGroupID == g.ID }); i >= 0 {
			live[g.Name] = snap.Groups[i]
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
	for _, g := range spec.Groups() {
		pins[g.Name] = spec.BundleSelectors(g)
	}
	for _, b := range bundles {
		g, found := live[b.Group]
		if !found || b.NodeID == "" {
			continue // removed or recreated: refresh's drift replaces it
		}
		now := ""
		if i := slices.IndexFunc(g.Bundles, func(l raystate.Bundle) bool { return l.BundleIndex == int(b.Index) }); i >= 0 {
			now = g.Bundles[i].NodeID
		}
		lost := lostBundle{recordedBundle: b, now: now}
		switch {
		case now != "" && now != b.NodeID:
			r.moved = append(r.moved, lost)
		case alive[b.NodeID]:
		case pinnedToNode(pins[b.Group], int(b.Index)):
			r.pinned = append(r.pinned, lost)
		default:
			r.recovering = append(r.recovering, lost)
		}
	}
	return r
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

// checkRecovery replaces a cluster that holds a node no longer alive when
// Ray cannot place it again (a gone selected node, a pinned bundle) or
// recovery_timeout has passed; otherwise it warns that the cluster is
// recovering, or plans the in-place update that re-probes moved bundles.
func (p *planCall) checkRecovery(spec clusterspec.Spec, snap *planning.Snapshot) {
	alive := map[string]bool{}
	for _, n := range snap.Nodes {
		alive[n.NodeID] = true
	}
	name := spec.Name
	if gone := spec.GoneSelectedNodes(alive); len(gone) > 0 {
		p.plan.SelectedNodeIDs = types.ListUnknown(types.StringType)
		p.replace("selected_node_ids", "A node of the virtual cluster is gone",
			fmt.Sprintf("Ray no longer lists node(s) %s, selected for %q, as alive. A cluster that selects its nodes keeps "+
				"them in selected_node_ids (which other clusters exclude, and its bundles are pinned to with pinning = \"node\"), "+
				"so it chooses again among the nodes alive.", strings.Join(gone, ", "), name))
		return
	}
	r := findRecovery(p.ctx, spec, p.state, snap, alive)
	switch {
	case len(r.pinned) > 0:
		p.plan.PlacementGroups = types.ListUnknown(groupObjectType)
		p.replace("placement_groups", "A node of the virtual cluster is gone",
			fmt.Sprintf("Ray no longer lists the node of %s as alive, and those bundles are pinned to it (a ray.io/node-id "+
				"selector): Ray can never place them again.", joinLost(r.pinned)))
	case len(r.recovering) > 0:
		p.waitForRecovery(spec, r)
	case len(r.moved) > 0:
		*p.plan = unknownComputed(*p.plan) // placement_groups too: the apply writes what Ray reports then
		p.resp.Diagnostics.AddWarning("Virtual cluster recovered from a node's loss",
			fmt.Sprintf("Ray placed the lost bundles of %q again on other nodes, in the same placement groups: %s. The apply "+
				"probes those bundles (GPU id, port) and records where they are; the other bundles, and the workers in them, "+
				"stay as they are. Workers that ran in the lost bundles are gone: start them again in the bundles' new places.",
				name, joinLost(r.moved)))
	}
}

// waitForRecovery warns about a cluster whose lost bundles Ray may still
// place, or replaces it once recovery_timeout has passed since its node died.
func (p *planCall) waitForRecovery(spec clusterspec.Spec, r recovery) {
	name := spec.Name
	what := fmt.Sprintf("Ray lost the node of %s; %s.", joinLost(r.recovering), cmp.Or(strings.Join(r.states, ", "), "the groups are being placed again"))
	limit, set := recoveryTimeout(*p.plan)
	if !set {
		p.resp.Diagnostics.AddWarning("Virtual cluster is recovering",
			fmt.Sprintf("%s Ray places those bundles again by itself, in the same placement groups, as soon as a node has "+
				"room (its other bundles, and the workers in them, keep running). The plan waits for it and replaces nothing; "+
				"set recovery_timeout on %q to replace a cluster Ray has not placed again by then.", what, name))
		return
	}
	since, known, err := p.deathTime(r.recovering)
	if err != nil {
		p.resp.Diagnostics.AddWarning("Virtual cluster is recovering",
			fmt.Sprintf("%s The plan could not read when the node died (%v), so it replaces nothing now; recovery_timeout "+
				"(%s) is checked again at the next plan.", what, err, limit))
		return
	}
	waited := time.Since(since)
	if known && waited < limit {
		p.resp.Diagnostics.AddWarning("Virtual cluster is recovering",
			fmt.Sprintf("%s Ray places those bundles again by itself as soon as a node has room. The node died %s ago; "+
				"recovery_timeout (%s) replaces the cluster if Ray has not placed them %s from now.",
				what, waited.Round(time.Second), limit, (limit-waited).Round(time.Second)))
		return
	}
	when := "Ray no longer lists the node"
	if known {
		when = fmt.Sprintf("the node died %s ago", waited.Round(time.Second))
	}
	p.plan.PlacementGroups = types.ListUnknown(groupObjectType)
	p.replace("placement_groups", "Virtual cluster did not recover within recovery_timeout",
		fmt.Sprintf("%s %s, longer than recovery_timeout (%s).", what, when, limit))
}

// recoveryTimeout is the plan's recovery_timeout; set is false when unset.
func recoveryTimeout(m virtualClusterModel) (limit time.Duration, set bool) {
	if m.RecoveryTimeout.IsNull() || m.RecoveryTimeout.IsUnknown() {
		return 0, false
	}
	d, err := time.ParseDuration(m.RecoveryTimeout.ValueString())
	return d, err == nil
}

// deathTime is when the first of the lost bundles' nodes died
// (session.NodeDeathTime), read only for a cluster that is recovering and
// declares recovery_timeout.
func (p *planCall) deathTime(lost []lostBundle) (since time.Time, known bool, err error) {
	var nodes []string
	for _, b := range lost {
		if !slices.Contains(nodes, b.NodeID) {
			nodes = append(nodes, b.NodeID)
		}
	}
	return p.r.data.NodeDeathTime(p.ctx, nodes)
}
