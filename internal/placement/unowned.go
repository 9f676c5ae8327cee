package placement

import (
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// UnownedReservation is a reservation that no state's record stands behind,
// as terraform query reports it.
type UnownedReservation struct {
	contract.ListedReservation
	Namespace, Name string
	// LiveGroups counts its groups Ray still holds.
	LiveGroups int
	// RecordOwner is the owner its cluster's record names ("" without one).
	RecordOwner string
}

// Stale says the reservation holds nothing: its groups are gone and it is
// older than record.ReservationStaleSeconds, so the next create deletes it.
func (u UnownedReservation) Stale() bool {
	return u.LiveGroups == 0 && u.AgeSeconds >= record.ReservationStaleSeconds
}

// UnownedReservations picks the reservations of namespace ns whose cluster
// name starts with prefix and that no state owns: their groups are gone, or
// their cluster's record (records, by cluster name; nil or absent without
// one) does not name the reservation's owner. live is every group Ray
// holds; groupsHere the names of those that live in ns (group names repeat
// across namespaces). Sorted by name.
func UnownedReservations(listed []contract.ListedReservation, ns, prefix string, live []raystate.PlacementGroup,
	groupsHere map[string]bool, records map[string]*record.Manifest,
) []UnownedReservation {
	byID := map[string]bool{}
	for _, g := range live {
		byID[g.PlacementGroupID] = true
	}
	var out []UnownedReservation
	for _, r := range listed {
		rns, name, ok := strings.Cut(r.Cluster, "/")
		if !ok || rns != ns || !strings.HasPrefix(name, prefix) {
			continue
		}
		u := UnownedReservation{ListedReservation: r, Namespace: rns, Name: name}
		if len(r.GroupIDs) > 0 { // its create recorded them: ids are unique across namespaces
			for _, id := range r.GroupIDs {
				if byID[id] {
					u.LiveGroups++
				}
			}
		} else {
			for _, g := range r.Groups {
				if groupsHere[g] {
					u.LiveGroups++
				}
			}
		}
		if rec := records[name]; rec != nil {
			u.RecordOwner = rec.Owner
		}
		if u.LiveGroups > 0 && u.RecordOwner != "" && u.RecordOwner == r.Owner {
			continue // its state's
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b UnownedReservation) int { return strings.Compare(a.Name, b.Name) })
	return out
}
