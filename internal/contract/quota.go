package contract

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// ActionQuota writes a namespace's quota (QuotaRequest.Limits) or, with no
// limits, deletes it.
const ActionQuota = "quota"

// QuotaRequest points the driver at a Ray namespace's quota in the
// provider's KV: a create checks it under the reservation lock, ActionQuota
// writes it, a read with Usage reports what each holder holds.
type QuotaRequest struct {
	KVNamespace       string `json:"kv_namespace"`
	Key               string `json:"key"`
	Namespace         string `json:"namespace"`
	ReservationPrefix string `json:"reservation_prefix"`
	// Owner is the quota resource's owner token (ActionQuota).
	Owner             string `json:"owner"`
	OwnerPrefixLength int    `json:"owner_prefix_length"`
	// Limits are the quota's caps by resource name ("GPU", "CPU", custom);
	// nil with ActionQuota deletes the quota.
	Limits map[string]float64 `json:"limits"`
	Usage  bool               `json:"usage"`
	// Claim lets ActionQuota take over the quota another owner wrote: the
	// apply of an import.
	Claim bool `json:"claim"`
	// StaleSeconds is when a reservation none of whose groups lives no
	// longer counts (record.ReservationStaleSeconds, as a create's Ledger).
	StaleSeconds float64 `json:"stale_seconds"`
}

// QuotaFor is the quota reference of Ray namespace ns.
func QuotaFor(ns string) *QuotaRequest {
	return &QuotaRequest{KVNamespace: record.KVNamespace, Key: record.QuotaKey(ns), Namespace: ns,
		ReservationPrefix: record.ReservationPrefix, OwnerPrefixLength: record.OwnerPrefixLength,
		StaleSeconds: record.ReservationStaleSeconds}
}

// QuotaWriteRequest writes (limits set) or deletes (nil) the quota of ns
// as owner; claim takes over a quota another owner wrote (an import).
func QuotaWriteRequest(ns, owner string, limits map[string]float64, claim bool) Request {
	r := NewRequest(ActionQuota, ns, nil, false, topology.PortRange{}, 0)
	r.Quota = QuotaFor(ns)
	r.Quota.Owner, r.Quota.Limits, r.Quota.Claim = owner, limits, claim
	return r
}

// QuotaUsageRequest reads the quota of ns and what each holder holds
// there; it changes nothing.
func QuotaUsageRequest(ns string) Request {
	r := NewRequest(ActionRead, ns, nil, false, topology.PortRange{}, 0)
	r.Quota = QuotaFor(ns)
	r.Quota.Usage = true
	return r
}

// QuotaValue is a quota as the KV holds it.
type QuotaValue struct {
	Namespace string             `json:"namespace"`
	Owner     string             `json:"owner"`
	Limits    map[string]float64 `json:"limits"`
}

// QuotaHolder is what one holder holds in a quota's namespace: a virtual
// cluster by its reservation, or a group no reservation names (Outside:
// not a virtual cluster, or one from before reservations).
type QuotaHolder struct {
	Cluster   string             `json:"cluster"` // "<namespace>/<name>"
	Owner     string             `json:"owner"`   // a prefix of its owner token
	Resources topology.Resources `json:"resources"`
	Outside   bool               `json:"outside"`
	// Planned: a cluster the same plan creates (not in Ray yet).
	Planned bool `json:"-"`
}

// QuotaOver lists the resources of limits that used plus ask exceed, each
// as "GPU 9 of 8".
func QuotaOver(limits map[string]float64, used []QuotaHolder, ask topology.Resources) []string {
	return quotaLines(limits, used, ask, true)
}

// QuotaUse lists every resource of limits with what used holds of it, each
// as "GPU 3 of 8" (terraform query's report of a quota).
func QuotaUse(limits map[string]float64, used []QuotaHolder) []string {
	return quotaLines(limits, used, nil, false)
}

func quotaLines(limits map[string]float64, used []QuotaHolder, ask topology.Resources, overOnly bool) []string {
	total := topology.Resources{}
	for k, v := range ask {
		total[k] += v
	}
	for _, h := range used {
		for k, v := range h.Resources {
			total[k] += v
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(limits)) {
		if !overOnly || total[k] > limits[k]+AmountUnit/2 {
			out = append(out, fmt.Sprintf("%s %g of %g", k, total[k], limits[k]))
		}
	}
	return out
}

// DescribeQuotaHolders words what each holder holds, e.g. `ns/a (owner
// 1a2b3c4d…): {GPU: 4}; ns/x (not a virtual cluster): {GPU: 1}`.
func DescribeQuotaHolders(holders []QuotaHolder) string {
	if len(holders) == 0 {
		return "nothing"
	}
	parts := make([]string, len(holders))
	for i, h := range holders {
		who := "owner " + h.Owner + "…"
		switch {
		case h.Planned:
			who = "planned beside it"
		case h.Outside:
			who = "not a virtual cluster"
		}
		parts[i] = fmt.Sprintf("%s (%s): %s", h.Cluster, who, raystate.FormatResources(h.Resources))
	}
	return strings.Join(parts, "; ")
}
