package resources

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// sessionFrom extracts the session from Configure's request data.
func sessionFrom(raw any, diags *diag.Diagnostics) *session.Session {
	if raw == nil {
		return nil
	}
	data, ok := raw.(*session.Session)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *session.Session, got %T; this is a provider bug", raw))
		return nil
	}
	return data
}

// requireConfigured reports a clear error when the provider has no client yet,
// e.g. because its address depends on a resource that is not created.
func requireConfigured(data *session.Session, diags *diag.Diagnostics) bool {
	if !data.Configured() {
		diags.AddError("Ray provider not configured",
			"The provider's configuration is not known yet (it may depend on values only known after apply). "+
				"Set address to a known value.")
		return false
	}
	return true
}

// failUnanswered adds the plan's failure for err when Ray did not answer
// in time (session.Unanswered) and reports whether it did.
func failUnanswered(data *session.Session, diags *diag.Diagnostics, err error) bool {
	e := data.Unanswered(err)
	if e == nil {
		return false
	}
	diags.AddError("Ray does not answer", e.Error())
	return true
}

// addDashboardError explains a failed call to the dashboard
// (session.DashboardIssue).
func addDashboardError(diags *diag.Diagnostics, data *session.Session, err error) {
	addIssues(diags, []clusterspec.Issue{session.DashboardIssue(data.Address(), err)})
}
