// Package record is the cluster record the provider keeps in Ray's KV next to
// a cluster's placement groups: its format (Manifest, schema 2, read by
// raytf_attach too), its keys (RecordKey, TombstoneKey, ReservationKey) and owner
// tokens, the record of a placed cluster (NewManifest of a Placement), and
// what import recovers of a declaration: from the record (DeclaredSpec) or,
// without one, inferred from the live groups (InferSpec, InferNative).
//
// It does no I/O (owner tokens only read crypto/rand).
package record
