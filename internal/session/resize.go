package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Resize is how a change of a cluster's logical nodes is applied: in place
// (Replace empty), keeping the groups of Kept, creating those of Added and
// then removing those of Removed (logical node indices), or by replacement
// for the reason Replace gives.
//
// Groups are named by their node's index (<name>-node<i>), so a node keeps
// its group only at the same index: a resize appends nodes or drops the
// last ones. A node whose entry changes at its index is a new group under
// the same name, which cannot exist beside the old one: that replaces.
type Resize struct {
	Kept, Added, Removed []int
	Replace              string
	// Common is how many logical nodes (by index) both shapes have.
	Common int
	// Relisted: the node list's length changes. Appending or dropping a
	// node without bundles changes no group, but does the cluster's record
	// and select_nodes' selection (one node per logical node).
	// Appended: the planned list is longer (select_nodes chooses a node
	// for each appended entry, with or without bundles).
	Relisted, Appended bool
}

// InPlace reports whether the resize changes the nodes without replacing.
func (r Resize) InPlace() bool {
	return r.Replace == "" && (len(r.Added)+len(r.Removed) > 0 || r.Relisted)
}

// PlanResize compares the nodes of the cluster in state (prior) with the
// planned ones. Attributes other than the node lists (bundle counts,
// node_resource_constraints, node_label_selectors) are not compared here:
// those that change the groups replace by themselves.
func PlanResize(prior, planned clusterspec.Spec) Resize {
	var r Resize
	n, m := len(prior.BundleCtPerNode), len(planned.BundleCtPerNode)
	r.Common = min(n, m)
	for i := 0; i < r.Common; i++ {
		if why := nodeChange(prior, planned, i); why != "" {
			r.Replace = fmt.Sprintf("Logical node %d changes (%s). A node keeps its group, %s, only unchanged at the same index: "+
				"a resize in place appends nodes to bundle_ct_per_node_list or removes the last ones.",
				i, why, clusterspec.NodeGroupName(planned.Name, i))
			return r
		}
		if prior.BundleCtPerNode[i] > 0 {
			r.Kept = append(r.Kept, i)
		}
	}
	for i := n; i < m; i++ {
		if planned.BundleCtPerNode[i] > 0 {
			r.Added = append(r.Added, i)
		}
	}
	for i := m; i < n; i++ {
		if prior.BundleCtPerNode[i] > 0 {
			r.Removed = append(r.Removed, i)
		}
	}
	r.Appended = m > n
	if r.Relisted = n != m; !r.InPlace() {
		return r
	}
	r.Replace = resizeBlocker(prior, planned, len(r.Kept))
	return r
}

// resizeBlocker is why a cluster whose nodes are appended or dropped is
// still replaced; "" when it resizes in place.
func resizeBlocker(prior, planned clusterspec.Spec, kept int) string {
	switch {
	case prior.UseUnifiedPG || planned.UseUnifiedPG:
		return "A unified cluster (use_unified_pg = true) is one placement group holding every node's bundles: " +
			"any change of its nodes makes the group anew. Per-node clusters (use_unified_pg = false) resize in place."
	case kept == 0:
		return "No logical node is kept: every group is made anew."
	}
	if s := planned.SegmentSize; s != nil && *s > 1 && kept%*s != 0 {
		return fmt.Sprintf("segment_size = %d: the %d kept logical nodes no longer form complete segments.", *s, kept)
	}
	return ""
}

// nodeChange says how logical node i differs between prior and planned;
// "" when it is the same node.
func nodeChange(prior, planned clusterspec.Spec, i int) string {
	var out []string
	if a, b := prior.BundleCtPerNode[i], planned.BundleCtPerNode[i]; a != b {
		out = append(out, fmt.Sprintf("bundles %d → %d", a, b))
	}
	if !maps.Equal(nodeConstraint(prior, i), nodeConstraint(planned, i)) {
		out = append(out, clusterspec.AttrNodeResourceConstraints)
	}
	if !maps.Equal(nodeSelector(prior, i), nodeSelector(planned, i)) {
		out = append(out, clusterspec.AttrNodeLabelSelectors)
	}
	return strings.Join(out, ", ")
}

