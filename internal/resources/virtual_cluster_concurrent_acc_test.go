package resources_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// Acceptance tests of teams applying at the same moment: several
// working directories (separate states) run the real CLI at once against the
// local cluster's five GPU nodes. Ray itself is checked: groups, records,
// node claims and jobs.

// nodeCluster is a one-node cluster that selects its node: four GPUs, so it
// takes a whole GPU node of the test cluster. mode is capacity_check.
func nodeCluster(name, mode string) string {
	return acctest.HCL(acctest.NodeCluster(name, mode, "60s", 1700, 1800), acctest.Output("node", "ray_virtual_cluster.t.selected_node_ids[0]"))
}

// applyResult is one working directory's apply.
type applyResult struct {
	name string
	dir  *acctest.WorkDir
	out  string
	err  error
	took time.Duration
}

// applyAtOnce runs `apply` in every directory at the same moment.
func applyAtOnce(t *testing.T, dirs []*acctest.WorkDir, names []string) []applyResult {
	t.Helper()
	results := make([]applyResult, len(dirs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, w := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			out, err := w.Run("apply", "-auto-approve")
			results[i] = applyResult{name: names[i], dir: w, out: out, err: err, took: time.Since(t0)}
		}()
	}
	close(start)
	wg.Wait()
	return results
}

// nodeOf is the node a directory's cluster selected (its output).
func nodeOf(t *testing.T, w *acctest.WorkDir) string {
	t.Helper()
	var node string
	if err := json.Unmarshal([]byte(strings.TrimSpace(w.MustRun("output", "-json", "node"))), &node); err != nil {
		t.Fatalf("output node: %v", err)
	}
	return node
}

// newDirs makes n working directories, each holding one nodeCluster, all
// destroyed when the test ends.
func newDirs(t *testing.T, prefix, mode string, n int) ([]*acctest.WorkDir, []string) {
	t.Helper()
	dirs := make([]*acctest.WorkDir, n)
	names := make([]string, n)
	for i := range dirs {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		dirs[i] = acctest.NewWorkDirDestroyed(t, nodeCluster(names[i], mode))
	}
	return dirs, names
}

// Four states apply at once with enough free nodes: all succeed, on four
// different nodes, each holding its own claim. Four more then apply at once
// for the one node left: exactly one succeeds; each of the others fails
// naming a holder and the next step, well before its ready_timeout (it
// never waits for the nodes), and leaves nothing in Ray.
func TestAccConcurrent_appliesTakeDisjointNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("race")
	dirs, names := newDirs(t, prefix, "free", 8)
	first := applyAtOnce(t, dirs[:4], names[:4])
	nodes := map[string]string{}
	for i, r := range first {
		if r.err != nil {
			t.Fatalf("%s failed with enough free nodes:\n%s", names[i], r.out)
		}
		node := nodeOf(t, r.dir)
		if other, taken := nodes[node]; taken {
			t.Errorf("%s and %s both selected node %s", other, names[i], node)
		}
		nodes[node] = names[i]
		checkClusterOnNode(t, names[i], node)
	}
	second := applyAtOnce(t, dirs[4:], names[4:])
	var won, lost []applyResult
	for _, r := range second {
		if r.err == nil {
			won = append(won, r)
		} else {
			lost = append(lost, r)
		}
	}
	if len(won) != 1 || len(lost) != 3 {
		t.Fatalf("four states raced for the last free node: %d succeeded, %d failed; want 1 and 3", len(won), len(lost))
	}
	holders := append(slices.Collect(maps.Values(nodes)), won[0].name)
	for _, l := range lost {
		checkLoser(t, l, holders)
	}
	if resv := acctest.Reservations(t, prefix); len(resv) != 5 {
		t.Errorf("reservations after the race: %v; want the five winners' (one per GPU node)", resv)
	}
	for _, w := range dirs {
		if _, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Errorf("destroy failed")
		}
	}
	if resv := acctest.Reservations(t, prefix); len(resv) != 0 {
		t.Errorf("reservations left after every destroy: %v", resv)
	}
	if err := acctest.CheckNoActiveJobs(t, "")(nil); err != nil {
		t.Error(err)
	}
}

