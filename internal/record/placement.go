package record

import "github.com/ray-infra/terraform-provider-ray/internal/clusterspec"

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
	Want        clusterspec.GroupRequest
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
	// Where the driver found it (its BundleResult).
	NodeID       string
	NodeIP       string
	GPUID        *int
	NVLinkDomain string
	TopoRank     int
	Port         int
}

// SortedBundleIndices lists global bundle indices in rank order.
func (p Placement) SortedBundleIndices() []int {
	out := make([]int, len(p.Bundles))
	for i, b := range p.Bundles {
		out[i] = b.GlobalIndex
	}
	return out
}
