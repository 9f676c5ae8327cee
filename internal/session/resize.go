package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
}

// InPlace reports whether the resize changes groups without replacing.
func (r Resize) InPlace() bool { return r.Replace == "" && len(r.Added)+len(r.Removed) > 0 }

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
	if len(r.Added)+len(r.Removed) == 0 {
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
	if len(r.Added) > 0 {
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
	removed := make([]string, len(r.Removed))
	for i, n := range r.Removed {
		removed[i] = clusterspec.NodeGroupName(spec.Name, n)
	}
	res, err := d.Run(ctx, placement.ResizeRequest(*spec, owner, d.Version, removed))
	if err != nil {
		d.ForgetChosen(spec.Namespace + "/" + spec.Name)
		detail := placement.CreateErrorDetail(r.AddedOnly(*spec), res, err)
		return nil, append(versionIssues, clusterspec.Issue{Summary: SummaryCannotResize, Detail: detail +
			"\n\nThe kept placement groups and their workers are untouched; the cluster keeps its former shape."})
	}
	if len(res.NotRemoved) > 0 {
		versionIssues = append(versionIssues, clusterspec.Issue{Warning: true, Summary: "Placement groups of removed nodes are left",
			Detail: fmt.Sprintf("The cluster now has its new shape, but Ray did not remove %s in time. Remove them with "+
				"ray.util.remove_placement_group, or apply a grow that brings their nodes back.", strings.Join(res.NotRemoved, ", "))})
	}
	return res, versionIssues
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
