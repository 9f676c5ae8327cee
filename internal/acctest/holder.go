package acctest

import (
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
	p := startScript(t, "resource holder "+name, holderScript,
		map[string]any{"address": plainray.GCSAddress(), "name": name, "resources": res, "timeout": 60}, "HELD ")
	release = func() {
		err := p.stop()
		t.Logf("released resource holder %s %v (exit: %v)", name, res, err)
	}
	select {
	case node, ok := <-p.lines:
		if !ok {
			release()
			t.Fatalf("resource holder %s %v exited before holding its resources:\n%s", name, res, plainray.Tail(p.stderr.String()))
		}
		t.Logf("holding %v on node %.12s (actor %s, outside any placement group)", res, node, name)
	case <-time.After(90 * time.Second):
		release()
		t.Fatalf("resource holder %s %v did not start in 90s:\n%s", name, res, plainray.Tail(p.stderr.String()))
	}
	return release
}
