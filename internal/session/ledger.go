package session

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The per-process ledger of what the clusters planned or created so far
// claim: names, ports, capacity and chosen nodes, so that clusters planned
// beside each other are checked against each other.

// nameClaim is one cluster's claim on a name in this provider process.
type nameClaim struct {
	identity  string // owner token; "" for a cluster not created yet
	replacing bool   // its create half (planned with no prior state) is still to come
	planned   bool   // planned in this run, not only refreshed
	replaced  bool   // taken up by the create half of a forced replacement
	shape     string // shapeKey of what it declares
}

// ClaimName records that a cluster of this configuration plans spec's name
// in its namespace and reports whether another cluster did so first.
// identity is the cluster's owner token ("" when it is not created yet) so
// that a re-plan of the same cluster is no clash. A replacement's create
// half (planned again without prior state) takes up the claim of its first
// half; so does the create half of a forced replacement (`terraform taint`,
// `-replace`), which Terraform plans without telling the provider: it takes
// up the claim of a cluster this state holds that declares the same shape.
// A same-shaped duplicate passes here, and the apply refuses it (the groups
// are another cluster's).
func (d *Session) ClaimName(spec clusterspec.Spec, identity string, replacing bool) (clash bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key, shape := spec.Namespace+"/"+spec.Name, shapeKey(spec)
	claims := d.names[key]
	planned := func(c nameClaim) bool { return c.planned }
	if identity == "" {
		if i := slices.IndexFunc(claims, func(c nameClaim) bool { return c.replacing }); i >= 0 {
			claims[i].replacing, claims[i].replaced = false, true
			return false
		}
		if i := slices.IndexFunc(claims, func(c nameClaim) bool { return c.identity != "" && !c.replaced && c.shape == shape }); i >= 0 {
			claims[i].replaced, claims[i].planned = true, true
			return false
		}
		d.addClaim(key, nameClaim{planned: true, shape: shape})
		return slices.ContainsFunc(claims, planned)
	}
	i := slices.IndexFunc(claims, func(c nameClaim) bool { return c.identity == identity })
	if i < 0 {
		d.addClaim(key, nameClaim{identity: identity, replacing: replacing, planned: true, shape: shape})
		return slices.ContainsFunc(claims, planned)
	}
	first := !claims[i].planned
	claims[i].replacing, claims[i].planned, claims[i].shape = replacing, true, shape
	return first && slices.ContainsFunc(slices.Delete(slices.Clone(claims), i, i+1), planned)
}

// NoteRefreshed records a cluster this state holds, read by a refresh: a
// tainted cluster is planned only as its create half, which then takes up
// this claim rather than clash with it.
func (d *Session) NoteRefreshed(spec clusterspec.Spec, identity string) {
	if identity == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := spec.Namespace + "/" + spec.Name
	if !slices.ContainsFunc(d.names[key], func(c nameClaim) bool { return c.identity == identity }) {
		d.addClaim(key, nameClaim{identity: identity, shape: shapeKey(spec)})
	}
}

func (d *Session) addClaim(key string, c nameClaim) {
	if d.names == nil {
		d.names = map[string][]nameClaim{}
	}
	d.names[key] = append(d.names[key], c)
}

// shapeKey is what a cluster declares of its groups, to tell a forced
// replacement's create half from another cluster of the same name.
func shapeKey(spec clusterspec.Spec) string {
	spec = spec.WithDefaults()
	return fmt.Sprint(spec.BundleCtPerNode, spec.UseGPUs, spec.NumGPUsPerNode, spec.UseUnifiedPG, spec.Strategy, spec.Ports.Low, spec.Ports.High)
}

// PlannedHere reports whether the cluster name in namespace is one this run
// plans to replace, or (owner not "") one whose state holds the token of
// the record's owner: the create half of a replacement finds the old cluster's groups
// in Ray, and they are its own.
func (d *Session) PlannedHere(namespace, name, owner string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.ContainsFunc(d.names[namespace+"/"+name], func(c nameClaim) bool {
		return c.replacing || record.OwnedBy(owner, c.identity)
	})
}

// choices is what the clusters of one phase (plan or apply) of this process
// took, by key, chosen one cluster at a time.
type choices struct {
	mu    sync.Mutex
	taken map[string][]clusterspec.GroupRequest
}

