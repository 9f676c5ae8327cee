package resources

import "testing"

// The create half of a replacement (planned without prior state) must not
// take the old cluster's groups for another state's: it is known by the
// replacement claim of its first half, or by the owner token of a cluster
// this run planned with state.
func TestPlannedHere(t *testing.T) {
	d := &ProviderData{}
	if d.PlannedHere("ns", "vc", "") || d.PlannedHere("ns", "vc", "tok") {
		t.Fatal("nothing planned yet")
	}
	d.ClaimName("ns", "kept", "tok-kept", false)
	if !d.PlannedHere("ns", "kept", "tok-kept") || d.PlannedHere("ns", "kept", "") || d.PlannedHere("ns", "kept", "other") {
		t.Fatal("a planned cluster is known by its owner token only")
	}
	d.ClaimName("ns", "vc", "tok-vc", true)
	if !d.PlannedHere("ns", "vc", "") || d.PlannedHere("other-ns", "vc", "") {
		t.Fatal("a replacement is known in its namespace")
	}
}
