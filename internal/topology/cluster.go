package topology

import "sort"

// Resources is a Ray resource map (name -> amount).
type Resources map[string]float64

// Add adds o's amounts to r's (r must not be nil).
func (r Resources) Add(o map[string]float64) {
	for k, v := range o {
		r[k] += v
	}
}

// GroupRequest is one placement group to place.
type GroupRequest struct {
	Name     string
	Strategy string
	// NodeIndex is the logical node of a per-node group, -1 for unified.
	NodeIndex int
	Bundles   []Resources
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
