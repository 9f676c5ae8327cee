package resources_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
)

// Acceptance tests of reservations by resource: separate states
// applying at once share nodes by GPU, whatever their pinning or placement,
// and never hand out one GPU twice. Ray itself is checked: where each
// group's bundles are, the GPU ids the probe saw there, the reservations.

// gpuNodeNames are the test cluster's GPU nodes (scripts/ray-cluster.sh),
// four GPUs each.
var gpuNodeNames = []string{"rackA-1", "rackA-2", "rackB-1", "rackB-2", "rackC-1"}

// onlyNodes is an exclude_node_ids expression that leaves select_nodes the
// named GPU nodes only.
func onlyNodes(t *testing.T, keep ...string) string {
	t.Helper()
	ids := nodeIDs(t)
	var out []string
	for _, n := range gpuNodeNames {
		if !slices.Contains(keep, n) {
			out = append(out, fmt.Sprintf("%q", ids[acctest.NodeIP(n)]))
		}
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// onRackC1 starts an acceptance test of clusters held to rackC-1: their
// name prefix, the exclude_node_ids that leaves select_nodes that node, and
// its id.
func onRackC1(t *testing.T, prefix string) (name, exclude, node string) {
	t.Helper()
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	return acctest.Name(prefix), onlyNodes(t, "rackC-1"), nodeIDs(t)[acctest.NodeIP("rackC-1")]
}

// twoGPUCluster is a cluster of one logical node with two 1-GPU bundles
// under label; more sets the rest.
func twoGPUCluster(label, name string, more func(*acctest.VirtualCluster)) acctest.VirtualCluster {
	c := acctest.VirtualCluster{Label: label, Name: name, Counts: []int{2}, GPUsPerNode: 2, ReadyTimeout: "60s",
		PortLow: 1700, PortHigh: 1800}
	more(&c)
	return c
}

// gpusOutput is an output of every bundle's "<node id>/<gpu id>" of the
// clusters under labels.
func gpusOutput(labels ...string) acctest.Block {
	var parts []string
	for _, l := range labels {
		parts = append(parts, fmt.Sprintf(`[for b in ray_virtual_cluster.%s.bundles : "${b.node_id}/${b.gpu_id}"]`, l))
	}
	return acctest.Output("gpus", "concat("+strings.Join(parts, ", ")+")")
}

// gpusOf reads a directory's gpus output.
func gpusOf(t *testing.T, w *acctest.WorkDir) []string {
	t.Helper()
	var gpus []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(w.MustRun("output", "-json", "gpus"))), &gpus); err != nil {
		t.Fatalf("output gpus: %v", err)
	}
	return gpus
}

// applyAllOnGPUs applies every directory at once, fails the test on any
// failure (why says what should have let it succeed), and checks the
// bundles' GPUs of them all are each given out once.
func applyAllOnGPUs(t *testing.T, dirs []*acctest.WorkDir, names []string, why string) {
	t.Helper()
	var gpus []string
	for i, r := range applyAtOnce(t, dirs, names) {
		if r.err != nil {
			t.Fatalf("%s failed %s:\n%s", names[i], why, r.out)
		}
		gpus = append(gpus, gpusOf(t, r.dir)...)
	}
	checkNoGPUTwice(t, gpus)
}

// checkNoGPUTwice fails when two bundles report one GPU of one node.
func checkNoGPUTwice(t *testing.T, gpus []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, g := range gpus {
		if seen[g] {
			t.Errorf("GPU %s is handed out twice: %v", g, gpus)
		}
		seen[g] = true
	}
}

