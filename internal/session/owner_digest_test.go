package session

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Records keep the digest of a token: the list's owner_ids still take the
// tokens a state holds, a digest given as an owner id is no token, and the
// listing shows the digest's prefix, the one a state computes from its token.
func TestListClassComparesDigests(t *testing.T) {
	tok := "0123456789abcdef0123456789abcdef"
	rec := &record.Manifest{Name: "vc", Owner: record.OwnerDigest(tok)}
	if got := ListClass(rec, []string{"other", tok}, ""); got != OwnedHere {
		t.Errorf("the token of a digest record: %s", got)
	}
	if got := ListClass(rec, []string{record.OwnerDigest(tok)}, ""); got != OwnedOther {
		t.Errorf("a digest given as owner id: %s", got)
	}
	name := ListDisplayName(ListCandidate{Name: "vc"}, rec, OwnedHere)
	if !strings.Contains(name, "owner "+record.OwnerPrefix(tok)+"…") || strings.Contains(name, rec.Owner) {
		t.Errorf("display name %q", name)
	}
}

// The replacement's create finds the old cluster's record, holding the
// digest of the token the state planned with.
func TestPlannedHereComparesDigests(t *testing.T) {
	tok := "0123456789abcdef0123456789abcdef"
	d := &Session{}
	d.ClaimName(clusterspec.Spec{Namespace: "ns", Name: "vc"}, tok, false)
	if !d.PlannedHere("ns", "vc", record.OwnerDigest(tok)) || !d.PlannedHere("ns", "vc", tok) {
		t.Error("the record of the state's own token is not planned here")
	}
	if d.PlannedHere("ns", "vc", record.OwnerDigest("other")) {
		t.Error("another owner's record is planned here")
	}
}
