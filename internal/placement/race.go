package placement

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// QueuePollInterval is how long a cluster that queues for nodes
// (capacity_check = "total") waits before it chooses again.
const QueuePollInterval = 2 * time.Second

// SummaryNodesTaken is the issue of a create that lost the race for its
// nodes and found no others.
const SummaryNodesTaken = "Other clusters took the nodes"

// Env is what placing a cluster needs of the provider process.
type Env struct {
	// Run runs one driver request as a Ray job.
	Run func(ctx context.Context, req contract.Request) (*contract.Result, error)
	// Snapshot reads nodes and groups afresh (other clusters just placed).
	Snapshot func(ctx context.Context) (*planning.Snapshot, error)
	// Choose serializes this process's node choices: choose gets the groups
	// of the clusters this process chose nodes for and returns its own
	// (nil when it chose none). Forget drops a cluster's choice.
	Choose func(key string, choose func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest)
	Forget func(key string)
	// Version is the provider's version, written into the record.
	Version string
}

// SnapshotError is a failed read of the live cluster while placing.
type SnapshotError struct{ Err error }

func (e *SnapshotError) Error() string { return e.Err.Error() }
func (e *SnapshotError) Unwrap() error { return e.Err }

// Place chooses the cluster's nodes (select_nodes, around exclude) and
// creates its groups for the state with owner token owner. The choice
// becomes final in the driver, which reserves what the bundles ask of each
// chosen node in Ray's KV before it creates a group: a cluster that does
// not fit beside the other reservations learns the holders of the nodes
// that refused it and every pending reservation, chooses again counting
// them and tries again; when none fits, capacity_check = "total" queues
// (chooses again as holders' groups go) until ready_timeout, other modes
// fail at once naming the holders.
//
// Problems of choice and of the live check come back as issues (nothing
// was created); a failed read of the cluster as a *SnapshotError; the
// driver's own error with its result. spec.SelectedNodeIDs holds the
// choice made.
func Place(ctx context.Context, env Env, spec *clusterspec.Spec, snap *planning.Snapshot, owner string,
	exclude map[string]bool) (*contract.Result, []clusterspec.Issue, error) {
	p := &race{env: env, spec: spec, owner: owner, exclude: exclude, key: spec.Namespace + "/" + spec.Name,
		claimed: map[string][]contract.NodeHolder{}, queueUntil: time.Now().Add(spec.ReadyTimeout)}
	return p.run(ctx, snap)
}

// race is one Place call.
type race struct {
	env        Env
	spec       *clusterspec.Spec
	owner, key string
	exclude    map[string]bool
	claimed    map[string][]contract.NodeHolder // nodes that could not hold the cluster, with their holders, as the driver reported them
	pending    []contract.NodeHolder            // other clusters' pending reservation shares, as the driver last reported them
	queueUntil time.Time
	collided   time.Time
	// alternatives are the other choices the driver may fall back on, in
	// order (select_nodes; see selectNodes).
	alternatives []planning.Choice
}

// MaxAlternativeNodes and MaxAlternativeBundles bound the clusters whose
// create carries alternatives: each repeats the groups in the driver's
// entrypoint, whose size is bounded, and a small cluster is the one that
// races others for the same first nodes.
const (
	MaxAlternativeNodes   = 16
	MaxAlternativeBundles = 128
)

// alternativesApart keeps the alternatives that still fit beside the
// clusters this process chose nodes for (a sibling that chose after this
// cluster may have chosen an alternative's nodes) and returns them as
// attempt on each one's nodes.
func (p *race) alternativesApart(snap *planning.Snapshot, attempt clusterspec.Spec) []clusterspec.Spec {
	if len(p.alternatives) == 0 {
		return nil
	}
	var out []clusterspec.Spec
	p.env.Choose(p.key, func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		kept := p.alternatives[:0]
		out = nil
		for _, c := range p.alternatives {
			alt := attempt
			alt.SelectedNodeIDs, alt.SelectedNodeDomains = c.IDs, c.Domains
			if shortage, _ := planning.CheckSnapshotCapacity(alt, snap, others); len(shortage.Errors) == 0 {
				kept, out = append(kept, c), append(out, alt)
			}
		}
		p.alternatives = kept
		return planning.TakenGroups(*p.spec)
	})
	return out
}

