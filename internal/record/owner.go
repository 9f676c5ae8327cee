package record

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Ray keeps only a digest of each owner token: anyone who can read Ray's KV
// or job records reads what is stored there, and the token is what lets a
// state act as a cluster's owner. The provider sends the driver the digest,
// never the token, since a driver job's entrypoint is readable as well.

// OwnerDigestPrefix tells a digest from the plain token records written
// before digests kept.
const OwnerDigestPrefix = "sha256:"

// OwnerDigest is what Ray keeps of owner token: always hashed, so that a
// digest read from Ray, used as a token, is not its owner's.
func OwnerDigest(token string) string {
	if token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return OwnerDigestPrefix + hex.EncodeToString(sum[:])
}

// StoredOwner is the digest of an owner as Ray stores it: a digest stays
// itself, an older record's plain token is hashed.
func StoredOwner(stored string) string {
	if stored == "" || strings.HasPrefix(stored, OwnerDigestPrefix) {
		return stored
	}
	return OwnerDigest(stored)
}

// OwnedBy reports whether stored (a record's, reservation's, tombstone's or
// note's owner, digest or older plain token) names the state whose token is
// token.
func OwnedBy(stored, token string) bool {
	return stored != "" && token != "" && StoredOwner(stored) == OwnerDigest(token)
}

// OwnerPrefix shortens an owner for messages: the first hex digits of its
// digest, whether given a token, a stored owner or a digest, so a state
// recognises its own clusters. A value no longer than a prefix is one
// already (the driver reports only prefixes of other owners).
func OwnerPrefix(owner string) string {
	if len(owner) <= OwnerPrefixLength {
		return owner
	}
	return strings.TrimPrefix(StoredOwner(owner), OwnerDigestPrefix)[:OwnerPrefixLength]
}
