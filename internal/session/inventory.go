package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// What terraform query lists of a namespace: the live groups sorted into
// virtual clusters and other groups, their records, who owns each, and the
// reservations.

// The ownership classes of the list resource's `ownership` filter, and how a query reads records.
const (
	OwnedHere    = "this_state"
	OwnedOther   = "other_state"
	OwnedNone    = "no_state"
	NotACluster  = "not_a_cluster"
	ListReadDesc = "one short read job (Ray's internal KV is only reachable from a driver)"
)

// ListCandidate is a virtual cluster as the group names tell (Cluster), or
// one placement group whose name is not a cluster's.
type ListCandidate struct {
	Name    string
	Cluster bool
	Groups  []raystate.PlacementGroup
}

// ListCandidates sorts the named live groups whose name (or cluster name)
// starts with prefix into clusters and other groups, by name. Unnamed groups
// cannot be adopted or even placed in a namespace, so they are skipped.
func ListCandidates(live []raystate.PlacementGroup, prefix string) []ListCandidate {
	byName := map[string]*ListCandidate{}
	key := func(name string, cluster bool) string { return fmt.Sprintf("%t/%s", cluster, name) }
	for _, g := range live {
		if g.Name == "" {
			continue
		}
		name, cluster := clusterOfGroup(g.Name)
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		k := key(name, cluster)
		if byName[k] == nil {
			byName[k] = &ListCandidate{Name: name, Cluster: cluster}
		}
		byName[k].Groups = append(byName[k].Groups, g)
	}
	out := make([]ListCandidate, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		c := byName[k]
		slices.SortFunc(c.Groups, func(a, b raystate.PlacementGroup) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, *c)
	}
	slices.SortStableFunc(out, func(a, b ListCandidate) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// clusterOfGroup is the virtual cluster a group's name belongs to
// ("<name>-unified", "<name>-node<i>"), else the group's own name.
func clusterOfGroup(group string) (name string, cluster bool) {
	if n, ok := strings.CutSuffix(group, clusterspec.UnifiedGroupName("")); ok && n != "" {
		return n, true
	}
	if i := strings.LastIndex(group, "-node"); i > 0 && clusterspec.NamedLike(group[:i], group) {
		return group[:i], true
	}
	return group, false
}

// ReadCandidates reads the record of each candidate and which of its groups live
// in namespace ns, in one wave of read jobs (the batcher joins requests that
// arrive together), and keeps only the groups that live in ns.
func (d *Session) ReadCandidates(ctx context.Context, ns string, cands []ListCandidate) ([]ListCandidate, []*record.Manifest, error) {
	type answer struct {
		res *contract.Result
		err error
	}
	answers := make([]answer, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		names := make([]string, len(c.Groups))
		for j, g := range c.Groups {
			names[j] = g.Name
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := d.ReadRecord(ctx, ns, c.Name, names...)
			answers[i] = answer{res, err}
		}()
	}
	wg.Wait()
	var kept []ListCandidate
	var records []*record.Manifest
	for i, c := range cands {
		a := answers[i]
		if a.err != nil {
			return nil, nil, fmt.Errorf("reading the record of %q: %w", c.Name, a.err)
		}
		var here []raystate.PlacementGroup
		for _, g := range c.Groups {
			if !slices.Contains(a.res.Missing, g.Name) {
				here = append(here, g)
			}
		}
		if len(here) == 0 {
			continue // every group lives in another namespace
		}
		c.Groups = here
		rec := a.res.Record
		if !c.Cluster || (rec != nil && rec.Name != c.Name) {
			rec = nil
		}
		kept = append(kept, c)
		records = append(records, rec)
	}
	return kept, records, nil
}

// ListedReservations is what ReadReservations read, or why it could not.
type ListedReservations struct {
	Listed []contract.ListedReservation
	Err    error
}

// ReadReservations reads every reservation in one read job, started now.
func (d *Session) ReadReservations(ctx context.Context, ns string) <-chan ListedReservations {
	out := make(chan ListedReservations, 1)
	go func() {
		res, err := d.Reservations(ctx, ns)
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			out <- ListedReservations{Err: fmt.Errorf("reading the reservations: %w", err)}
			return
		}
		out <- ListedReservations{Listed: res.Reservations}
	}()
	return out
}

// GroupsIn names the groups of cands (those that live in the listed namespace).
func GroupsIn(cands []ListCandidate) map[string]bool {
	out := map[string]bool{}
	for _, c := range cands {
		for _, g := range c.Groups {
			out[g.Name] = true
		}
	}
	return out
}

// RecordsByName maps each listed cluster's name to its record (nil without).
func RecordsByName(cands []ListCandidate, records []*record.Manifest) map[string]*record.Manifest {
	out := map[string]*record.Manifest{}
	for i, c := range cands {
		if c.Cluster {
			out[c.Name] = records[i]
		}
	}
	return out
}

// ListClass is the ownership class of a candidate with record rec (nil
// without one) whose shape problem (AdoptProblem) is problem.
func ListClass(rec *record.Manifest, owners []string, problem string) string {
	switch {
	case rec == nil && problem != "":
		return NotACluster
	case rec == nil || rec.Owner == "":
		return OwnedNone
	case slices.ContainsFunc(owners, func(o string) bool { return record.OwnedBy(rec.Owner, o) }):
		return OwnedHere
	default:
		return OwnedOther
	}
}

// ListDisplayName says which cluster a result is and who owns it.
func ListDisplayName(c ListCandidate, rec *record.Manifest, class string) string {
	groups := fmt.Sprintf("%d placement group", len(c.Groups))
	if len(c.Groups) != 1 {
		groups += "s"
	}
	switch class {
	case OwnedHere:
		return fmt.Sprintf("%s (this state, owner %s…, %s)", c.Name, record.OwnerPrefix(rec.Owner), groups)
	case OwnedOther:
		return fmt.Sprintf("%s (other state, owner %s…, created %s, %s)", c.Name, record.OwnerPrefix(rec.Owner), rec.CreatedAt, groups)
	case OwnedNone:
		if rec != nil {
			return fmt.Sprintf("%s (no state: record without owner, %s)", c.Name, groups)
		}
		return fmt.Sprintf("%s (no state: no record, made outside this provider, %s)", c.Name, groups)
	}
	return c.Name
}

func UnownedReservationDetail(u placement.UnownedReservation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ray's KV holds a reservation for virtual cluster %q of Ray namespace %q (key %q, written %.0f s ago by owner %s…",
		u.Name, u.Namespace, u.Key, u.AgeSeconds, record.OwnerPrefix(u.Owner))
	if u.Exclusive {
		b.WriteString(", whole nodes")
	}
	b.WriteString("), and no state's record stands behind it: ")
	switch {
	case u.Stale():
		b.WriteString("its placement groups are gone. It holds nothing any more: the next create on this Ray cluster deletes it.\n")
	case u.LiveGroups == 0:
		fmt.Fprintf(&b, "its placement groups do not exist (yet, or any more). A create may still be making them; until then, "+
			"and for at most %d s after it was written, it holds its share of the nodes below.\n", record.ReservationStaleSeconds)
	case u.RecordOwner == "":
		fmt.Fprintf(&b, "%d of its placement groups live, but the cluster has no record (a create killed before it recorded "+
			"the cluster, or a record deleted by hand). It holds its share of the nodes below for as long as they live.\n", u.LiveGroups)
	default:
		fmt.Fprintf(&b, "%d of its placement groups live, but the cluster's record names another owner (%s…). It holds its "+
			"share of the nodes below for as long as they live.\n", u.LiveGroups, record.OwnerPrefix(u.RecordOwner))
	}
	b.WriteString("\nWhat it reserves, by node:\n")
	for _, node := range slices.Sorted(maps.Keys(u.Nodes)) {
		fmt.Fprintf(&b, "  - %s: %s\n", node, resourceText(u.Nodes[node]))
	}
	if len(u.Nodes) == 0 {
		b.WriteString("  - nothing yet (a cluster Ray places reserves once its groups are placed)\n")
	}
	if !u.Stale() {
		fmt.Fprintf(&b, "\nTo release it, import the cluster into a state and destroy it: the import takes the reservation over "+
			"and the destroy releases it with the groups (terraform import 'ray_virtual_cluster.<label>' '%s/%s'). Or remove "+
			"its placement groups with ray.util.remove_placement_group: %d s after they are gone the next create deletes it.",
			u.Namespace, u.Name, record.ReservationStaleSeconds)
	}
	fmt.Fprintf(&b, "\nTo delete only the reservation, by hand (its groups, if any live, are then counted as groups no "+
		"reservation names): python -c 'import ray; from ray.experimental import internal_kv; ray.init(); "+
		"internal_kv._internal_kv_del(\"%s\", namespace=\"%s\")'", u.Key, record.KVNamespace)
	return b.String()
}