// tookAlternative makes the alternative the driver took (its first choice
// was reserved first) the cluster's choice, for this process's next
// choices too; the result says so whether the create then succeeded or not.
func (p *race) tookAlternative(res *contract.Result) {
	if res == nil || res.Alternative < 1 || res.Alternative > len(p.alternatives) {
		return
	}
	c := p.alternatives[res.Alternative-1]
	p.spec.SelectedNodeIDs, p.spec.SelectedNodeDomains = c.IDs, c.Domains
	p.env.Choose(p.key, func([]clusterspec.GroupRequest) []clusterspec.GroupRequest { return planning.TakenGroups(*p.spec) })
}

func (p *race) run(ctx context.Context, snap *planning.Snapshot) (*contract.Result, []clusterspec.Issue, error) {
	spec := p.spec
	for {
		if spec.SelectNodes {
			next, issues, err := p.choose(ctx, snap)
			if next == nil || err != nil {
				return nil, issues, err
			}
			snap = next
		}
		if issues := CheckLive(*spec, snap, nil); clusterspec.HasError(issues) {
			p.env.Forget(p.key)
			return nil, issues, nil
		}
		attempt := *spec
		if !p.collided.IsZero() { // the queue and the wait share ready_timeout
			attempt.ReadyTimeout = max(time.Until(p.queueUntil), time.Second)
		}
		res, err := p.env.Run(ctx, CreateRequest(attempt, p.owner, p.env.Version).WithAlternatives(p.alternativesApart(snap, attempt), p.owner, p.env.Version))
		p.tookAlternative(res) // a create that failed after it took one is explained there
		holders, pending := nodesClaimed(res, err)
		if holders == nil {
			return res, nil, err
		}
		p.env.Forget(p.key)
		if p.collided.IsZero() {
			p.collided = time.Now()
		}
		// Each refusal's holders replace what an earlier one said of those
		// nodes: the driver read them just now.
		refused := map[string][]contract.NodeHolder{}
		for _, h := range holders {
			refused[h.NodeID] = append(refused[h.NodeID], h)
		}
		maps.Copy(p.claimed, refused)
		p.pending = pending
		if !time.Now().Before(p.queueUntil) { // the driver kept refusing: bounded by ready_timeout
			return nil, []clusterspec.Issue{p.lostRace(nil)}, nil
		}
		tflog.Info(ctx, "lost the race for nodes: choosing again", map[string]any{"cluster": p.key, "holders": contract.DescribeHolders(holders)})
		if snap, err = p.env.Snapshot(ctx); err != nil {
			return nil, nil, &SnapshotError{Err: err}
		}
	}
}

// choose chooses the nodes around every refusal learnt so far. It returns
// the snapshot to go on with; nil with the issues when no choice fits and
// the cluster does not queue.
func (p *race) choose(ctx context.Context, snap *planning.Snapshot) (*planning.Snapshot, []clusterspec.Issue, error) {
	spec := p.spec
	for {
		spec.SelectedNodeIDs, spec.SelectedNodeDomains = nil, nil
		snap.Claims, snap.Reserved = claimDescriptions(p.claimed), pendingShares(p.pending, snap)
		choice := p.selectNodes(snap)
		if !clusterspec.HasError(choice) {
			return snap, nil, nil
		}
		if len(p.claimed) == 0 {
			return nil, choice, nil
		}
		if spec.CapacityMode() != clusterspec.CapacityTotal || !time.Now().Add(QueuePollInterval).Before(p.queueUntil) {
			tflog.Info(ctx, "no nodes left after a lost race", map[string]any{"cluster": p.key,
				"seconds_since_collision": time.Since(p.collided).Seconds()})
			return nil, []clusterspec.Issue{p.lostRace(choice)}, nil
		}
		tflog.Info(ctx, "queueing for nodes other clusters hold", map[string]any{"cluster": p.key, "holders": len(p.claimed)})
		var err error
		if snap, err = p.waitAndSnapshot(ctx); snap == nil {
			return nil, queueTimedOut(ctx), err
		}
		p.forgetGone(snap) // a holder whose groups are gone has left
	}
}

