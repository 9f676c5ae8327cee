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
	// Owner is the digest of the quota resource's owner token (ActionQuota).
	Owner             string `json:"owner"`
	OwnerPrefixLength int    `json:"owner_prefix_length"`
	// Limits are the quota's caps by resource name ("GPU", "CPU", custom);
	// nil with ActionQuota deletes the quota.
	Limits map[string]float64 `json:"limits"`
	// LabelLimits cap what the namespace holds on the nodes of given labels.
	LabelLimits []LabelLimit `json:"label_limits"`
	Usage       bool         `json:"usage"`
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

// QuotaWriteRequest writes (caps set) or deletes (nil) the quota of ns
// as owner; claim takes over a quota another owner wrote (an import).
func QuotaWriteRequest(ns, owner string, caps *QuotaCaps, claim bool) Request {
	r := NewRequest(ActionQuota, ns, nil, false, topology.PortRange{}, 0)
	r.Quota = QuotaFor(ns)
	r.Quota.Owner, r.Quota.Claim = record.OwnerDigest(owner), claim
	if caps != nil {
		r.Quota.Limits, r.Quota.LabelLimits = caps.Limits, caps.LabelLimits
	}
	return r
}

// QuotaCaps are a quota's limits: in all, and on the nodes of given labels.
type QuotaCaps struct {
	Limits      map[string]float64 `json:"limits"`
	LabelLimits []LabelLimit       `json:"label_limits,omitempty"`
}

// Over lists what used plus ask would take over c: in all (QuotaOver), and
// on the nodes of each label limit, where askNodes is the ask per node (nil
// where the nodes are not known yet) and labelsOf each node's labels.
func (c QuotaCaps) Over(used []QuotaHolder, ask topology.Resources, askNodes map[string]topology.Resources, labelsOf map[string]map[string]string) []string {
	over := QuotaOver(c.Limits, used, ask)
	for _, u := range LabelUses(c.LabelLimits, used, labelsOf, askNodes) {
		over = append(over, u.Over()...)
	}
	return over
}

// OverHeld lists what used alone holds over c, in all and on the nodes of
// each label limit (a quota lowered below use).
func (c QuotaCaps) OverHeld(used []QuotaHolder, labelsOf map[string]map[string]string) []string {
	over := QuotaOver(c.Limits, used, nil)
	for _, u := range LabelUses(c.LabelLimits, used, labelsOf, nil) {
		over = append(over, u.lines(u.Limits, true)...)
	}
	return over
}

// Use lists every limit of c with what used holds of it (terraform query's
// report of a quota).
func (c QuotaCaps) Use(used []QuotaHolder, labelsOf map[string]map[string]string) []string {
	use := QuotaUse(c.Limits, used)
	for _, u := range LabelUses(c.LabelLimits, used, labelsOf, nil) {
		use = append(use, u.Use()...)
	}
	return use
}

// Describe words c, e.g. "{GPU: 8}, {GPU: 2} on nodes labelled rack=A".
func (c QuotaCaps) Describe() string {
	parts := []string{raystate.FormatResources(c.Limits)}
	for _, l := range c.LabelLimits {
		parts = append(parts, raystate.FormatResources(l.Limits)+" on "+l.Describe())
	}
	return strings.Join(parts, ", ")
}

// LabelLimit caps what a namespace holds on the nodes that carry every one
// of Labels (e.g. {"ray.io/accelerator-type": "H100"}).
type LabelLimit struct {
	Labels map[string]string  `json:"labels"`
	Limits map[string]float64 `json:"limits"`
}