// groupGPUsPerNode sums, from Ray's own list, the GPUs the groups named
// with prefix hold on each node.
func groupGPUsPerNode(t *testing.T, prefix string) map[string]float64 {
	t.Helper()
	groups, err := acctest.LiveGroups(t.Context(), acctest.Client(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, g := range groups {
		for _, b := range g.Bundles {
			out[b.NodeID] += b.UnitResources["GPU"]
		}
	}
	return out
}

// Four states apply at once, each two clusters of two GPUs chosen among
// four 4-GPU nodes: all eight are placed, every node holds exactly four
// GPUs of them, no GPU twice, and each cluster has its reservation; all
// destroyed, no reservation is left.
func TestAccReservations_statesShareNodesByGPU(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("share")
	exclude := onlyNodes(t, "rackA-1", "rackA-2", "rackB-1", "rackB-2")
	var dirs []*acctest.WorkDir
	var names []string
	for i := range 4 {
		var blocks []fmt.Stringer
		for _, l := range []string{"a", "b"} {
			blocks = append(blocks, twoGPUCluster(l, fmt.Sprintf("%s-%d%s", prefix, i, l), func(c *acctest.VirtualCluster) {
				c.SelectNodes, c.ExcludeNodeIDs = true, exclude
			}))
		}
		w := acctest.NewWorkDirDestroyed(t, acctest.HCL(append(blocks, gpusOutput("a", "b"))...))
		dirs, names = append(dirs, w), append(names, fmt.Sprintf("%s-%d", prefix, i))
	}
	applyAllOnGPUs(t, dirs, names, "while the four nodes hold all eight clusters")
	perNode := groupGPUsPerNode(t, prefix)
	if len(perNode) != 4 {
		t.Errorf("the clusters hold GPUs on %d nodes: %v; want all four", len(perNode), perNode)
	}
	for node, n := range perNode {
		if n != 4 {
			t.Errorf("node %s holds %g GPUs of the clusters; want 4 (full)", node, n)
		}
	}
	if resv := acctest.Reservations(t, prefix); len(resv) != 8 {
		t.Errorf("reservations: %v; want one per cluster (8)", resv)
	}
	for _, w := range dirs {
		w.MustRun("destroy", "-auto-approve")
	}
	if resv := acctest.Reservations(t, prefix); len(resv) != 0 {
		t.Errorf("reservations left after the destroys: %v", resv)
	}
}

// Two states with one configuration (names aside) apply at once onto the
// one node that holds both: both succeed there, on different GPUs. Then a
// domain-pinned cluster (Ray picks the node inside the domain) applies
// beside a node-pinned one of a third state on the same domain's node:
// both succeed, on disjoint GPUs.
func TestAccReservations_sameNodeSameConfigAndPinnings(t *testing.T) {
	prefix, exclude, node := onRackC1(t, "side")
	config := func(name, pinning string) string {
		return acctest.HCL(twoGPUCluster("a", name, func(c *acctest.VirtualCluster) {
			c.SelectNodes, c.ExcludeNodeIDs, c.Pinning = true, exclude, pinning
		}), gpusOutput("a"))
	}
	run := func(pinnings ...string) {
		t.Helper()
		dirs := make([]*acctest.WorkDir, len(pinnings))
		names := make([]string, len(pinnings))
		for i, p := range pinnings {
			names[i] = fmt.Sprintf("%s-%s-%d", prefix, p, i)
			dirs[i] = acctest.NewWorkDirDestroyed(t, config(names[i], p))
		}
		applyAllOnGPUs(t, dirs, names, "beside another cluster on a node that holds both")
		if got := groupGPUsPerNode(t, prefix); len(got) != 1 || got[node] != 4 {
			t.Errorf("the clusters' GPUs per node: %v; want 4 on %s only", got, node)
		}
		for _, w := range dirs {
			w.MustRun("destroy", "-auto-approve")
		}
	}
	run("node", "node")
	run("domain", "node")
}

// A cluster Ray places (no select_nodes, held to rackC by a constraint)
// races a select_nodes cluster for the same 4-GPU node, each asking three
// GPUs: exactly one succeeds, the other fails and leaves nothing in Ray,
// and the node never holds more than its four GPUs.
func TestAccReservations_plainRacesSelecting(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("plain")
	three := func(c *acctest.VirtualCluster) { c.Counts, c.GPUsPerNode, c.ReadyTimeout = []int{3}, 3, "20s" }
	plain := twoGPUCluster("t", prefix+"-ray", func(c *acctest.VirtualCluster) {
		three(c)
		c.Constraints = []map[string]float64{{"nvlink_domain_rackC": 0.001}}
	})
	selecting := twoGPUCluster("t", prefix+"-sel", func(c *acctest.VirtualCluster) {
		three(c)
		c.SelectNodes, c.ExcludeNodeIDs = true, onlyNodes(t, "rackC-1")
	})
	names := []string{plain.Name, selecting.Name}
	dirs := []*acctest.WorkDir{acctest.NewWorkDirDestroyed(t, plain.String()), acctest.NewWorkDirDestroyed(t, selecting.String())}
	results := applyAtOnce(t, dirs, names)
	won := slices.IndexFunc(results, func(r applyResult) bool { return r.err == nil })
	if won < 0 || results[1-won].err == nil {
		t.Fatalf("both or neither succeeded:\n%s\n%s", results[0].out, results[1].out)
	}
	t.Logf("%s won; %s failed:\n%s", names[won], names[1-won], results[1-won].out)
	if err := acctest.CheckNoGroupsInRay(t, names[1-won])(nil); err != nil {
		t.Errorf("the loser left groups: %v", err)
	}
	if _, left := acctest.Reservations(t, prefix)[clusterspec.DefaultNamespace+"/"+names[1-won]]; left {
		t.Errorf("the loser left its reservation")
	}
	for node, n := range groupGPUsPerNode(t, prefix) {
		if n > 4 {
			t.Errorf("node %s holds %g GPUs of the two clusters; it has 4", node, n)
		}
	}
}

// A cluster with exclusive_nodes takes its node whole: a two-GPU cluster
// of another state that fits beside it in GPUs fails naming it, and
// creates nothing.
func TestAccReservations_exclusiveNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("excl")
	exclude := onlyNodes(t, "rackC-1")
	whole := twoGPUCluster("t", prefix+"-whole", func(c *acctest.VirtualCluster) {
		c.SelectNodes, c.ExcludeNodeIDs = true, exclude
		c.Extra = append(c.Extra, acctest.Attr{Key: "exclusive_nodes", Expr: "true"})
	})
	share := twoGPUCluster("t", prefix+"-share", func(c *acctest.VirtualCluster) { c.SelectNodes, c.ExcludeNodeIDs = true, exclude })
	a, b := acctest.NewWorkDirDestroyed(t, whole.String()), acctest.NewWorkDirDestroyed(t, share.String())
	a.MustRun("apply", "-auto-approve")
	out, err := b.Run("apply", "-auto-approve")
	if err == nil {
		t.Fatalf("%s shared the node %s reserves whole", share.Name, whole.Name)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, `"`+whole.Name+`"`) {
		t.Errorf("%s's error does not name %s:\n%s", share.Name, whole.Name, out)
	}
	if err := acctest.CheckNoGroupsInRay(t, share.Name)(nil); err != nil {
		t.Errorf("%s left groups: %v", share.Name, err)
	}
	if r := acctest.Reservations(t, prefix)[clusterspec.DefaultNamespace+"/"+whole.Name]; len(r.Nodes) != 1 {
		t.Errorf("%s's reservation: %+v", whole.Name, r)
	}
}

// jobHolds is what one driver job did under the reservation lock: how
// many creates reserved, and how many creates each hold served.
type jobHolds struct {
	Reserved int
	Holds    []int
}

// waveJobs reads the provider's log at path: per driver job (the run_id of
// its progress lines, without a batch request's ".<index>"), its creates'
// `reserved` lines and its holds of the lock (`unlocked` lines).
func waveJobs(t *testing.T, path string) map[string]*jobHolds {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jobHolds{}
	for _, line := range strings.Split(string(raw), "\n") {
		id := runIDRE.FindStringSubmatch(line)
		if id == nil {
			continue
		}
		job, _, _ := strings.Cut(id[1], ".")
		if out[job] == nil {
			out[job] = &jobHolds{}
		}
		if m := waveRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "phase=unlocked") {
			n, _ := strconv.Atoi(m[1])
			out[job].Holds = append(out[job].Holds, n)
		} else if strings.Contains(line, "phase=reserved") {
			out[job].Reserved++
		}
	}
	return out
}

