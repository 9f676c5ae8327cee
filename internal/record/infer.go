package record

import (
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// InferSpec rebuilds the spec of cluster name from its live groups, with
// every attribute Ray cannot tell at its default. counts, when given, splits
// a unified group's bundles into logical nodes. The state API does not
// report a group's strategy: the caller takes it from an inspect. found is false when Ray has
// no group of that name; err says why the groups do not form a cluster.
func InferSpec(name string, live []raystate.PlacementGroup, counts []int) (spec clusterspec.Spec, found bool, err error) {
	spec = clusterspec.Spec{
		Name: name, UseGPUs: false, NumGPUsPerNode: clusterspec.DefaultNumGPUsPerNode,
		MaxColocatedWorkerGroups: clusterspec.DefaultMaxColocatedWorkerGroups, Strategy: clusterspec.DefaultStrategy,
	}.WithDefaults()
	perNode := map[int][]raystate.Bundle{}
	var unified []raystate.Bundle
	nodeGroup := regexp.MustCompile("^" + regexp.QuoteMeta(name) + `-node(\d+)$`)
	for _, g := range live {
		switch {
		case g.Name == clusterspec.UnifiedGroupName(name):
			unified, spec.UseUnifiedPG, found = g.Bundles, true, true
		case nodeGroup.MatchString(g.Name):
			if i, err := strconv.Atoi(nodeGroup.FindStringSubmatch(g.Name)[1]); err == nil && i < clusterspec.MaxLogicalNodes {
				perNode[i], found = g.Bundles, true
			}
		}
	}
	if !found {
		return spec, false, nil
	}
	var nodes [][]raystate.Bundle
	if spec.UseUnifiedPG {
		if len(counts) == 0 {
			counts = []int{len(unified)}
		}
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != len(unified) {
			return spec, true, fmt.Errorf("the import id splits %d bundles but %s has %d", total, clusterspec.UnifiedGroupName(name), len(unified))
		}
		at := 0
		for _, c := range counts {
			nodes = append(nodes, unified[at:at+c])
			at += c
		}
		spec.BundleCtPerNode = counts
	} else {
		idx := make([]int, 0, len(perNode))
		for i := range perNode {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		nodes = make([][]raystate.Bundle, idx[len(idx)-1]+1)
		for _, i := range idx {
			nodes[i] = perNode[i]
		}
		for _, n := range nodes {
			spec.BundleCtPerNode = append(spec.BundleCtPerNode, len(n))
		}
	}
	anyConstraint := false
	constraints := make([]topology.Resources, len(nodes))
	for i, n := range nodes {
		constraints[i] = topology.Resources{}
		if len(n) == 0 {
			continue
		}
		res := n[0].UnitResources
		spec.UseGPUs = spec.UseGPUs || res["GPU"] > 0
		if res["CPU"] >= 1 {
			spec.MaxColocatedWorkerGroups = int(res["CPU"])
		}
		for k, v := range res {
			if k != "CPU" && k != "GPU" {
				constraints[i][k] = v
				anyConstraint = true
			}
		}
	}
	if anyConstraint {
		spec.NodeResourceConstraints = constraints
	}
	return spec, true, nil
}

// InferNative reads node_label_selectors and topology_strategy back from
// the live groups of an imported cluster: each logical node takes the
// label selector of its first bundle, the unified group its topology
// strategy without the node-level entry. Both stay nil when Ray shows none.
func InferNative(s *clusterspec.Spec, live []raystate.PlacementGroup) {
	byName := map[string]raystate.PlacementGroup{}
	for _, g := range live {
		byName[g.Name] = g
	}
	selectors := make([]map[string]string, len(s.BundleCtPerNode))
	found := false
	for _, want := range s.Groups() {
		got, ok := byName[want.Name]
		if !ok {
			continue
		}
		nodes := s.BundleNodes(want)
		for _, b := range got.Bundles {
			if b.BundleIndex < 0 || b.BundleIndex >= len(nodes) || selectors[nodes[b.BundleIndex]] != nil {
				continue
			}
			selectors[nodes[b.BundleIndex]] = maps.Clone(b.LabelSelector)
			found = found || len(b.LabelSelector) > 0
		}
		if want.NodeIndex < 0 && len(got.TopologyStrategy) > 0 {
			s.TopologyStrategy = map[string]string{}
			for k, v := range got.TopologyStrategy {
				if k != clusterspec.NodeIDLabel {
					s.TopologyStrategy[k] = v
				}
			}
		}
	}
	if !found {
		return
	}
	for i, sel := range selectors {
		if sel == nil {
			selectors[i] = map[string]string{}
		}
	}
	s.NodeLabelSelectors = selectors
}
