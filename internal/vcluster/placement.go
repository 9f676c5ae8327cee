package vcluster

import (
	"fmt"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Placement is where Ray put a cluster, as the driver probed it.
type Placement struct {
	// Groups follows Spec.Groups order.
	Groups []PlacedGroup
	// Bundles is every bundle in rank order.
	Bundles []PlacedBundle
	// DomainPerBundle is each bundle's NVLink domain by global index.
	DomainPerBundle []string
	// MasterAddress and MasterPort are rank 0's node IP and port ("" and 0
	// without bundles).
	MasterAddress string
	MasterPort    int
}

// PlacedGroup is one group as Ray reports it.
type PlacedGroup struct {
	Want        GroupRequest
	ID          string
	State       string
	Strategy    string
	BundleCount int
}

// PlacedBundle is one bundle in rank order.
type PlacedBundle struct {
	Rank        int
	Group       string
	BundleIndex int
	// GlobalIndex is the bundle's index over all bundles in declaration order.
	GlobalIndex int
	BundleResult
}

// NewPlacement maps a create or inspect result onto the spec: groups in
// spec order and bundles in the reference's rank order (topology order for a
// unified GPU group, failing when segment trimming would drop bundles, else
// natural order).
func NewPlacement(spec Spec, res *Result) (Placement, []Issue) {
	var p Placement
	byName := map[string]GroupResult{}
	for _, g := range res.Groups {
		byName[g.Name] = g
	}
	var flat []PlacedBundle
	for _, want := range spec.Groups() {
		got, ok := byName[want.Name]
		if !ok || got.Missing {
			return p, []Issue{{Summary: "Placement group missing from the driver's report", Detail: fmt.Sprintf("Ray did not report group %q.", want.Name)}}
		}
		for i, b := range got.Bundles {
			flat = append(flat, PlacedBundle{Group: want.Name, BundleIndex: i, GlobalIndex: len(flat), BundleResult: b})
		}
		strategy := got.Strategy
		if strategy == "" {
			strategy = want.Strategy
		}
		p.Groups = append(p.Groups, PlacedGroup{Want: want, ID: got.ID, State: got.State, Strategy: strategy, BundleCount: len(got.Bundles)})
	}
	order, issues := rankOrder(spec, flat)
	if HasError(issues) {
		return p, issues
	}
	p.Bundles = make([]PlacedBundle, 0, len(order))
	for rank, gi := range order {
		b := flat[gi]
		b.Rank = rank
		p.Bundles = append(p.Bundles, b)
	}
	p.DomainPerBundle = make([]string, len(flat))
	for i, b := range flat {
		p.DomainPerBundle[i] = b.NVLinkDomain
	}
	if len(p.Bundles) > 0 {
		p.MasterAddress, p.MasterPort = p.Bundles[0].NodeIP, p.Bundles[0].Port
	}
	return p, issues
}

// SortedBundleIndices lists global bundle indices in rank order.
func (p Placement) SortedBundleIndices() []int {
	out := make([]int, len(p.Bundles))
	for i, b := range p.Bundles {
		out[i] = b.GlobalIndex
	}
	return out
}

// sortsByTopology: as in the reference, only a unified GPU cluster's bundles
// are ranked by topology; other clusters keep the natural order.
func (s Spec) sortsByTopology() bool { return s.UseUnifiedPG && s.UseGPUs }

func rankOrder(spec Spec, flat []PlacedBundle) ([]int, []Issue) {
	natural := make([]int, len(flat))
	for i := range natural {
		natural[i] = i
	}
	if !spec.sortsByTopology() {
		return natural, nil
	}
	in := make([]topology.Bundle, len(flat))
	for i, b := range flat {
		gpu := -1
		if b.GPUID != nil {
			gpu = *b.GPUID
		}
		in[i] = topology.Bundle{GPUID: gpu, Domain: b.NVLinkDomain, TopoRank: b.TopoRank, NodeID: b.NodeID}
	}
	var gpus *int
	if spec.SegmentSize != nil {
		gpus = &spec.NumGPUsPerNode
	}
	order, trims, err := topology.SortBundleIndicesByTopology(in, spec.SegmentSize, gpus)
	if err != nil {
		return nil, []Issue{{Summary: "Cannot order bundles by topology", Detail: err.Error()}}
	}
	if len(order) != len(flat) {
		var parts []string
		for _, t := range trims {
			parts = append(parts, fmt.Sprintf("%s: %d of %d nodes usable, %d bundles discarded", t.Domain, t.UsableNodes, t.DomainNodes, t.Discarded))
		}
		return nil, []Issue{{Path: AttrSegmentSize, Summary: "Incomplete NVLink segments", Detail: fmt.Sprintf(
			"Topology sort kept %d of %d bundles because some NVLink domains had incomplete segments (%s). "+
				"Make segment_size divide each domain's node count, and pin the nodes to complete segments with "+
				"node_resource_constraints (see data.ray_cluster_topology). The groups were removed.",
			len(order), len(flat), strings.Join(parts, "; "))}}
	}
	return order, nil
}
