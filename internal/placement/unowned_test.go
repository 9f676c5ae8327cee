package placement

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

func TestUnownedReservations(t *testing.T) {
	listed := []contract.ListedReservation{
		{Cluster: "ns/owned", Owner: "o-1", GroupIDs: []string{"id-owned"}},
		{Cluster: "ns/stale", Owner: "o-2", Groups: []string{"stale-node0"}, AgeSeconds: record.ReservationStaleSeconds + 1},
		{Cluster: "ns/young", Owner: "o-3", Groups: []string{"young-node0"}, AgeSeconds: 1},
		{Cluster: "ns/norecord", Owner: "o-4", Groups: []string{"norecord-node0"}, AgeSeconds: 100},
		{Cluster: "ns/imported", Owner: "o-5", GroupIDs: []string{"id-imported"}, AgeSeconds: 100},
		{Cluster: "ns/elsewhere", Owner: "o-6", Groups: []string{"elsewhere-node0"}, AgeSeconds: 100},
		{Cluster: "other-ns/stale", Owner: "o-7", AgeSeconds: 100},
		{Cluster: "ns/x-filtered", Owner: "o-8", AgeSeconds: 100},
	}
	live := []raystate.PlacementGroup{{PlacementGroupID: "id-owned"}, {PlacementGroupID: "id-imported"}}
	// elsewhere-node0 lives only in another namespace: not among the groups here.
	here := map[string]bool{"norecord-node0": true}
	records := map[string]*record.Manifest{"owned": {Owner: "o-1"}, "imported": {Owner: "o-new"}, "norecord": nil}
	got := UnownedReservations(listed, "ns", "", live, here, records)
	want := map[string]struct {
		live        int
		stale       bool
		recordOwner string
	}{
		"elsewhere": {0, true, ""}, "imported": {1, false, "o-new"}, "norecord": {1, false, ""}, "stale": {0, true, ""},
		"x-filtered": {0, true, ""}, "young": {0, false, ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d unowned reservations, want %d: %+v", len(got), len(want), got)
	}
	for i, u := range got {
		w, ok := want[u.Name]
		if !ok || u.LiveGroups != w.live || u.Stale() != w.stale || u.RecordOwner != w.recordOwner || u.Namespace != "ns" {
			t.Errorf("%s: live %d, stale %t, record owner %q; want %+v", u.Name, u.LiveGroups, u.Stale(), u.RecordOwner, w)
		}
		if i > 0 && got[i-1].Name > u.Name {
			t.Errorf("not sorted by name: %s before %s", got[i-1].Name, u.Name)
		}
	}
	if n := len(UnownedReservations(listed, "ns", "x-", live, here, records)); n != 1 {
		t.Errorf("name prefix x-: %d reservations, want 1", n)
	}
}
