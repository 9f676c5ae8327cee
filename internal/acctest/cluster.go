package acctest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// The local test cluster of scripts/ray-cluster.sh: node name -> offset of
// its loopback IP from the head's (RAY_TF_IP_BASE). rackB-0 runs only when a
// test starts it (scripts/ray-cluster.sh start-node rackB-0).
var clusterNodes = map[string]int{
	"head": 0, "rackA-1": 1, "rackA-2": 2, "rackB-1": 3, "rackB-2": 4, "rackC-1": 5, "rackB-0": 6,
}

// ClusterNodeCount is the number of nodes scripts/ray-cluster.sh starts.
const ClusterNodeCount = 6

// NodeIP returns the loopback IP of a node of the test cluster, the one
// RAY_TF_IP_BASE says (as plainray does), so a slot or side cluster works.
func NodeIP(name string) string {
	offset, ok := clusterNodes[name]
	if !ok {
		panic("acctest.NodeIP: no test-cluster node " + name)
	}
	return plainray.HostIP(offset)
}

// RepoRoot is the directory holding go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ClusterScript runs scripts/ray-cluster.sh with args and returns its stdout.
// Its stderr goes to the test log. Token variables are never passed on, so
// the test cluster cannot pick up token authentication from the test.
func ClusterScript(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(RepoRoot(t), "scripts", "ray-cluster.sh"), args...)
	cmd.Env = plainray.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" {
			t.Logf("ray-cluster.sh %s: %s", args[0], line)
		}
	}
	t.Logf("ray-cluster.sh %s took %s", strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		return stdout.String(), fmt.Errorf("scripts/ray-cluster.sh %s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// SkipDisruptive skips tests that stop Ray processes of the shared test
// cluster when RAY_TF_SKIP_DISRUPTIVE is set (and not 0).
func SkipDisruptive(t *testing.T) {
	t.Helper()
	if skipSet("RAY_TF_SKIP_DISRUPTIVE") {
		t.Skip("RAY_TF_SKIP_DISRUPTIVE is set: not stopping Ray processes of the shared test cluster")
	}
}

// EnsureCluster brings the local test cluster back to all of its nodes alive
// (scripts/ray-cluster.sh ensure), failing the test if it cannot.
func EnsureCluster(t testing.TB) {
	t.Helper()
	if _, err := ClusterScript(t, 6*time.Minute, "ensure"); err != nil {
		t.Errorf("could not bring the Ray test cluster back: %v", err)
		return
	}
	if n, err := AliveNodeCount(context.Background(), Client(t)); err != nil || n < ClusterNodeCount {
		t.Errorf("Ray reports %d of %d nodes alive after ensure (%v)", n, ClusterNodeCount, err)
	}
}

// RestartCluster stops every Ray process and starts the test cluster again.
// A t.Cleanup makes sure all nodes are up when the test ends, even on failure.
func RestartCluster(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { EnsureCluster(t) })
	if _, err := ClusterScript(t, 6*time.Minute, "restart"); err != nil {
		t.Fatalf("restarting Ray: %v", err)
	}
}

// StopNode stops one worker node; a t.Cleanup starts it again and waits for
// all nodes to be alive.
func StopNode(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() { EnsureCluster(t) })
	if _, err := ClusterScript(t, 3*time.Minute, "stop-node", name); err != nil {
		t.Fatalf("stopping node %s: %v", name, err)
	}
}

// AliveNodeCount is the number of nodes Ray reports ALIVE.
func AliveNodeCount(ctx context.Context, c *rayclient.Client) (int, error) {
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}})
	return len(nodes), err
}

// NodeState is the state Ray reports for the newest node with ip ("" if none).
func NodeState(ctx context.Context, c *rayclient.Client, ip string) (string, error) {
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("node_ip", ip)}, Detail: true})
	if err != nil {
		return "", err
	}
	state, newest := "", int64(-1)
	for _, n := range nodes {
		if n.State == raystate.NodeStateAlive {
			return n.State, nil
		}
		if n.StartTimeMs > newest {
			state, newest = n.State, n.StartTimeMs
		}
	}
	return state, nil
}

// WaitForGroupState polls Ray until the group called name is in state, and
// returns the last group seen.
func WaitForGroupState(t testing.TB, name, state string, timeout time.Duration) raystate.PlacementGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := Client(t)
	last := "not found"
	for {
		groups, err := c.ListPlacementGroups(ctx, rayclient.ListOptions{
			Filters: []rayclient.Filter{rayclient.Eq("name", name), rayclient.Ne("state", raystate.PlacementGroupStateRemoved)}, Detail: true})
		if err == nil {
			for _, g := range groups {
				if g.Name == name {
					last = g.State
					if g.State == state {
						return g
					}
				}
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("placement group %s is not %s after %s (last: %s)", name, state, timeout, last)
			return raystate.PlacementGroup{}
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ActiveJobs lists the submission jobs whose id starts with prefix and that
// are not terminal.
func ActiveJobs(ctx context.Context, c *rayclient.Client, prefix string) ([]rayclient.JobDetails, error) {
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	var out []rayclient.JobDetails
	for _, j := range jobs {
		if strings.HasPrefix(j.SubmissionID, prefix) && !j.IsTerminal() {
			out = append(out, j)
		}
	}
	return out, nil
}

// SkipUnlessAcc skips a test that does work outside resource.Test (starting
// clusters, proxies) unless TF_ACC is set, as resource.Test itself does.
func SkipUnlessAcc(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance tests are skipped unless TF_ACC is set")
	}
}

// JobRecordsLeft lists the provider's driver job records (raytf_, not the
// raytf_owner_ ownership notes) whose id contains name, after waiting settle
// for Ray to write back what its monitor may and for a provider process's
// hand-off (driver.HandOffCleanups) to delete what was left.
func JobRecordsLeft(t *testing.T, name string, settle time.Duration) []string {
	t.Helper()
	time.Sleep(settle)
	jobs, err := Client(t).ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, j := range jobs {
		id := j.SubmissionID
		if strings.HasPrefix(id, "raytf_") && strings.Contains(id, name) {
			left = append(left, id+" "+j.Status)
		}
	}
	return left
}
