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
	// Owner is this state's token; "" for a state written before owners
	// existed, which may only act on groups that have no record.
	Owner string `json:"owner"`
	// Claim takes the cluster over whatever the record says (import).
	Claim bool `json:"claim"`
	// Manifest is written after a successful create or inspect. The driver
	// fills the placement fields in natural order; when the rank order
	// differs, the provider rewrites the record (ActionRecord).
	Manifest *record.Manifest `json:"manifest,omitempty"`
	// NodeClaims are the nodes a create claims before it makes any group, and
	// a delete releases with them; nil for a cluster Ray places freely.
	NodeClaims *NodeClaims `json:"node_claims,omitempty"`
}

// NodeClaims is a cluster's claim on the nodes select_nodes chose for it.
type NodeClaims struct {
	// Keys maps each node id to its claim key (ClaimKey).
	Keys map[string]string `json:"keys"`
	// Prefix is every claim key's (ClaimKey("")): a lost race reports all
	// nodes claimed, not only those that collided.
	Prefix string `json:"prefix"`
	// Cluster is "<namespace>/<name>": a claim of the same cluster is its own.
	Cluster string `json:"cluster"`
	// Groups names the cluster's groups: a claim none of whose groups exists
	// after StaleSeconds is released for the next claimant.
	Groups       []string `json:"groups"`
	StaleSeconds int      `json:"stale_seconds"`
}

// nodeClaims is the claim of a cluster pinned to its selected nodes, else nil.
func nodeClaims(s clusterspec.Spec) *NodeClaims {
	if !s.SelectNodes || len(s.SelectedNodeIDs) != len(s.BundleCtPerNode) {
		return nil
	}
	keys := make(map[string]string, len(s.SelectedNodeIDs))
	for _, id := range s.SelectedNodeIDs {
		keys[id] = record.ClaimKey(id)
	}
	return &NodeClaims{Keys: keys, Prefix: record.ClaimKey(""), Cluster: s.Namespace + "/" + s.Name, Groups: slices.Sorted(maps.Keys(s.GroupNames())),
		StaleSeconds: record.ClaimStaleSeconds}
}

// Owned returns req with the ownership of spec's record for owner; manifest
// (nil for delete) is written by create, inspect and record.
func (r Request) Owned(spec clusterspec.Spec, owner string, claim bool, manifest *record.Manifest) Request {
	spec = spec.WithDefaults()
	r.Ownership = &Ownership{
		KVNamespace: record.KVNamespace, Key: record.RecordKey(spec.Namespace, spec.Name),
		TombstoneKey: record.TombstoneKey(spec.Namespace, spec.Name), Owner: owner, Claim: claim, Manifest: manifest,
		NodeClaims: nodeClaims(spec),
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