// Matches tells whether a node of these labels is one the limit caps.
func (l LabelLimit) Matches(labels map[string]string) bool {
	for k, v := range l.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Describe words the limit's nodes, e.g. "nodes labelled rack=A".
func (l LabelLimit) Describe() string {
	parts := make([]string, 0, len(l.Labels))
	for _, k := range slices.Sorted(maps.Keys(l.Labels)) {
		parts = append(parts, k+"="+l.Labels[k])
	}
	return "nodes labelled " + strings.Join(parts, ", ")
}

// LabelUse is what a namespace holds (Used) on the nodes of a label limit,
// and what a create asks there (Ask).
type LabelUse struct {
	Labels map[string]string  `json:"labels"`
	Limits map[string]float64 `json:"limits"`
	Used   topology.Resources `json:"used"`
	Ask    topology.Resources `json:"ask,omitempty"`
}

// Limit is the label limit u reports on.
func (u LabelUse) Limit() LabelLimit { return LabelLimit{Labels: u.Labels, Limits: u.Limits} }

// Over lists the resources the create asks on u's nodes that its use and
// ask together take over the limits, each as "GPU 3 of 2 on nodes labelled
// rack=A". A create that asks nothing there is never over: a cluster Ray
// places may land elsewhere.
func (u LabelUse) Over() []string {
	asked := map[string]float64{}
	for k, v := range u.Limits {
		if u.Ask[k] > AmountUnit/2 {
			asked[k] = v
		}
	}
	return u.lines(asked, true)
}

// Use lists every resource of u's limits with its use, as Over words it.
func (u LabelUse) Use() []string { return u.lines(u.Limits, false) }

func (u LabelUse) lines(limits map[string]float64, overOnly bool) []string {
	var out []string
	where := " on " + u.Limit().Describe()
	for _, line := range quotaLines(limits, []QuotaHolder{{Resources: u.Used}}, u.Ask, overOnly) {
		out = append(out, line+where)
	}
	return out
}

// LabelUses is, for each of limits, what holders hold on its nodes and what
// ask (per node) asks there; labelsOf gives each node's labels.
func LabelUses(limits []LabelLimit, holders []QuotaHolder, labelsOf map[string]map[string]string, ask map[string]topology.Resources) []LabelUse {
	out := make([]LabelUse, 0, len(limits))
	for _, l := range limits {
		u := LabelUse{Labels: l.Labels, Limits: l.Limits, Used: topology.Resources{}, Ask: topology.Resources{}}
		for node, labels := range labelsOf {
			if !l.Matches(labels) {
				continue
			}
			for _, h := range holders {
				u.Used.Add(h.Nodes[node])
			}
			u.Ask.Add(ask[node])
		}
		out = append(out, u)
	}
	return out
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
	Namespace   string             `json:"namespace"`
	Owner       string             `json:"owner"`
	Limits      map[string]float64 `json:"limits"`
	LabelLimits []LabelLimit       `json:"label_limits"`
}

// QuotaHolder is what one holder holds in a quota's namespace: a virtual
// cluster by its reservation, or a group no reservation names (Outside:
// not a virtual cluster, or one from before reservations).
type QuotaHolder struct {
	Cluster   string             `json:"cluster"` // "<namespace>/<name>"
	Owner     string             `json:"owner"`   // a prefix of its owner token
	Resources topology.Resources `json:"resources"`
	// Nodes is what it holds on each node (placed or reserved there).
	Nodes   map[string]topology.Resources `json:"nodes"`
	Outside bool                          `json:"outside"`
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
	total.Add(ask)
	for _, h := range used {
		total.Add(h.Resources)
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
		who := "owner " + record.OwnerPrefix(h.Owner) + "…"
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

// Lowers tells whether any limit of next is lower than in prev, or new,
// in all or on the nodes of a label limit.
func (next *QuotaCaps) Lowers(prev *QuotaCaps) bool {
	if lowersLimits(next.Limits, prev.Limits) {
		return true
	}
	for _, l := range next.LabelLimits {
		i := slices.IndexFunc(prev.LabelLimits, func(p LabelLimit) bool { return maps.Equal(p.Labels, l.Labels) })
		if i < 0 || lowersLimits(l.Limits, prev.LabelLimits[i].Limits) {
			return true
		}
	}
	return false
}

func lowersLimits(next, prev map[string]float64) bool {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if was, ok := prev[k]; !ok || next[k] < was {
			return true
		}
	}
	return false
}