// checkLoser checks a state that lost the race: its error names one of the
// holders and the next step, it failed long before its ready_timeout (60s),
// and Ray holds no group, record or claim of it. It either lost the claim
// or, planning after a winner's group was placed, was refused at plan.
func checkLoser(t *testing.T, l applyResult, holders []string) {
	t.Helper()
	out := strings.Join(strings.Fields(l.out), " ")
	if !slices.ContainsFunc(holders, func(h string) bool { return strings.Contains(out, `"`+h) }) ||
		!strings.Contains(out, `capacity_check = "total"`) {
		t.Errorf("%s's error names no holder of %v or no next step:\n%s", l.name, holders, l.out)
	}
	if strings.Contains(out, "inconsistent final plan") {
		t.Errorf("%s hit Terraform's inconsistent final plan:\n%s", l.name, l.out)
	}
	if l.took > 45*time.Second {
		t.Errorf("%s failed after %s: it waited instead of failing at the collision", l.name, l.took)
	}
	t.Logf("%s failed after %s", l.name, l.took.Round(100*time.Millisecond))
	if err := acctest.CheckNoGroupsInRay(t, l.name)(nil); err != nil {
		t.Errorf("%s left groups: %v", l.name, err)
	}
	if rec := acctest.ReadRecord(t, l.name); rec != nil {
		t.Errorf("%s left a record: %+v", l.name, rec)
	}
}

// While two states destroy their clusters, two others apply onto the same
// (only) nodes with capacity_check = "total": they queue until the destroys
// free the nodes and then succeed there. A third with capacity_check = "none",
// applied while every node is held, fails at once naming the holders. The
// destroys start only once both queued applies say (in the provider's log)
// that they queue, so a slow machine cannot turn the queue into a plain
// apply onto free nodes.
func TestAccConcurrent_destroyWhileApply(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("queue")
	holders, holderNames := newDirs(t, prefix+"-h", "free", 5)
	for i, r := range applyAtOnce(t, holders, holderNames) {
		if r.err != nil {
			t.Fatalf("%s failed with five free nodes:\n%s", holderNames[i], r.out)
		}
	}
	freed := []string{nodeOf(t, holders[0]), nodeOf(t, holders[1])}

	impatient, impatientNames := newDirs(t, prefix+"-f", "none", 1)
	if out, err := impatient[0].Run("apply", "-auto-approve"); err == nil {
		t.Errorf("%s (capacity_check = \"none\") succeeded while every node was held", impatientNames[0])
	} else if !strings.Contains(strings.Join(strings.Fields(out), " "), "holds node") {
		t.Errorf("%s's error names no holder:\n%s", impatientNames[0], out)
	}

	// A ready_timeout the queue cannot outlast on a loaded machine.
	queued, queuedNames := newDirs(t, prefix+"-q", "total", 2)
	logs := make([]string, len(queued))
	for i, w := range queued {
		w.SetConfig(acctest.HCL(acctest.NodeCluster(queuedNames[i], "total", "300s", 1700, 1800),
			acctest.Output("node", "ray_virtual_cluster.t.selected_node_ids[0]")))
		logs[i] = filepath.Join(t.TempDir(), "provider.log")
		w.LogProviderTo(logs[i])
	}
	var wg sync.WaitGroup
	var destroyErr [2]error
	var results []applyResult
	wg.Add(2)
	go func() { defer wg.Done(); results = applyAtOnce(t, queued, queuedNames) }()
	go func() {
		defer wg.Done()
		waitForLogLine(t, logs, "queueing for nodes other clusters hold", 5*time.Minute)
		var destroys sync.WaitGroup
		for i := range 2 {
			destroys.Add(1)
			go func() { defer destroys.Done(); _, destroyErr[i] = holders[i].Run("destroy", "-auto-approve") }()
		}
		destroys.Wait()
	}()
	wg.Wait()
	for i, err := range destroyErr {
		if err != nil {
			t.Errorf("destroy of %s failed", holderNames[i])
		}
	}
	got := []string{}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("%s (capacity_check = \"total\") did not queue until the nodes were freed:\n%s", queuedNames[i], r.out)
			continue
		}
		got = append(got, nodeOf(t, r.dir))
		checkClusterOnNode(t, queuedNames[i], got[len(got)-1])
	}
	slices.Sort(got)
	slices.Sort(freed)
	if len(got) == 2 && !slices.Equal(got, freed) {
		t.Errorf("queued clusters are on %v; want the freed nodes %v", got, freed)
	}
}

// waitForLogLine waits until every log file holds line; it fails the test
// after timeout.
func waitForLogLine(t *testing.T, logs []string, line string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		waiting := 0
		for _, path := range logs {
			if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), line) {
				waiting++
			}
		}
		if waiting == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d of %d provider logs never said %q within %s", waiting, len(logs), line, timeout)
			return
		}
		time.Sleep(time.Second)
	}
}

// checkClusterOnNode checks in Ray that the cluster's group is placed on node.
func checkClusterOnNode(t *testing.T, name, node string) {
	t.Helper()
	g := acctest.WaitForGroupState(t, name+"-node0", "CREATED", time.Minute)
	for _, b := range g.Bundles {
		if b.NodeID != node {
			t.Errorf("group %s has a bundle on node %s; its state says %s", g.Name, b.NodeID, node)
		}
	}
}