// choose runs pick with the groups the other keys took (sorted by key) and
// records what it returns under key; nil records nothing, and with
// dropOnNil also drops what key took before.
func (c *choices) choose(key string, dropOnNil bool, pick func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var others []clusterspec.GroupRequest
	for _, k := range slices.Sorted(maps.Keys(c.taken)) {
		if k != key {
			others = append(others, c.taken[k]...)
		}
	}
	groups := pick(others)
	switch {
	case groups != nil:
		if c.taken == nil {
			c.taken = map[string][]clusterspec.GroupRequest{}
		}
		c.taken[key] = groups
	case dropOnNil:
		delete(c.taken, key)
	}
}

// forget drops what key took.
func (c *choices) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.taken, key)
}

// PlanChoose is ChooseNodes for plans: pick runs, one cluster at a time,
// with the groups of the clusters planned before it in this run (sorted by
// key), and what it returns is recorded under key for those planned after
// it (nil: its choice failed, and it takes nothing). Siblings that select
// nodes thus choose in turn, each around what the ones before it take, as
// the apply's ChooseNodes has them do.
func (d *Session) PlanChoose(key string, pick func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest) {
	d.planned.choose(key, true, pick)
}

// ChooseNodes runs choose, which picks a cluster's nodes at apply, with the
// pinned groups of the other clusters this process chose nodes for (their
// groups may not be in Ray's list yet), one cluster at a time, and records
// the groups it returns under key (nil records nothing). Two clusters
// created in parallel thus never pick the same free nodes.
func (d *Session) ChooseNodes(key string, choose func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest) {
	d.chosen.choose(key, false, choose)
}

// ForgetChosen drops what ChooseNodes recorded for key (its create failed).
func (d *Session) ForgetChosen(key string) { d.chosen.forget(key) }

// portClaim is one cluster's probed port range and the nodes its bundles
// may use: nil when it is not pinned to known nodes (any node).
type portClaim struct {
	ports topology.PortRange
	nodes []string
}

// maxNamedNodes is how many shared nodes a port-overlap warning names.
const maxNamedNodes = 3

// ClaimPorts records a cluster's port range and the nodes its bundles may
// use (nil: any node) and returns the clusters planned earlier in this run
// whose ranges overlap it on a node both may use, naming that node. Ports
// are only unique per node, so clusters pinned to disjoint nodes never clash.
func (d *Session) ClaimPorts(name string, r topology.PortRange, nodes []string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ports == nil {
		d.ports = map[string]portClaim{}
	}
	var clash []string
	for other, o := range d.ports {
		if other == name || !o.ports.Overlaps(r) {
			continue
		}
		shared, anyNode := sharedNodes(nodes, o.nodes)
		switch {
		case anyNode:
			clash = append(clash, fmt.Sprintf("%s %s on any node", other, o.ports))
		case len(shared) > 0:
			where := "node " + strings.Join(shared[:min(len(shared), maxNamedNodes)], ", node ")
			if len(shared) > maxNamedNodes {
				where += fmt.Sprintf(" and %d more", len(shared)-maxNamedNodes)
			}
			clash = append(clash, fmt.Sprintf("%s %s on %s", other, o.ports, where))
		}
	}
	sort.Strings(clash)
	d.ports[name] = portClaim{ports: r, nodes: nodes}
	return clash
}

// sharedNodes is the sorted nodes two clusters may both use (nil standing
// for any node); anyNode is true when neither is pinned to known nodes.
func sharedNodes(a, b []string) (shared []string, anyNode bool) {
	switch {
	case a == nil && b == nil:
		return nil, true
	case a == nil:
		shared = slices.Clone(b)
	case b == nil:
		shared = slices.Clone(a)
	default:
		for _, id := range a {
			if slices.Contains(b, id) {
				shared = append(shared, id)
			}
		}
	}
	slices.Sort(shared)
	return slices.Compact(shared), false
}

// CapacityCheckOf is a cluster's capacity_check: its own when set, else the
// provider's, else clusterspec.DefaultCapacityCheck.
func (d *Session) CapacityCheckOf(own string) string {
	return cmp.Or(own, d.CapacityCheck, clusterspec.DefaultCapacityCheck)
}