var (
	waveRE  = regexp.MustCompile(`\bwave=(\d+)`)
	runIDRE = regexp.MustCompile(`\brun_id="?([^\s"]+)`)
)

// anotherStatesCreate writes the reservation of another state's create of
// cluster "<prefix>-other" still making its groups: gpus GPUs of node,
// fresh (not stale) however slow the test runs, removed when it ends. It
// returns the cluster's name.
func anotherStatesCreate(t *testing.T, prefix, node string, gpus float64) string {
	t.Helper()
	other := prefix + "-other"
	t.Cleanup(func() { acctest.WriteReservation(t, other, nil) })
	acctest.WriteReservation(t, other, map[string]any{"cluster": clusterspec.DefaultNamespace + "/" + other, "owner": "another-state",
		"groups": []string{other + "-node0"}, "nodes": map[string]any{node: map[string]float64{"GPU": gpus}}, "token": "t",
		"claimed_at": float64(time.Now().Add(5 * time.Minute).Unix())})
	return other
}

// One configuration of three clusters Ray places and two select_nodes
// clusters held to one 4-GPU node applies as one wave: one hold of the lock
// reserves all five, one more settles the three Ray placed (the provider's
// log), and Ray holds each where its reservation says, the node full with
// the two. Then beside another state's reservation of two GPUs of that node
// (its create still making its groups), two more select_nodes clusters of
// two GPUs each over-ask it: one is made, the other fails naming the other
// state's cluster and its sibling, and leaves nothing in Ray.
func TestAccReservations_oneWave(t *testing.T) {
	prefix, exclude, node := onRackC1(t, "onewave")
	selecting := func(label string) fmt.Stringer {
		return twoGPUCluster(label, prefix+"-"+label, func(c *acctest.VirtualCluster) { c.SelectNodes, c.ExcludeNodeIDs = true, exclude })
	}
	blocks := []fmt.Stringer{selecting("s0"), selecting("s1"), acctest.VirtualCluster{Label: "r", Name: prefix + "-r${count.index}",
		Counts: []int{1}, GPUsPerNode: 1, Extra: []acctest.Attr{{Key: "count", Expr: "3"},
			{Key: "port_range_low", Expr: "1800 + count.index * 10"}, {Key: "port_range_high", Expr: "1809 + count.index * 10"}}}}
	w := acctest.NewWorkDirDestroyed(t, acctest.HCL(blocks...))
	log := filepath.Join(t.TempDir(), "provider.log")
	w.LogProviderTo(log)
	w.MustRun("apply", "-auto-approve")
	// How the batcher splits the five into jobs depends on timing; within
	// a job, its creates share holds (the driver's pytest pins down how).
	reserved := 0
	for job, j := range waveJobs(t, log) {
		t.Logf("job %s: %d reserved, creates served per hold %v", job, j.Reserved, j.Holds)
		reserved += j.Reserved
		served := 0
		for _, n := range j.Holds {
			served += n
		}
		if j.Reserved > 1 && len(j.Holds) >= served {
			t.Errorf("job %s: %d creates reserved in %d holds serving %d; want holds shared", job, j.Reserved, len(j.Holds), served)
		}
	}
	if reserved != 5 {
		t.Errorf("%d creates reserved; want 5", reserved)
	}
	perNode := groupGPUsPerNode(t, prefix)
	if perNode[node] != 4 || perNode[""] != 0 {
		t.Errorf("GPUs per node: %v; want 4 on %s (the select_nodes clusters)", perNode, node)
	}
	if resv := acctest.Reservations(t, prefix); len(resv) != 5 || len(resv[clusterspec.DefaultNamespace+"/"+prefix+"-s0"].Nodes) != 1 {
		t.Errorf("reservations: %+v; want five, s0's on one node", resv)
	}
	w.MustRun("destroy", "-auto-approve")

	other := anotherStatesCreate(t, prefix, node, 2)
	w.SetConfig(acctest.HCL(selecting("x0"), selecting("x1")))
	out, err := w.Run("apply", "-auto-approve")
	flat := strings.Join(strings.Fields(out), " ")
	if err == nil || !strings.Contains(flat, placement.SummaryNodesTaken) || !strings.Contains(flat, `"`+other+`"`) {
		t.Fatalf("the over-asking wave: want one cluster refused naming %s:\n%s", other, out)
	}
	resv := acctest.Reservations(t, prefix)
	made, lost := prefix+"-x0", prefix+"-x1"
	if _, ok := resv[clusterspec.DefaultNamespace+"/"+made]; !ok {
		made, lost = lost, made
	}
	if !strings.Contains(flat, `"`+made+`"`) {
		t.Errorf("%s's error does not name its sibling %s:\n%s", lost, made, out)
	}
	if _, left := resv[clusterspec.DefaultNamespace+"/"+lost]; left || len(resv) != 2 || acctest.ReadRecord(t, lost) != nil {
		t.Errorf("reservations: %+v; want %s's and the other state's only, no record of %s", resv, made, lost)
	}
	if err := acctest.CheckNoGroupsInRay(t, lost)(nil); err != nil {
		t.Errorf("%s left groups: %v", lost, err)
	}
	if got := groupGPUsPerNode(t, prefix); got[node] != 2 {
		t.Errorf("GPUs per node: %v; want %s's 2 on %s", got, made, node)
	}
}

