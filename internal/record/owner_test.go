package record

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// Ray keeps the digest; a digest used as a token is not its owner's; a
// record of an older version (the plain token) is still its owner's; every
// form of one owner shows the same prefix.
func TestOwnerDigest(t *testing.T) {
	tok, err := NewOwnerToken()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(tok))
	digest := OwnerDigest(tok)
	if digest != "sha256:"+hex.EncodeToString(sum[:]) || OwnerDigest("") != "" {
		t.Fatalf("OwnerDigest(%q) = %q", tok, digest)
	}
	if StoredOwner(digest) != digest || StoredOwner(tok) != digest || StoredOwner("") != "" {
		t.Errorf("StoredOwner does not read a digest as itself and a plain token as its digest")
	}
	for _, c := range []struct {
		stored, token string
		want          bool
	}{
		{digest, tok, true}, {tok, tok, true}, {digest, digest, false}, {digest, "other", false},
		{"", "", false}, {"", tok, false}, {digest, "", false},
	} {
		if got := OwnedBy(c.stored, c.token); got != c.want {
			t.Errorf("OwnedBy(%q, %q) = %v", c.stored, c.token, got)
		}
	}
	p := OwnerPrefix(tok)
	if p != hex.EncodeToString(sum[:])[:OwnerPrefixLength] || OwnerPrefix(digest) != p || OwnerPrefix(p) != p {
		t.Errorf("prefixes differ: %q %q %q", p, OwnerPrefix(digest), OwnerPrefix(p))
	}
	m := NewManifest(clusterspec.Spec{Name: "vc", Namespace: "ns", BundleCtPerNode: []int{1}}, tok, "test", Placement{})
	if m.Owner != digest {
		t.Errorf("a new record keeps %q", m.Owner)
	}
	d := OtherOwner{Owner: digest, CreatedAt: "now"}.Describe()
	if strings.Contains(d, digest) || strings.Contains(d, tok) || !strings.Contains(d, p) {
		t.Errorf("Describe: %q", d)
	}
}
