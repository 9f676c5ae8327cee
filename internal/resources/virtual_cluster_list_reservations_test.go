package resources

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestUnownedReservationWarnings(t *testing.T) {
	owner, other := "0123456789abcdef-owner", "fedcba9876543210-other"
	base := contract.ListedReservation{Key: record.ReservationKey("ns", "vc"), Cluster: "ns/vc", Owner: owner,
		Nodes: map[string]topology.Resources{"node-1": {"GPU": 2, "CPU": 1}}, AgeSeconds: 100}
	cases := map[string]struct {
		u    placement.UnownedReservation
		want []string
	}{
		"stale": {placement.UnownedReservation{ListedReservation: base, Namespace: "ns", Name: "vc"},
			[]string{"It holds nothing any more", "the next create on this Ray cluster deletes it"}},
		"young": {placement.UnownedReservation{ListedReservation: contract.ListedReservation{Key: base.Key, Cluster: base.Cluster,
			Owner: owner, AgeSeconds: 3}, Namespace: "ns", Name: "vc"},
			[]string{"A create may still be making them", "nothing yet", "terraform import 'ray_virtual_cluster.<label>' 'ns/vc'"}},
		"no record": {placement.UnownedReservation{ListedReservation: base, Namespace: "ns", Name: "vc", LiveGroups: 2},
			[]string{"2 of its placement groups live, but the cluster has no record", "node-1: {CPU = 1, GPU = 2}",
				"ray.util.remove_placement_group"}},
		"other record": {placement.UnownedReservation{ListedReservation: base, Namespace: "ns", Name: "vc", LiveGroups: 1, RecordOwner: other},
			[]string{"names another owner (" + record.OwnerPrefix(other) + "…)", "terraform import"}},
	}
	for name, c := range cases {
		diags := unownedReservationWarnings([]placement.UnownedReservation{c.u})
		if len(diags) != 1 || diags[0].Summary() != summaryUnownedReservation+": ns/vc" {
			t.Fatalf("%s: %v", name, diags)
		}
		detail := diags[0].Detail()
		for _, w := range append(c.want, record.OwnerPrefix(owner)+"…", `_internal_kv_del("`+base.Key+`"`) {
			if !strings.Contains(detail, w) {
				t.Errorf("%s: detail lacks %q:\n%s", name, w, detail)
			}
		}
		for _, full := range []string{owner, other} {
			if strings.Contains(detail, full) {
				t.Errorf("%s: detail shows a full owner_id:\n%s", name, detail)
			}
		}
	}
}
