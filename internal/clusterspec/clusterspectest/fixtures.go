package clusterspectest

import (
	"path/filepath"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Topo is the local test cluster's topology, plus the extra node rackB-0.
var Topo = []topology.Node{
	{ID: "head", Domain: topology.NVLinkDomainUnknown, TopoRank: 1},
	{ID: "a1", Domain: "nvlink_domain_rackA", TopoRank: 3},
	{ID: "a2", Domain: "nvlink_domain_rackA", TopoRank: 2},
	{ID: "b1", Domain: "nvlink_domain_rackB", TopoRank: 5},
	{ID: "b2", Domain: "nvlink_domain_rackB", TopoRank: 4},
	{ID: "c1", Domain: "nvlink_domain_rackC", TopoRank: 6},
}

// SelectingSpec is a select_nodes spec of counts per logical node, 4 GPUs a node.
func SelectingSpec(counts ...int) clusterspec.Spec {
	return clusterspec.Spec{Name: "vc", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: 4, MaxColocatedWorkerGroups: 1,
		SelectNodes: true}.WithDefaults()
}

// ValidSpec is a valid two-node spec of 8 GPU bundles each.
func ValidSpec() clusterspec.Spec {
	return clusterspec.Spec{
		Name:                     "vc",
		BundleCtPerNode:          []int{8, 8},
		UseGPUs:                  true,
		NumGPUsPerNode:           8,
		MaxColocatedWorkerGroups: 1,
		Strategy:                 topology.StrategySpread,
	}
}

// Ptr points at i.
func Ptr(i int) *int { return &i }

// LabelledSpec is ValidSpec with a node label selector on its first node.
func LabelledSpec() clusterspec.Spec {
	s := ValidSpec()
	s.BundleCtPerNode = []int{2, 1}
	s.NodeLabelSelectors = []map[string]string{{DomainLabel: "rackA"}, {}}
	return s.WithDefaults()
}

// DomainLabel and RankLabel are the node labels the test cluster carries
// for its NVLink domain and topo rank (scripts/ray-cluster.sh sets them; the
// stand-in dashboard uses the same constants).
const (
	DomainLabel = "raytf.io/nvlink-domain"
	RankLabel   = "raytf.io/topo-rank"
)

// LabelSource reads domains and ranks from DomainLabel and RankLabel.
var LabelSource = clusterspec.TopologySource{DomainLabel: DomainLabel, RankLabel: RankLabel}

// Nodes is Topo as Ray reports it: every node carries both the
// reference's resources and the labels that mirror them (as
// scripts/ray-cluster.sh starts them), except the head, which has no domain.
func Nodes() []raystate.Node {
	out := make([]raystate.Node, 0, len(Topo))
	for _, n := range Topo {
		res := map[string]float64{"CPU": 4, "GPU": 4, topology.TopoRankKey: float64(n.TopoRank)}
		labels := map[string]string{clusterspec.NodeIDLabel: n.ID, RankLabel: itoa(n.TopoRank)}
		if n.Domain != topology.NVLinkDomainUnknown {
			res[n.Domain] = 1
			labels[DomainLabel] = n.Domain[len(topology.NVLinkDomainPrefix):]
		}
		out = append(out, raystate.Node{NodeID: n.ID, ResourcesTotal: res, Labels: labels})
	}
	return out
}

// GPUNodes is Topo as Ray reports it to the state API: 4 CPUs and 4 GPUs a
// node (the head none), domains and ranks as resources.
func GPUNodes() []raystate.Node {
	out := make([]raystate.Node, 0, len(Topo))
	for _, n := range Topo {
		total := map[string]float64{"CPU": 4, "GPU": 4, topology.TopoRankKey: float64(n.TopoRank)}
		if n.Domain == topology.NVLinkDomainUnknown {
			total["GPU"] = 0
		} else {
			total[n.Domain] = 1
		}
		out = append(out, raystate.Node{NodeID: n.ID, ResourcesTotal: total})
	}
	return out
}

func itoa(i int) string { return string(rune('0' + i)) }

// ScaleSpec is nodes logical nodes of 8 GPU bundles.
func ScaleSpec(nodes int, unified bool) clusterspec.Spec {
	counts := make([]int, nodes)
	for i := range counts {
		counts[i] = 8
	}
	return clusterspec.Spec{Name: "scale", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: 8,
		MaxColocatedWorkerGroups: 1, UseUnifiedPG: unified}.WithDefaults()
}

// RepoRoot is the repository root, seen from a test of an internal/<package>.
func RepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
