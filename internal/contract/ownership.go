package contract

import (
	"maps"
	"slices"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Ownership is what a request carries to keep the record: where it lives,
// the owner acting, and the record to write.
type Ownership struct {
	KVNamespace  string `json:"kv_namespace"`
	Key          string `json:"key"`
	TombstoneKey string `json:"tombstone_key"`
	// Owner is the digest of this state's token (record.OwnerDigest): the
	// request is readable in the driver job's entrypoint. "" for a state
	// written before owners existed, which may only act on groups that have
	// no record.
	Owner string `json:"owner"`
	// Claim takes the cluster over whatever the record says (import).
	Claim bool `json:"claim"`
	// Manifest is written after a successful create or inspect. The driver
	// fills the placement fields in natural order; when the rank order
	// differs, the provider rewrites the record (ActionRecord).
	Manifest *record.Manifest `json:"manifest,omitempty"`
	// Reservation is what a create reserves before it makes any group, and
	// a delete releases with it.
	Reservation *Reservation `json:"reservation,omitempty"`
	// ListReservations, on a read (ReservationsRequest), is the prefix of
	// the reservations to list instead of a record.
	ListReservations string `json:"list_reservations,omitempty"`
}

// ListedReservation is one reservation as a ReservationsRequest reads it,
// its token left out.
type ListedReservation struct {
	Key     string `json:"key"`
	Cluster string `json:"cluster"` // "<namespace>/<name>"
	// Owner is the digest of the owner_id of the state that wrote it:
	// compared with the cluster's record, never shown in full.
	Owner     string                        `json:"owner"`
	Groups    []string                      `json:"groups"`
	GroupIDs  []string                      `json:"group_ids"`
	Nodes     map[string]topology.Resources `json:"nodes"`
	Exclusive bool                          `json:"exclusive"`
	// AgeSeconds is how long ago its create wrote it.
	AgeSeconds float64 `json:"age_seconds"`
}

// Reservation is a cluster's reservation of what its bundles ask of Ray's
// nodes (record.ReservationKey): checked, under record.ReservationLockKey,
// against each node's total minus the groups Ray holds there and the
// reservations whose groups do not hold it yet, and written in the same
// step. Two clusters share a node whenever it holds both.
type Reservation struct {
	Key     string `json:"key"`
	Prefix  string `json:"prefix"`   // every reservation's: a lost race reports them all
	LockKey string `json:"lock_key"` // taken for each check-and-write and release
	// Cluster is "<namespace>/<name>": a reservation of the same cluster is its own.
	Cluster string `json:"cluster"`
	// Groups names the cluster's groups: a reservation none of whose groups
	// exists after StaleSeconds holds nothing.
	Groups []string `json:"groups"`
	// Nodes is what the bundles ask of each chosen node (select_nodes); nil
	// for a cluster Ray places, which waits until no reservation is pending,
	// reserves its bundles as unplaced, creates its groups without the lock
	// and settles the reservation where Ray put them.
	Nodes map[string]topology.Resources `json:"nodes"`
	// CountLive: the check counts the groups Ray holds on the node (every
	// capacity_check but "none", whose groups queue in Ray).
	CountLive bool `json:"count_live"`
	// Exclusive reserves each node whole (exclusive_nodes): it takes no node
	// another group or reservation uses, and no other takes a share of it.
	Exclusive        bool `json:"exclusive"`
	StaleSeconds     int  `json:"stale_seconds"`
	LockStaleSeconds int  `json:"lock_stale_seconds"`
	// OwnerPrefixLength is how much of another state's owner digest the
	// driver reports of a holder (record.OwnerPrefix): never the whole.
	OwnerPrefixLength int `json:"owner_prefix_length"`
}

// reservation is spec's reservation: what each selected node holds of its
// bundles, or for a cluster Ray places, nodes to be learnt at create.
func reservation(s clusterspec.Spec) *Reservation {
	r := &Reservation{Key: record.ReservationKey(s.Namespace, s.Name), Prefix: record.ReservationPrefix,
		LockKey: record.ReservationLockKey, Cluster: s.Namespace + "/" + s.Name, Groups: slices.Sorted(maps.Keys(s.GroupNames())),
		CountLive: s.CapacityMode() != clusterspec.CapacityNone, Exclusive: s.ExclusiveNodes, StaleSeconds: record.ReservationStaleSeconds,
		LockStaleSeconds: record.ReservationLockStaleSeconds, OwnerPrefixLength: record.OwnerPrefixLength}
	r.Nodes = s.NodeAsk()
	return r
}

// Owned returns req with the ownership of spec's record for owner (a
// token; the request carries its digest); manifest
// (nil for delete) is written by create, inspect and record.
func (r Request) Owned(spec clusterspec.Spec, owner string, claim bool, manifest *record.Manifest) Request {
	spec = spec.WithDefaults()
	r.Ownership = &Ownership{
		KVNamespace: record.KVNamespace, Key: record.RecordKey(spec.Namespace, spec.Name),
		TombstoneKey: record.TombstoneKey(spec.Namespace, spec.Name), Owner: record.OwnerDigest(owner), Claim: claim, Manifest: manifest,
		Reservation: reservation(spec),
	}
	if r.Action == ActionCreate || r.Action == ActionResize { // checked under the reservation lock
		r.Quota = QuotaFor(spec.Namespace)
	}
	return r
}

// ReadRequest reads the record and tombstone of cluster name in Ray
// namespace ns and changes nothing. The result's Missing lists those of
// groups that do not live in ns (the state API lists every namespace's).
func ReadRequest(ns, name string, groups ...string) Request {
	r := NewRequest(ActionRead, ns, namedGroups(groups), false, topology.PortRange{}, 0)
	r.Ownership = &Ownership{KVNamespace: record.KVNamespace, Key: record.RecordKey(r.Namespace, name), TombstoneKey: record.TombstoneKey(r.Namespace, name)}
	return r
}

// ReservationsRequest lists every reservation (record.ReservationPrefix)
// for terraform query; it changes nothing.
func ReservationsRequest(ns string) Request {
	r := NewRequest(ActionRead, ns, nil, false, topology.PortRange{}, 0)
	r.Ownership = &Ownership{KVNamespace: record.KVNamespace, ListReservations: record.ReservationPrefix}
	return r
}