// selectNodes chooses among the nodes free in snap, the clusters this
// process is choosing for counted as taken; after a lost race, apart from
// the others that lost it (one of planning.DisjointChoices at random),
// whatever the cluster's size. For a cluster small enough to carry them,
// the other disjoint choices, in random order, become the alternatives the
// driver falls back on when another cluster reserves the chosen nodes
// first: racing creates then spread over them in one run each.
func (p *race) selectNodes(snap *planning.Snapshot) []clusterspec.Issue {
	spec := p.spec
	var issues []clusterspec.Issue
	p.alternatives = nil
	p.env.Choose(p.key, func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		ids, domains, found := planning.ChooseFreeNodes(*spec, snap, p.exclude, others)
		if issues = found; clusterspec.HasError(found) {
			return nil
		}
		carries := len(spec.BundleCtPerNode) <= MaxAlternativeNodes && spec.WorldSize() <= MaxAlternativeBundles
		choices := []planning.Choice{{IDs: ids, Domains: domains}}
		if carries || !p.collided.IsZero() {
			choices = planning.DisjointChoices(*spec, snap, p.exclude, others, ids, domains)
		}
		first := 0
		if !p.collided.IsZero() {
			first = rand.IntN(len(choices)) //nolint:gosec // spreading retries, not security
		}
		c := choices[first]
		if carries {
			p.alternatives = slices.Delete(slices.Clone(choices), first, first+1)
			rand.Shuffle(len(p.alternatives), func(i, j int) { p.alternatives[i], p.alternatives[j] = p.alternatives[j], p.alternatives[i] })
		}
		spec.SelectedNodeIDs, spec.SelectedNodeDomains = c.IDs, c.Domains
		return planning.TakenGroups(*spec)
	})
	return issues
}

// waitAndSnapshot waits QueuePollInterval, then reads the cluster again;
// nil when ctx ended first (no error) or the read failed.
func (p *race) waitAndSnapshot(ctx context.Context) (*planning.Snapshot, error) {
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(QueuePollInterval):
	}
	snap, err := p.env.Snapshot(ctx)
	if err != nil {
		return nil, &SnapshotError{Err: err}
	}
	return snap, nil
}

// queueTimedOut is the issue of a queue that ran out of time; none when
// the read failed instead (that error says so).
func queueTimedOut(ctx context.Context) []clusterspec.Issue {
	if ctx.Err() == nil {
		return nil
	}
	return []clusterspec.Issue{{Summary: "Cannot create the virtual cluster", Detail: "Timed out while queueing for nodes: " +
		ctx.Err().Error() + ". Other clusters still hold the nodes: wait for them, add nodes, or raise timeouts.create and " +
		"ready_timeout, then apply again."}}
}

// nodesClaimed returns the holders of the nodes that could not hold the
// cluster and every pending reservation's share when the create failed for
// other clusters' reservations; nil holders otherwise.
func nodesClaimed(res *contract.Result, err error) (holders, pending []contract.NodeHolder) {
	if err == nil || res == nil || res.Error == nil || res.Error.Code != contract.CodeNodesClaimed {
		return nil, nil
	}
	f := res.Error.Facts
	if f.Holders == nil {
		f.Holders = []contract.NodeHolder{}
	}
	return f.Holders, f.Claimed
}

// forgetGone makes a node choosable again once any of its holders' groups
// are all gone (destroyed, or a pending reservation's create that failed):
// the driver refuses it again if it still cannot hold the cluster.
func (p *race) forgetGone(snap *planning.Snapshot) {
	live := map[string]bool{}
	for _, g := range snap.Groups {
		live[g.Name] = true
	}
	for id, hs := range p.claimed {
		if slices.ContainsFunc(hs, func(h contract.NodeHolder) bool {
			return len(h.Groups) > 0 && !slices.ContainsFunc(h.Groups, func(name string) bool { return live[name] })
		}) {
			delete(p.claimed, id)
		}
	}
}

