package resources

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// summaryUnownedReservation begins the warning terraform query gives for a
// reservation no state owns.
const summaryUnownedReservation = "Reservation no state owns"

// unownedReservationWarnings are query's warnings, one per reservation no
// state owns, each saying what it holds and how to release it.
func unownedReservationWarnings(unowned []placement.UnownedReservation) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, u := range unowned {
		diags.AddWarning(fmt.Sprintf("%s: %s/%s", summaryUnownedReservation, u.Namespace, u.Name), session.UnownedReservationDetail(u))
	}
	return diags
}
