package resources_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// Acceptance tests of sharing that must hold whatever else runs: two states
// declaring one name, and groups of the same name in other Ray namespaces.
// Ray's KV is read with plain ray, never through the provider's driver.

// Two states declare the same cluster (Ray places it) and apply at the same
// moment: one wins, and its reservation and record are intact and name the
// same owner and groups, also after the other state's destroy.
func TestAccReservations_sameNameRace(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("samename")
	config := twoGPUCluster("t", name, func(*acctest.VirtualCluster) {}).String()
	dirs := []*acctest.WorkDir{acctest.NewWorkDirDestroyed(t, config), acctest.NewWorkDirDestroyed(t, config)}
	results := applyAtOnce(t, dirs, []string{"first", "second"})
	var won, lost []applyResult
	for _, r := range results {
		if r.err == nil {
			won = append(won, r)
		} else {
			lost = append(lost, r)
		}
	}
	if len(won) != 1 {
		t.Fatalf("two states applied the same name at once: %d succeeded; want 1\nfirst:\n%s\nsecond:\n%s",
			len(won), results[0].out, results[1].out)
	}
	checkWinnerWhole(t, name, won[0].dir)
	if _, err := lost[0].dir.Run("destroy", "-auto-approve"); err != nil {
		t.Errorf("the losing state's destroy failed")
	}
	checkWinnerWhole(t, name, won[0].dir)
}

// checkWinnerWhole checks that the winner's record and reservation are in
// Ray's KV, name one owner and the groups Ray holds, and that the winner's
// state sees its cluster as its own (a plan with no changes).
func checkWinnerWhole(t *testing.T, name string, winner *acctest.WorkDir) {
	t.Helper()
	rec := acctest.ReadRecord(t, name)
	if rec == nil || rec.Owner == "" {
		t.Fatalf("no record of %s after the race: %+v", name, rec)
	}
	resv, ok := acctest.Reservations(t, name)[clusterspec.DefaultNamespace+"/"+name]
	if !ok {
		t.Fatalf("no reservation of %s after the race", name)
	}
	if resv.Owner != rec.Owner {
		t.Errorf("the reservation's owner differs from the record's: a loser overwrote one of them")
	}
	want := map[string]int{}
	var ids []string
	for _, g := range rec.Groups {
		ids = append(ids, g.ID)
	}
	for _, b := range rec.Bundles {
		want[b.PlacementGroup]++
	}
	slices.Sort(ids)
	got := slices.Sorted(slices.Values(resv.GroupIDs))
	if !slices.Equal(got, ids) || len(resv.Nodes) == 0 {
		t.Errorf("reservation of %s: group ids %v, nodes %v; want the record's groups %v, settled on their nodes", name, got, resv.Nodes, ids)
	}
	if err := acctest.CheckGroupsInRay(t, name, want)(nil); err != nil {
		t.Errorf("groups of %s: %v", name, err)
	}
	if out, err := winner.Run("plan", "-detailed-exitcode"); err != nil {
		t.Errorf("the winner's plan is not empty (its cluster is no longer its own?):\n%s", out)
	}
}

// A reservation whose create died (no group of its cluster lives in its
// namespace) is reclaimed by the next create, though a group of the same
// name lives in another Ray namespace.
func TestAccReservations_staleWhateverOtherNamespacesHold(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("nsghost")
	ghost, other := prefix+"-ghost", "other-"+prefix
	plainray.CreateGroups(t, other, plainray.Group{Name: ghost + "-node0", Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 0.01}}})
	t.Cleanup(func() { plainray.RemoveGroups(t, other, ghost+"-node0") })
	acctest.WriteReservation(t, ghost, map[string]any{"cluster": clusterspec.DefaultNamespace + "/" + ghost, "owner": "dddd4444-killed-apply",
		"groups": []string{ghost + "-node0"}, "nodes": map[string]any{}, "token": "t-killed",
		"claimed_at": float64(time.Now().Add(-10 * time.Minute).Unix())})
	t.Cleanup(func() { acctest.WriteReservation(t, ghost, nil) })
	w := acctest.NewWorkDirDestroyed(t, twoGPUCluster("t", prefix+"-new", func(*acctest.VirtualCluster) {}).String())
	w.MustRun("apply", "-auto-approve")
	left := acctest.Reservations(t, prefix)
	if _, kept := left[clusterspec.DefaultNamespace+"/"+ghost]; kept {
		t.Errorf("the dead create's reservation was kept by a same-named group in namespace %s", other)
	}
	if _, ok := left[clusterspec.DefaultNamespace+"/"+prefix+"-new"]; !ok {
		t.Errorf("the new cluster holds no reservation: %v", left)
	}
}

// A cluster Ray places never keeps a node another cluster reserved whole:
// with every other GPU node full, Ray can only put it beside the exclusive
// cluster, and its apply fails naming that cluster, leaving nothing.
func TestAccReservations_rayPlacedKeepsOffExclusiveNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("exray")
	whole := twoGPUCluster("t", prefix+"-whole", func(c *acctest.VirtualCluster) {
		c.SelectNodes, c.ExcludeNodeIDs = true, onlyNodes(t, "rackC-1")
		c.Extra = append(c.Extra, acctest.Attr{Key: "exclusive_nodes", Expr: "true"})
	})
	acctest.NewWorkDirDestroyed(t, whole.String()).MustRun("apply", "-auto-approve")
	fill, filler := "other-"+prefix, make([]plainray.Group, 0, 4)
	var names []string
	for i := range 4 { // one whole 4-GPU node each: only rackC-1, beside the exclusive cluster, keeps free GPUs
		names = append(names, fmt.Sprintf("%s-fill%d", prefix, i))
		filler = append(filler, plainray.Group{Name: names[i], Strategy: "PACK", Bundles: []map[string]float64{{"GPU": 4}}})
	}
	plainray.CreateGroups(t, fill, filler...)
	t.Cleanup(func() { plainray.RemoveGroups(t, fill, names...) })
	placed := twoGPUCluster("t", prefix+"-placed", func(c *acctest.VirtualCluster) { c.ReadyTimeout = "20s" })
	out, err := acctest.NewWorkDirDestroyed(t, placed.String()).Run("apply", "-auto-approve")
	if err == nil {
		t.Fatalf("%s landed beside %s, which reserves its node whole", placed.Name, whole.Name)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, `"`+whole.Name+`"`) || !strings.Contains(flat, "reserve whole") {
		t.Errorf("%s's error does not name %s as reserving its node whole:\n%s", placed.Name, whole.Name, out)
	}
	if err := acctest.CheckNoGroupsInRay(t, placed.Name)(nil); err != nil {
		t.Errorf("%s left groups: %v", placed.Name, err)
	}
	left := acctest.Reservations(t, prefix)
	if _, ok := left[clusterspec.DefaultNamespace+"/"+placed.Name]; ok {
		t.Errorf("%s left its reservation", placed.Name)
	}
	if r := left[clusterspec.DefaultNamespace+"/"+whole.Name]; len(r.Nodes) != 1 {
		t.Errorf("%s's reservation: %+v", whole.Name, r)
	}
}