// pendingShares sums what pending reservations hold on each node, leaving
// out those whose groups snap lists as placed: Ray's free resources, which
// node choice starts from, count them already.
func pendingShares(pending []contract.NodeHolder, snap *planning.Snapshot) map[string]topology.Resources {
	placed := map[string]bool{}
	for _, g := range snap.Groups {
		if g.State == raystate.PlacementGroupStateCreated {
			placed[g.Name] = true
		}
	}
	out := map[string]topology.Resources{}
	for _, h := range pending {
		if !h.Pending || len(h.Groups) > 0 && !slices.ContainsFunc(h.Groups, func(name string) bool { return !placed[name] }) {
			continue
		}
		if out[h.NodeID] == nil {
			out[h.NodeID] = topology.Resources{}
		}
		for k, v := range h.Resources {
			out[h.NodeID][k] += v
		}
	}
	return out
}

// claimDescriptions names each refused node's holders for node choice.
func claimDescriptions(claimed map[string][]contract.NodeHolder) map[string]string {
	out := make(map[string]string, len(claimed))
	for id, hs := range claimed {
		var who []string
		for _, h := range hs {
			if h.Cluster != "" {
				who = append(who, fmt.Sprintf("cluster %q", h.Cluster))
			} else {
				who = append(who, "placement group(s) "+strings.Join(h.Groups, ", "))
			}
		}
		out[id] = strings.Join(slices.Compact(who), ", ")
	}
	return out
}

// lostRace is the issue of a create that lost the race for its nodes and
// has no time or choice left; choice says why no other nodes fit.
func (p *race) lostRace(choice []clusterspec.Issue) clusterspec.Issue {
	is := clusterspec.Issue{Summary: SummaryNodesTaken, Detail: lostRaceDetail(*p.spec, p.claimed, choice)}
	if p.spec.SelectNodes {
		is.Path = clusterspec.AttrSelectNodes
	}
	return is
}

// lostRaceDetail explains a cluster that lost the race for its nodes and
// finds no other that fit: who holds them, why nothing else fits, and what
// to do.
func lostRaceDetail(spec clusterspec.Spec, claimed map[string][]contract.NodeHolder, choice []clusterspec.Issue) string {
	holders := make([]contract.NodeHolder, 0, len(claimed))
	for _, id := range slices.Sorted(maps.Keys(claimed)) {
		for _, h := range claimed[id] {
			if h.Cluster != "" || len(h.Groups) > 0 { // an unreadable reservation names nothing
				holders = append(holders, h)
			}
		}
	}
	// A choice's detail may end with the next step (planning.ChooseFreeNodes),
	// which this message says once, last.
	step := planning.ShortageNextStep(spec)
	var why []string
	for _, is := range choice {
		if !is.Warning {
			why = append(why, strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(is.Detail), step)))
		}
	}
	var b strings.Builder
	if spec.SelectNodes {
		fmt.Fprintf(&b, "The nodes this apply chose for %q cannot hold it beside what other clusters reserved there: %s.",
			spec.Name, contract.DescribeHolders(holders))
	} else if slices.ContainsFunc(holders, func(h contract.NodeHolder) bool { return !h.Pending }) {
		// Only a node reserved whole refuses a cluster Ray already placed.
		fmt.Fprintf(&b, "Ray kept placing %q on nodes other clusters reserve whole (exclusive_nodes): %s.",
			spec.Name, contract.DescribeHolders(holders))
	} else {
		fmt.Fprintf(&b, "Other clusters' reservations stayed pending (their groups not yet placed) while %q waited to be placed by Ray: %s.",
			spec.Name, contract.DescribeHolders(holders))
	}
	if len(why) > 0 {
		fmt.Fprintf(&b, "\n\nThe nodes left cannot hold it: %s", strings.Join(why, "\n"))
	}
	if spec.CapacityMode() == clusterspec.CapacityTotal {
		fmt.Fprintf(&b, "\n\nIt queued for those nodes until ready_timeout (%s) ran out.", spec.ReadyTimeout)
	}
	fmt.Fprintf(&b, "\n\nNothing of %q was created. %s", spec.Name, step)
	return b.String()
}

// IsSnapshotError reports whether err is a failed read of the cluster.
func IsSnapshotError(err error) (*SnapshotError, bool) {
	var se *SnapshotError
	return se, errors.As(err, &se)
}
