package placement

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// fakeDriver answers create requests: the nodes in taken cannot hold the
// cluster beside another cluster's reservation (nodes_claimed with its
// holder, and pending's shares), anything else succeeds.
type fakeDriver struct {
	taken    map[string]bool
	pending  []contract.NodeHolder
	requests []contract.Request
	// refuseAll refuses every create, as the driver refuses a cluster Ray
	// places while other reservations stay pending; whole refuses it as
	// placed on a node another cluster reserves whole.
	refuseAll, whole bool
	// takesAlternatives falls back on the request's alternatives as the
	// driver does: the first whose nodes are free.
	takesAlternatives bool
}

func (f *fakeDriver) anyTaken(nodes map[string]topology.Resources) bool {
	for id := range nodes {
		if f.taken[id] {
			return true
		}
	}
	return false
}

func (f *fakeDriver) run(_ context.Context, req contract.Request) (*contract.Result, error) {
	f.requests = append(f.requests, req)
	var holders []contract.NodeHolder
	for id := range req.Ownership.Reservation.Nodes {
		if f.taken[id] {
			holders = append(holders, contract.NodeHolder{NodeID: id, Cluster: "ns/other", Owner: "owner-of-other", Groups: []string{"other-node0"}})
		}
	}
	if f.refuseAll {
		holders = append(holders, contract.NodeHolder{NodeID: "n1", Cluster: "ns/other", Owner: "owner-of-other", Groups: []string{"other-node0"}, Pending: !f.whole})
	}
	if len(holders) == 0 {
		return &contract.Result{OK: true, Action: req.Action}, nil
	}
	for i, alt := range req.Alternatives {
		if f.takesAlternatives && !f.refuseAll && !f.anyTaken(alt.Nodes) {
			return &contract.Result{OK: true, Action: req.Action, Alternative: i + 1}, nil
		}
	}
	res := &contract.Result{Action: req.Action, Error: &contract.ResultError{Kind: contract.KindConflict, Code: contract.CodeNodesClaimed,
		Facts: contract.ErrorFacts{Holders: holders, Claimed: f.pending}}}
	return res, res.Err()
}

func fakeEnv(f *fakeDriver, snap *planning.Snapshot) Env {
	return Env{
		Run:      f.run,
		Snapshot: func(context.Context) (*planning.Snapshot, error) { return snap, nil },
		Choose: func(_ string, choose func([]clusterspec.GroupRequest) []clusterspec.GroupRequest) {
			choose(nil)
		},
		Forget:  func(string) {},
		Version: "test",
	}
}

// A select_nodes create whose first choice another cluster claimed first
// chooses again around that claim and succeeds on other nodes; every
// request carries the owner's ownership and record template.
func TestPlaceChoosesAgainAfterLostRace(t *testing.T) {
	spec := clusterspectest.SelectingSpec(1)
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	f := &fakeDriver{taken: map[string]bool{}}
	// The first choice, found without the driver: then make it taken.
	first := spec
	if _, issues, err := Place(context.Background(), fakeEnv(&fakeDriver{taken: map[string]bool{}}, snap), &first, snap, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place on a free cluster: %v %v", issues, err)
	}
	f.taken[first.SelectedNodeIDs[0]] = true

	res, issues, err := Place(context.Background(), fakeEnv(f, snap), &spec, snap, "owner-a", nil)
	if err != nil || len(issues) > 0 || res == nil || !res.OK {
		t.Fatalf("place after a lost race: %+v %v %v", res, issues, err)
	}
	if len(f.requests) != 2 || slices.Contains(spec.SelectedNodeIDs, first.SelectedNodeIDs[0]) {
		t.Errorf("did not choose again around the claim: %d requests, chose %v (taken %v)", len(f.requests), spec.SelectedNodeIDs, first.SelectedNodeIDs)
	}
	for _, req := range f.requests {
		if o := req.Ownership; o == nil || o.Owner != record.OwnerDigest("owner-a") || o.Manifest == nil || o.Reservation == nil || len(o.Reservation.Nodes) != 1 {
			t.Errorf("create request without ownership, record or reservation: %+v", o)
		}
	}
}