// A select_nodes cluster whose first choice another state's create has
// just reserved whole (its groups not made yet, so no plan or snapshot sees
// it) takes the other node it may use in the same driver job: the driver
// falls back on the request's alternative under the lock. Ray holds its
// group there, its record and reservation name that node, and one job
// reserved it.
func TestAccReservations_alternativeInTheSameJob(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("alt")
	c := twoGPUCluster("a", prefix+"-a", func(c *acctest.VirtualCluster) {
		c.SelectNodes, c.ExcludeNodeIDs = true, onlyNodes(t, "rackB-1", "rackB-2")
	})
	w := acctest.NewWorkDirDestroyed(t, acctest.HCL(c, acctest.Output("node", "ray_virtual_cluster.a.selected_node_ids[0]")))
	w.MustRun("apply", "-auto-approve")
	first := nodeOf(t, w) // the node this configuration chooses first, by the reference's order
	w.MustRun("destroy", "-auto-approve")

	anotherStatesCreate(t, prefix, first, 4)
	log := filepath.Join(t.TempDir(), "provider.log")
	w.LogProviderTo(log)
	w.MustRun("apply", "-auto-approve")
	second := nodeOf(t, w)
	if second == first {
		t.Fatalf("the cluster took %s, which another state reserved whole", first)
	}
	checkClusterOnNode(t, c.Name, second)
	if rec := acctest.ReadRecord(t, c.Name); rec == nil || !slices.Equal(rec.SelectedNodeIDs, []string{second}) {
		t.Errorf("record %+v; want it to name %s", rec, second)
	}
	if nodes := acctest.Reservations(t, prefix)[clusterspec.DefaultNamespace+"/"+c.Name].Nodes; len(nodes) != 1 || nodes[second]["GPU"] != 2 {
		t.Errorf("reservation nodes %v; want 2 GPUs of %s", nodes, second)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	creates := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n") {
		if id := runIDRE.FindStringSubmatch(line); id != nil && strings.Contains(line, "phase=started") && strings.Contains(line, "action=create") {
			creates[id[1]] = true
		}
	}
	if len(creates) != 1 || !strings.Contains(string(raw), "alternative=1") {
		t.Errorf("create runs %v, alternative taken: %v; want one run that took the alternative",
			slices.Sorted(maps.Keys(creates)), strings.Contains(string(raw), "alternative=1"))
	}
	w.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, c.Name)(nil); err != nil {
		t.Error(err)
	}
}
