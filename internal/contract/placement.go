package contract

import (
	"fmt"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// NewPlacement maps a create or inspect result onto the spec: groups in
// spec order and bundles in the reference's rank order (topology order for a
// unified GPU group, failing when segment trimming would drop bundles, else
// natural order).
func NewPlacement(spec clusterspec.Spec, res *Result) (record.Placement, []clusterspec.Issue) {
	var p record.Placement
	byName := map[string]GroupResult{}
	for _, g := range res.Groups {
		byName[g.Name] = g
	}
	var flat []record.PlacedBundle
	for _, want := range spec.Groups() {
		got, ok := byName[want.Name]
		if !ok || got.Missing {
			return p, []clusterspec.Issue{{Summary: "Placement group missing from the driver's report", Detail: fmt.Sprintf("Ray did not report group %q.", want.Name)}}
		}
		for i, b := range got.Bundles {
			flat = append(flat, record.PlacedBundle{Group: want.Name, BundleIndex: i, GlobalIndex: len(flat), NodeID: b.NodeID,
				NodeIP: b.NodeIP, GPUID: b.GPUID, NVLinkDomain: b.NVLinkDomain, TopoRank: b.TopoRank, Port: b.Port})
		}
		strategy := got.Strategy
		if strategy == "" {
			strategy = want.Strategy
		}
		p.Groups = append(p.Groups, record.PlacedGroup{Want: want, ID: got.ID, State: got.State, Strategy: strategy, BundleCount: len(got.Bundles)})
	}
	order, issues := rankOrder(spec, flat)
	if clusterspec.HasError(issues) {
		return p, issues
	}
	p.Bundles = make([]record.PlacedBundle, 0, len(order))
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

func rankOrder(spec clusterspec.Spec, flat []record.PlacedBundle) ([]int, []clusterspec.Issue) {
	natural := make([]int, len(flat))
	for i := range natural {
		natural[i] = i
	}
	if !spec.SortsByTopology() {
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
		return nil, []clusterspec.Issue{{Summary: "Cannot order bundles by topology", Detail: err.Error()}}
	}
	if len(order) != len(flat) {
		var parts []string
		for _, t := range trims {
			parts = append(parts, fmt.Sprintf("%s: %d of %d nodes usable, %d bundles discarded", t.Domain, t.UsableNodes, t.DomainNodes, t.Discarded))
		}
		return nil, []clusterspec.Issue{{Path: clusterspec.AttrSegmentSize, Summary: "Incomplete NVLink segments", Detail: fmt.Sprintf(
			"Topology sort kept %d of %d bundles because some NVLink domains had incomplete segments (%s). "+
				"Make segment_size divide each domain's node count, and pin the nodes to complete segments with "+
				"node_resource_constraints (see data.ray_cluster_topology). The groups were removed.",
			len(order), len(flat), strings.Join(parts, "; "))}}
	}
	return order, nil
}
