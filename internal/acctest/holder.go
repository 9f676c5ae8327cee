package acctest

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
)

// holderScript runs a Ray actor that holds resources outside any placement
// group until its stdin closes (the test released it, or the test process
// died). Its input (spec): {address, name, resources, timeout}.
const holderScript = `ray.init(address=spec["address"], namespace="terraform-ray-acc-holders", log_to_driver=False)
res = dict(spec["resources"])
cpus, gpus = res.pop("CPU", 0), res.pop("GPU", 0)
@ray.remote
class Holder:
    def node(self):
        return ray.get_runtime_context().get_node_id()
h = Holder.options(name=spec["name"], num_cpus=cpus, num_gpus=gpus, resources=res).remote()
print("HELD", ray.get(h.node.remote(), timeout=spec["timeout"]), flush=True)
sys.stdin.read()
`

// HoldResources makes Ray reserve res (e.g. {"topo_rank": 1,
// "node:127.0.0.13": 0.001}) for an actor outside any placement group, which
// the provider's plan-time capacity check does not see but Ray's scheduler
// does. It returns once the actor runs, and a release func that frees the
// resources (also called when the test ends). The actor's driver is a local
// python of the Ray virtualenv (RAY_BIN) connected to the GCS.
func HoldResources(t testing.TB, name string, res map[string]float64) (release func()) {
	t.Helper()
	cmd := plainray.Command(context.Background(), t, holderScript,
		map[string]any{"address": plainray.GCSAddress(), "name": name, "resources": res, "timeout": 60})
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting resource holder %s: %v", name, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			_ = stdin.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				err = <-done
			}
			t.Logf("released resource holder %s %v (exit: %v)", name, res, err)
		})
	}
	t.Cleanup(release)
	held := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if node, ok := strings.CutPrefix(sc.Text(), "HELD "); ok {
				held <- node
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(held)
	}()
	select {
	case node, ok := <-held:
		if !ok {
			release()
			t.Fatalf("resource holder %s %v exited before holding its resources:\n%s", name, res, plainray.Tail(stderr.String()))
		}
		t.Logf("holding %v on node %.12s (actor %s, outside any placement group)", res, node, name)
	case <-time.After(90 * time.Second):
		release()
		t.Fatalf("resource holder %s %v did not start in 90s:\n%s", name, res, plainray.Tail(stderr.String()))
	}
	return release
}