func nodeConstraint(s clusterspec.Spec, i int) map[string]float64 {
	if i < len(s.NodeResourceConstraints) && len(s.NodeResourceConstraints[i]) > 0 {
		return s.NodeResourceConstraints[i]
	}
	return nil
}

func nodeSelector(s clusterspec.Spec, i int) map[string]string {
	if i < len(s.NodeLabelSelectors) && len(s.NodeLabelSelectors[i]) > 0 {
		return s.NodeLabelSelectors[i]
	}
	return nil
}

// Describe lists the groups a resize keeps, adds and removes, for the
// plan's warning.
func (r Resize) Describe(name string) string {
	groups := func(nodes []int) string {
		if len(nodes) == 0 {
			return "none"
		}
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[i] = clusterspec.NodeGroupName(name, n)
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("Kept (their workers keep running): %s.\nAdded: %s.\nRemoved, once the added groups are ready: %s.",
		groups(r.Kept), groups(r.Added), groups(r.Removed))
}

// RemovedGroups names the groups of the nodes r removes.
func (r Resize) RemovedGroups(name string) []string {
	out := make([]string, len(r.Removed))
	for i, n := range r.Removed {
		out[i] = clusterspec.NodeGroupName(name, n)
	}
	return out
}

// AddedOnly is spec reduced to the nodes r adds, at their own indices (the
// kept ones have no bundles): what a grow asks beside the kept groups.
func (r Resize) AddedOnly(spec clusterspec.Spec) clusterspec.Spec {
	spec.BundleCtPerNode = append([]int(nil), spec.BundleCtPerNode...)
	added := map[int]bool{}
	for _, i := range r.Added {
		added[i] = true
	}
	for i := range spec.BundleCtPerNode {
		if !added[i] {
			spec.BundleCtPerNode[i] = 0
		}
	}
	spec.SegmentSize = nil // the whole shape's segments are checked on their own
	return spec
}

// SummaryReplacedForNodes is the plan's warning of a cluster replaced to
// change its logical nodes (NodesReplacement says why).
const SummaryReplacedForNodes = "Virtual cluster replaced to change its nodes"

// NodesReplacement is why a change of the logical nodes of cluster name
// replaces it, "" when it resizes in place: the new nodes not known yet
// (known false), a change a resize cannot make, or an import not applied
// yet (its record names the former owner, and only the owner resizes).
func NodesReplacement(r Resize, known, importPending bool, name string) string {
	switch {
	case !known:
		return fmt.Sprintf("The new logical nodes of %q are known only at apply, so the plan cannot tell which groups would be kept.", name)
	case r.Replace != "":
		return r.Replace
	case r.InPlace() && importPending:
		return fmt.Sprintf("%q was imported and the import is not applied yet: its record still names the former owner, "+
			"and only the owner may resize it. Apply the import first, then change its nodes.", name)
	}
	return ""
}

// SummaryCannotResize is the error of a resize the apply could not make.
const SummaryCannotResize = "Cannot resize the virtual cluster"

// ResizeNodes applies an in-place resize r (PlanResize against the state's
// spec) of the per-node cluster owner owns to spec's nodes: the added
// groups are checked against a fresh snapshot beside the kept ones, then the
// driver creates and reserves them, waits until they are ready and only
// then removes the removed nodes' groups (ActionResize). A resize that
// fails before the removals leaves the kept groups and their workers as
// they were: the driver removes only the groups it added.
//
// spec holds the kept nodes' selection (select_nodes); the nodes chosen for
// the added ones are appended to it. exclude is exclude_node_ids.
func (d *Session) ResizeNodes(ctx context.Context, spec *clusterspec.Spec, owner string, r Resize, exclude map[string]bool) (*contract.Result, []clusterspec.Issue) {
	if owner == "" {
		return nil, []clusterspec.Issue{{Summary: SummaryCannotResize, Detail: "The cluster's state holds no owner (it was created before owners existed), " +
			"and a resize rewrites the cluster's record, which only its owner may. Replace the cluster instead " +
			"(terraform apply -replace=...)."}}
	}
	versionIssues, _ := d.VersionIssues(ctx, *spec)
	if clusterspec.HasError(versionIssues) {
		return nil, versionIssues
	}
	if len(r.Added) > 0 || spec.SelectNodes && r.Appended {
		snap, err := d.FreshSnapshot(ctx)
		if err != nil {
			return nil, append(versionIssues, DashboardIssue(d.Address(), err))
		}
		var issues []clusterspec.Issue
		d.ChooseNodes(spec.Namespace+"/"+spec.Name, func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
			if issues = GrowIssues(spec, r, snap, exclude, others); clusterspec.HasError(issues) {
				return nil
			}
			return planning.TakenGroups(r.AddedOnly(*spec))
		})
		if clusterspec.HasError(issues) {
			return nil, append(versionIssues, issues...)
		}
	}
	if spec.SelectNodes && len(spec.SelectedNodeIDs) != len(spec.BundleCtPerNode) { // never a record that mismatches
		return nil, append(versionIssues, clusterspec.Issue{Path: clusterspec.AttrSelectedNodeIDs, Summary: SummaryCannotResize,
			Detail: fmt.Sprintf("%d selected nodes for %d logical nodes.", len(spec.SelectedNodeIDs), len(spec.BundleCtPerNode))})
	}
	res, err := d.Run(ctx, placement.ResizeRequest(*spec, owner, d.Version, r.RemovedGroups(spec.Name)))
	out, issues := ResizeOutcome(res, err, func() string { return placement.CreateErrorDetail(r.AddedOnly(*spec), res, err) }, versionIssues)
	if out == nil {
		d.ForgetChosen(spec.Namespace + "/" + spec.Name)
	}
	return out, issues
}

