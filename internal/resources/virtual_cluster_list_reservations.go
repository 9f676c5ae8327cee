package resources

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// summaryUnownedReservation begins the warning terraform query gives for a
// reservation no state owns.
const summaryUnownedReservation = "Reservation no state owns"

// unownedReservationWarnings are query's warnings, one per reservation no
// state owns, each saying what it holds and how to release it.
func unownedReservationWarnings(unowned []placement.UnownedReservation) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, u := range unowned {
		diags.AddWarning(fmt.Sprintf("%s: %s/%s", summaryUnownedReservation, u.Namespace, u.Name), unownedReservationDetail(u))
	}
	return diags
}

func unownedReservationDetail(u placement.UnownedReservation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ray's KV holds a reservation for virtual cluster %q of Ray namespace %q (key %q, written %.0f s ago by owner %s…",
		u.Name, u.Namespace, u.Key, u.AgeSeconds, record.OwnerPrefix(u.Owner))
	if u.Exclusive {
		b.WriteString(", whole nodes")
	}
	b.WriteString("), and no state's record stands behind it: ")
	switch {
	case u.Stale():
		b.WriteString("its placement groups are gone. It holds nothing any more: the next create on this Ray cluster deletes it.\n")
	case u.LiveGroups == 0:
		fmt.Fprintf(&b, "its placement groups do not exist (yet, or any more). A create may still be making them; until then, "+
			"and for at most %d s after it was written, it holds its share of the nodes below.\n", record.ReservationStaleSeconds)
	case u.RecordOwner == "":
		fmt.Fprintf(&b, "%d of its placement groups live, but the cluster has no record (a create killed before it recorded "+
			"the cluster, or a record deleted by hand). It holds its share of the nodes below for as long as they live.\n", u.LiveGroups)
	default:
		fmt.Fprintf(&b, "%d of its placement groups live, but the cluster's record names another owner (%s…). It holds its "+
			"share of the nodes below for as long as they live.\n", u.LiveGroups, record.OwnerPrefix(u.RecordOwner))
	}
	b.WriteString("\nWhat it reserves, by node:\n")
	for _, node := range slices.Sorted(maps.Keys(u.Nodes)) {
		fmt.Fprintf(&b, "  - %s: %s\n", node, resourceText(u.Nodes[node]))
	}
	if len(u.Nodes) == 0 {
		b.WriteString("  - nothing yet (a cluster Ray places reserves once its groups are placed)\n")
	}
	if !u.Stale() {
		fmt.Fprintf(&b, "\nTo release it, import the cluster into a state and destroy it: the import takes the reservation over "+
			"and the destroy releases it with the groups (terraform import 'ray_virtual_cluster.<label>' '%s/%s'). Or remove "+
			"its placement groups with ray.util.remove_placement_group: %d s after they are gone the next create deletes it.",
			u.Namespace, u.Name, record.ReservationStaleSeconds)
	}
	fmt.Fprintf(&b, "\nTo delete only the reservation, by hand (its groups, if any live, are then counted as groups no "+
		"reservation names): python -c 'import ray; from ray.experimental import internal_kv; ray.init(); "+
		"internal_kv._internal_kv_del(\"%s\", namespace=\"%s\")'", u.Key, record.KVNamespace)
	return b.String()
}
