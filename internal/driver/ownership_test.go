package driver

import (
	"strings"
	"testing"
)

// TestOwnershipErrorsWording: Go words the ownership conflicts the driver
// reports as facts (the facts themselves: driverpy/tests/test_ownership.py).
func TestOwnershipErrorsWording(t *testing.T) {
	other := `"other": {"owner": "other", "created_at": "2026-12-02T18:00:00Z", "has_record": true}`
	for facts, want := range map[string]string{
		`"code": "groups_exist", "facts": {"cluster": "vc", "namespace": "terraform-ray", ` + other + `}`:                                                 `placement groups of "vc" already exist in namespace terraform-ray (created 2026-12-02T18:00:00Z); import it or choose another name`,
		`"code": "groups_exist", "facts": {"cluster": "vc", "namespace": "terraform-ray", "other": {"owner": "", "created_at": "", "has_record": false}}`: "no ownership record",
		`"code": "taken_over", "facts": {"cluster": "vc", "namespace": "terraform-ray", ` + other + `}`:                                                   "another Terraform state (owner other",
		`"code": "record_taken", "facts": {"key": "vc/terraform-ray/vc", ` + other + `}`:                                                                  "other",
	} {
		res, err := ParseResult(`RAYTF_RESULT {"ok": false, "action": "create", "error": {"kind": "conflict", `+facts+`}}`, "")
		if err != nil {
			t.Fatal(err)
		}
		if res.Error == nil || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%s: message %+v, want %q", facts, res.Error, want)
		}
	}
}