// ResizeOutcome words the driver's answer to a resize. A resize that failed
// before it wrote the new shape's record left the cluster as it was; one
// that failed after (Result.Committed: stopped while removing) stands, and
// is reported as made, with the groups it may have left to remove.
func ResizeOutcome(res *contract.Result, err error, detail func() string, issues []clusterspec.Issue) (*contract.Result, []clusterspec.Issue) {
	if err != nil && (res == nil || !res.Committed && !res.OK) {
		return nil, append(issues, clusterspec.Issue{Summary: SummaryCannotResize, Detail: detail() +
			"\n\nThe kept placement groups and their workers are untouched; the cluster keeps its former shape."})
	}
	if err != nil {
		issues = append(issues, clusterspec.Issue{Warning: true, Summary: "Virtual cluster resized, then interrupted",
			Detail: fmt.Sprintf("The resize had written the cluster's new shape when it was interrupted (%v); "+
				"the new shape is kept.", err)})
	}
	if len(res.NotRemoved) > 0 {
		issues = append(issues, clusterspec.Issue{Warning: true, Summary: "Placement groups of removed nodes are left",
			Detail: fmt.Sprintf("The cluster now has its new shape, but Ray did not remove %s in time. Remove them with "+
				"ray.util.remove_placement_group, or apply a grow that brings their nodes back.", strings.Join(res.NotRemoved, ", "))})
	}
	return res, issues
}

// GrowIssues checks the nodes a resize adds against snap beside the
// cluster's kept groups (which the snapshot shows as taken) and others,
// the groups of clusters planned before it: a grow that does not fit fails
// naming what is short.
func GrowIssues(spec *clusterspec.Spec, r Resize, snap *planning.Snapshot, exclude map[string]bool, others []clusterspec.GroupRequest) []clusterspec.Issue {
	var issues []clusterspec.Issue
	if spec.SelectNodes {
		issues = r.chooseAdded(spec, snap, exclude, others)
	}
	if !clusterspec.HasError(issues) {
		issues = append(issues, placement.CheckLive(r.AddedOnly(*spec), snap, others)...)
	}
	for i := range issues {
		issues[i].Detail = fmt.Sprintf("The nodes %q adds must fit beside the groups it keeps (%d logical node(s) added). %s",
			spec.Name, len(r.Added), issues[i].Detail)
	}
	return issues
}

