package contract

import (
	"errors"
	"strings"
	"testing"
)

// A driver failure a user can fix ends with the fix; the provider's own
// bugs (a malformed request) have none. A driver that could not import Ray
// names python_executable, whether the driver reported it or the job died.
func TestFix(t *testing.T) {
	failed := func(code, msg string) error {
		return (&Result{Error: &ResultError{Kind: KindInternal, Code: code, Message: msg}}).Err()
	}
	for code, want := range map[string]string{
		CodeNotReady: "ready_timeout", CodeNoFreePort: "port_range_low", CodeNodesClaimed: "capacity_check",
		CodeGroupsExist: "terraform import", CodeTakenOver: "terraform import", CodeStopped: "apply again",
		CodeRequestField: "", CodeException: "",
	} {
		got := Fix(failed(code, "x"))
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("Fix(%s) = %q, want it to mention %q", code, got, want)
		}
	}
	for _, err := range []error{
		failed(CodeException, "ModuleNotFoundError: No module named 'ray'"),
		errors.New("job raytf_create_x ended with status FAILED; exit code 127; the driver printed no result"),
	} {
		if got := Fix(err); !strings.Contains(got, "python_executable") {
			t.Errorf("Fix(%v) = %q, want the python_executable fix", err, got)
		}
	}
	if Fix(nil) != "" || Fix(errors.New("boom")) != "" {
		t.Error("Fix of no error or an unknown one must be empty")
	}
}