// A select_nodes create carries the other disjoint choices as
// alternatives; when its first choice was claimed first, the driver's
// alternative becomes its choice in the same run: no second request.
func TestPlaceTakesAnAlternativeInOneRun(t *testing.T) {
	spec := clusterspectest.SelectingSpec(1)
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	first := spec
	if _, issues, err := Place(context.Background(), fakeEnv(&fakeDriver{taken: map[string]bool{}}, snap), &first, snap, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place on a free cluster: %v %v", issues, err)
	}
	f := &fakeDriver{taken: map[string]bool{first.SelectedNodeIDs[0]: true}, takesAlternatives: true}
	res, issues, err := Place(context.Background(), fakeEnv(f, snap), &spec, snap, "owner-a", nil)
	if err != nil || len(issues) > 0 || res == nil || !res.OK {
		t.Fatalf("place after a lost race: %+v %v %v", res, issues, err)
	}
	if len(f.requests) != 1 || len(f.requests[0].Alternatives) == 0 {
		t.Fatalf("%d requests; want one carrying alternatives", len(f.requests))
	}
	alt := f.requests[0].Alternatives[res.Alternative-1]
	if slices.Contains(spec.SelectedNodeIDs, first.SelectedNodeIDs[0]) || !slices.Equal(spec.SelectedNodeIDs, alt.Manifest.SelectedNodeIDs) {
		t.Errorf("chose %v; want the alternative taken, %v", spec.SelectedNodeIDs, alt.Manifest.SelectedNodeIDs)
	}
	for _, a := range f.requests[0].Alternatives {
		if slices.ContainsFunc(a.Manifest.SelectedNodeIDs, func(id string) bool { return slices.Contains(first.SelectedNodeIDs, id) }) {
			t.Errorf("alternative %v shares a node with the first choice %v", a.Manifest.SelectedNodeIDs, first.SelectedNodeIDs)
		}
	}
	if err := f.requests[0].Validate(); err != nil {
		t.Errorf("the request with alternatives: %v", err)
	}
}

// A sibling this process chose nodes for after the cluster chose its own
// (before its request went out) keeps its nodes: the alternatives on them
// are left out of the request.
func TestPlaceLeavesSiblingsNodesOutOfItsAlternatives(t *testing.T) {
	spec := clusterspectest.SelectingSpec(1)
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	f := &fakeDriver{taken: map[string]bool{}}
	env := fakeEnv(f, snap)
	calls := 0
	env.Choose = func(_ string, choose func([]clusterspec.GroupRequest) []clusterspec.GroupRequest) {
		calls++
		if calls == 1 { // the cluster's own choice, before any sibling
			choose(nil)
			return
		}
		// Siblings chose since: one whole node each, every node but this cluster's.
		var others []clusterspec.GroupRequest
		for _, n := range snap.Nodes {
			if n.NodeID != spec.SelectedNodeIDs[0] {
				sibling := clusterspectest.SelectingSpec(4)
				sibling.Name, sibling.BundleCtPerNode, sibling.SelectedNodeIDs = "sib-"+n.NodeID, []int{4}, []string{n.NodeID}
				others = append(others, planning.TakenGroups(sibling)...)
			}
		}
		choose(others)
	}
	if _, issues, err := Place(context.Background(), env, &spec, snap, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place: %v %v", issues, err)
	}
	if len(f.requests) != 1 || len(f.requests[0].Alternatives) != 0 {
		t.Errorf("the request carries %d alternatives on siblings' nodes; want none", len(f.requests[0].Alternatives))
	}
}

// When every node that fits is claimed, a free-mode create fails at once
// with an issue on select_nodes that names the holder by owner prefix only.
func TestPlaceFailsNamingHolders(t *testing.T) {
	spec := clusterspectest.SelectingSpec(1)
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	f := &fakeDriver{taken: map[string]bool{}}
	for _, n := range snap.Nodes {
		f.taken[n.NodeID] = true
	}
	_, issues, err := Place(context.Background(), fakeEnv(f, snap), &spec, snap, "owner-a", nil)
	if err != nil || len(issues) != 1 || issues[0].Summary != SummaryNodesTaken || issues[0].Path != clusterspec.AttrSelectNodes {
		t.Fatalf("got %+v, %v; want one %q issue", issues, err, SummaryNodesTaken)
	}
	if d := issues[0].Detail; !strings.Contains(d, `cluster "other"`) || strings.Contains(d, "owner-of-other") {
		t.Errorf("detail does not name the holder, or shows its whole owner_id:\n%s", d)
	}
}