// PlanGrow is GrowIssues at plan, beside the clusters planned before it in
// this run (their choices ledger): what the added groups take is recorded
// for the clusters planned after it.
func (d *Session) PlanGrow(spec *clusterspec.Spec, r Resize, snap *planning.Snapshot, exclude map[string]bool) []clusterspec.Issue {
	var issues []clusterspec.Issue
	d.PlanChoose(spec.Namespace+"/"+spec.Name, func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if issues = GrowIssues(spec, r, snap, exclude, others); clusterspec.HasError(issues) {
			return nil
		}
		return planning.TakenGroups(r.AddedOnly(*spec))
	})
	return issues
}

// KeepSelection gives spec, whose nodes r resizes, the nodes the kept
// logical nodes hold (ids and domains as state has them, one per logical
// node of the prior shape); the added ones are chosen by chooseAdded.
func (r Resize) KeepSelection(spec *clusterspec.Spec, ids, domains []string) {
	if !spec.SelectNodes {
		return
	}
	spec.SelectedNodeIDs = slices.Clone(ids[:min(r.Common, len(ids))])
	spec.SelectedNodeDomains = nil
	if len(domains) >= len(spec.SelectedNodeIDs) {
		spec.SelectedNodeDomains = slices.Clone(domains[:len(spec.SelectedNodeIDs)])
	}
}

// chooseAdded chooses the nodes of the added logical nodes by the rules of
// a create (select_nodes, pinning, segments, selectors), among the nodes
// the kept ones do not hold, and appends them to spec's selection.
func (r Resize) chooseAdded(spec *clusterspec.Spec, snap *planning.Snapshot, exclude map[string]bool, others []clusterspec.GroupRequest) []clusterspec.Issue {
	if len(spec.SelectedNodeIDs) != r.Common {
		return []clusterspec.Issue{{Path: clusterspec.AttrSelectedNodeIDs, Summary: SummaryCannotResize,
			Detail: fmt.Sprintf("State holds %d selected nodes for the %d kept logical nodes.", len(spec.SelectedNodeIDs), r.Common)}}
	}
	added := *spec
	added.Name += "+added" // no group of the cluster is named so: the kept ones count as taken
	added.BundleCtPerNode = spec.BundleCtPerNode[r.Common:]
	if spec.NodeResourceConstraints != nil {
		added.NodeResourceConstraints = spec.NodeResourceConstraints[r.Common:]
	}
	if spec.NodeLabelSelectors != nil {
		added.NodeLabelSelectors = spec.NodeLabelSelectors[r.Common:]
	}
	added.SelectedNodeIDs, added.SelectedNodeDomains = nil, nil
	skip := maps.Clone(exclude)
	if skip == nil {
		skip = map[string]bool{}
	}
	for _, id := range spec.SelectedNodeIDs {
		skip[id] = true
	}
	ids, domains, issues := planning.ChooseFreeNodes(added, snap, skip, others)
	if clusterspec.HasError(issues) {
		return issues
	}
	if len(domains) == len(ids) && len(spec.SelectedNodeDomains) == len(spec.SelectedNodeIDs) {
		spec.SelectedNodeDomains = append(spec.SelectedNodeDomains, domains...)
	} else {
		spec.SelectedNodeDomains = nil
	}
	spec.SelectedNodeIDs = append(spec.SelectedNodeIDs, ids...)
	return issues
}

