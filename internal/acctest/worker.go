package acctest

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// workerScript runs a NeMo-RL-style worker: an actor scheduled into one
// bundle of a placement group (PlacementGroupSchedulingStrategy, as
// worker_groups.py does), taking that bundle's CPU and GPU. It prints
// "WORKER <pid> <node id>" once it runs and again for every line on stdin,
// and exits when stdin closes. Its input: {address, namespace, group,
// bundle, cpus, gpus, timeout}.
const workerScript = `from ray.util.placement_group import get_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
import os
ray.init(address=spec["address"], namespace=spec["namespace"], log_to_driver=False)
@ray.remote
class Worker:
    def where(self):
        return "%d %s" % (os.getpid(), ray.get_runtime_context().get_node_id())
pg = get_placement_group(spec["group"])
w = Worker.options(num_cpus=spec["cpus"], num_gpus=spec["gpus"], scheduling_strategy=PlacementGroupSchedulingStrategy(
    placement_group=pg, placement_group_bundle_index=spec["bundle"])).remote()
print("WORKER", ray.get(w.where.remote(), timeout=spec["timeout"]), flush=True)
for _ in sys.stdin:
    print("WORKER", ray.get(w.where.remote(), timeout=spec["timeout"]), flush=True)
`

// BundleWorker is a running worker of StartBundleWorker.
type BundleWorker struct {
	PID, NodeID string
	ask         func() (pid, node string, err error)
}

// Where asks the worker for its process id and node again: an error when
// it no longer answers.
func (w *BundleWorker) Where() (pid, node string, err error) { return w.ask() }

// StartBundleWorker starts a worker in bundle of the provider's group (in
// the provider's default namespace) with plain Ray calls and returns once
// it runs; it stops when the test ends.
func StartBundleWorker(t *testing.T, group string, bundle int, cpus, gpus float64) *BundleWorker {
	t.Helper()
	p := startScript(t, fmt.Sprintf("the worker in %s bundle %d", group, bundle), workerScript, map[string]any{
		"address": plainray.GCSAddress(), "namespace": clusterspec.DefaultNamespace, "group": group, "bundle": bundle,
		"cpus": cpus, "gpus": gpus, "timeout": 60}, "WORKER ")
	read := func() (string, string, error) {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return "", "", fmt.Errorf("the worker exited:\n%s", plainray.Tail(p.stderr.String()))
			}
			pid, node, _ := strings.Cut(line, " ")
			return pid, node, nil
		case <-time.After(90 * time.Second):
			return "", "", fmt.Errorf("the worker did not answer in 90s:\n%s", plainray.Tail(p.stderr.String()))
		}
	}
	pid, node, err := read()
	if err != nil {
		_ = p.stop()
		t.Fatalf("worker in %s bundle %d: %v", group, bundle, err)
	}
	t.Logf("worker pid %s runs in %s bundle %d on node %.12s", pid, group, bundle, node)
	ask := func() (string, string, error) {
		if _, err := io.WriteString(p.stdin, "where\n"); err != nil {
			return "", "", err
		}
		return read()
	}
	return &BundleWorker{PID: pid, NodeID: node, ask: ask}
}