// A lost race also reports other clusters' pending reservations: the next
// choice counts their GPUs as taken, so it avoids a node whose GPUs a
// pending reservation holds even though that node did not refuse it.
func TestPlaceCountsPendingReservations(t *testing.T) {
	spec := clusterspectest.SelectingSpec(4)
	snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
	first := spec
	if _, issues, err := Place(context.Background(), fakeEnv(&fakeDriver{}, snap), &first, snap, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place on a free cluster: %v %v", issues, err)
	}
	second := first
	second.SelectedNodeIDs = nil
	snap2 := &planning.Snapshot{Nodes: slices.DeleteFunc(clusterspectest.Nodes(), func(n raystate.Node) bool { return n.NodeID == first.SelectedNodeIDs[0] })}
	if _, issues, err := Place(context.Background(), fakeEnv(&fakeDriver{}, snap2), &second, snap2, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place without the first node: %v %v", issues, err)
	}
	f := &fakeDriver{taken: map[string]bool{first.SelectedNodeIDs[0]: true}, pending: []contract.NodeHolder{{NodeID: second.SelectedNodeIDs[0],
		Cluster: "ns/other", Groups: []string{"other-node0"}, Resources: map[string]float64{"GPU": 4}, Pending: true}}}
	if _, issues, err := Place(context.Background(), fakeEnv(f, snap), &spec, snap, "owner-a", nil); err != nil || len(issues) > 0 {
		t.Fatalf("place after a lost race: %v %v", issues, err)
	}
	if got := spec.SelectedNodeIDs[0]; got == first.SelectedNodeIDs[0] || got == second.SelectedNodeIDs[0] {
		t.Errorf("chose %s: the refused node is %s, the pending reservation's %s", got, first.SelectedNodeIDs[0], second.SelectedNodeIDs[0])
	}
}

// A create the driver keeps refusing past ready_timeout fails with the same
// issue as one with no nodes left, naming the holders: on select_nodes when
// it chose nodes, on the resource for a cluster Ray places.
func TestPlaceOutOfTimeFailsNamingHolders(t *testing.T) {
	selecting := clusterspectest.SelectingSpec(1)
	selecting.ReadyTimeout = time.Nanosecond
	plain := clusterspectest.ValidSpec()
	plain.ReadyTimeout = time.Nanosecond
	for _, c := range []struct {
		spec     clusterspec.Spec
		path     string
		sentence string
		whole    bool
	}{
		{selecting, clusterspec.AttrSelectNodes, "cannot hold it beside what other clusters reserved there", false},
		{plain, "", "Other clusters' reservations stayed pending", false},
		{plain, "", "on nodes other clusters reserve whole (exclusive_nodes)", true},
	} {
		snap := &planning.Snapshot{Nodes: clusterspectest.Nodes()}
		f := &fakeDriver{taken: map[string]bool{}, refuseAll: true, whole: c.whole}
		res, issues, err := Place(context.Background(), fakeEnv(f, snap), &c.spec, snap, "owner-a", nil)
		if err != nil || res != nil || len(issues) != 1 || issues[0].Summary != SummaryNodesTaken || issues[0].Path != c.path {
			t.Fatalf("select_nodes %t: got %+v, %+v, %v; want one %q issue on %q", c.spec.SelectNodes, res, issues, err, SummaryNodesTaken, c.path)
		}
		if d := issues[0].Detail; !strings.Contains(d, c.sentence) || !strings.Contains(d, `cluster "other"`) || strings.Contains(d, "owner-of-other") {
			t.Errorf("select_nodes %t: detail lacks %q or the holder, or shows its whole owner_id:\n%s", c.spec.SelectNodes, c.sentence, d)
		}
	}
}