// LeftoverGroups are the live groups named like node groups of the per-node
// cluster name (<name>-node<i>) that none of shapes (its shape in state and
// the planned one) has: left by a resize whose apply was interrupted before
// Terraform saved state, or made outside Terraform. The state API lists
// every Ray namespace's groups, so some may be another namespace's.
func LeftoverGroups(name string, shapes []clusterspec.Spec, live []raystate.PlacementGroup) []string {
	known := map[string]bool{clusterspec.UnifiedGroupName(name): true}
	for _, s := range shapes {
		maps.Copy(known, s.GroupNames())
	}
	var out []string
	for _, g := range live {
		if g.State != raystate.PlacementGroupStateRemoved && !known[g.Name] && clusterspec.NamedLike(name, g.Name) &&
			!slices.Contains(out, g.Name) {
			out = append(out, g.Name)
		}
	}
	slices.Sort(out)
	return out
}

// LeftoverIssue warns of LeftoverGroups: a grow that brings their nodes back
// adopts them when their shape matches; otherwise they hold resources no
// state manages.
func LeftoverIssue(name string, groups []string) []clusterspec.Issue {
	if len(groups) == 0 {
		return nil
	}
	return []clusterspec.Issue{{Warning: true, Summary: "Placement groups named like the cluster's, beyond its nodes",
		Detail: fmt.Sprintf("Ray lists %s, named like node groups of %q but not among its logical nodes. A resize whose apply "+
			"was interrupted before Terraform saved state leaves such groups. A grow that brings their nodes back adopts "+
			"them when their bundles match; otherwise, if they are in this cluster's Ray namespace and no one uses them, "+
			"remove them (ray.util.remove_placement_group).", strings.Join(groups, ", "), name)}}
}

// NodesUpdate is what an update of an existing cluster applies to its
// nodes. Resize is the plan's (PlanResize of the state's spec against the
// planned one), nil when no logical node's bundle count, constraint or
// selector changed; Known is false when the planned nodes could not be read.
// HeldIDs and HeldDomains are the selection state holds (select_nodes),
// KeepPorts that the port range is unchanged, Exclude exclude_node_ids.
type NodesUpdate struct {
	Resize               *Resize
	Known                bool
	HeldIDs, HeldDomains []string
	KeepPorts            bool
	Exclude              map[string]bool
}

// UpdateNodes applies an update of the cluster owner owns: a resize in
// place when the plan appends or drops logical nodes, else a re-probe of
// the existing groups (a setting changed, or the recovery from a node's
// loss). resized reports the former: spec then holds the new selection.
// Nodes whose change now calls for a replacement (the plan was made from
// another view) fail without touching Ray.
func (d *Session) UpdateNodes(ctx context.Context, spec *clusterspec.Spec, owner string, u NodesUpdate) (res *contract.Result, resized bool, issues []clusterspec.Issue) {
	if u.Resize != nil {
		r := *u.Resize
		if why := NodesReplacement(r, u.Known, false, spec.Name); why != "" {
			return nil, false, []clusterspec.Issue{{Summary: SummaryCannotResize,
				Detail: "The plan applied resizes the cluster, but its nodes now call for a replacement: " + why + " Run terraform plan again."}}
		}
		if r.InPlace() {
			tflog.Info(ctx, "resizing virtual cluster in place", map[string]any{"name": spec.Name,
				"kept": len(r.Kept), "added": len(r.Added), "removed": len(r.Removed)})
			r.KeepSelection(spec, u.HeldIDs, u.HeldDomains)
			res, issues = d.ResizeNodes(ctx, spec, owner, r, u.Exclude)
			return res, res != nil, issues
		}
	}
	res, issues = d.Reprobe(ctx, *spec, owner, u.KeepPorts)
	return res, false, issues
}

// PlannedSelection is the selected_node_ids a plan that resizes in place
// shows for a select_nodes cluster holding held: the kept nodes' when the
// resize only drops nodes, unknown (known false) when it appends, since the
// added ones are chosen at apply.
func (r Resize) PlannedSelection(held []string) (ids []string, known bool) {
	if r.Appended || len(held) < r.Common {
		return nil, false
	}
	return held[:r.Common], true
}
