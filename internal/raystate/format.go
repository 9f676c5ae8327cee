package raystate

import (
	"fmt"
	"sort"
	"strings"
)

// FormatResources renders a resource map with sorted keys.
func FormatResources(r map[string]float64) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %g", k, r[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// GroupResourceMarker appears in the per-placement-group resources Ray adds
// to nodes (e.g. CPU_group_<id>), which are not node capacity.
const GroupResourceMarker = "_group_"

// ShortID shortens a node id for messages.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
