package acctest

import (
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// outOfBandScript creates or removes detached placement groups with plain
// ray.util calls, as an operator would: never through the provider's driver,
// so that a driver bug cannot sit on both sides of a test. Its input:
// {address, namespace, action: "create"|"remove", timeout,
// groups: [{name, strategy, bundles}]}.
const outOfBandScript = `import base64, json, sys, time
import ray
from ray.util.placement_group import (get_placement_group, placement_group,
                                      placement_group_table, remove_placement_group)
spec = json.loads(base64.b64decode(sys.argv[1]))
ray.init(address=spec["address"], namespace=spec["namespace"], log_to_driver=False)
if spec["action"] == "create":
    pgs = [placement_group(g["bundles"], strategy=g["strategy"], name=g["name"], lifetime="detached")
           for g in spec["groups"]]
    ray.get([pg.ready() for pg in pgs], timeout=spec["timeout"])
    for g, pg in zip(spec["groups"], pgs):
        print("CREATED", g["name"], pg.id.hex(), flush=True)
else:
    removed = []
    for g in spec["groups"]:
        try:
            pg = get_placement_group(g["name"])
        except ValueError:
            print("MISSING", g["name"], flush=True)
            continue
        remove_placement_group(pg)
        removed.append((g["name"], pg))
    deadline = time.time() + spec["timeout"]
    for name, pg in removed:
        while placement_group_table(pg).get("state") != "REMOVED":
            if time.time() > deadline:
                sys.exit("placement group %s is not REMOVED after %ss" % (name, spec["timeout"]))
            time.sleep(0.1)
        print("REMOVED", name, flush=True)
`

// outOfBandGroup is one group of outOfBandScript's input.
type outOfBandGroup struct {
	Name     string               `json:"name"`
	Strategy string               `json:"strategy,omitempty"`
	Bundles  []map[string]float64 `json:"bundles,omitempty"`
}

func runOutOfBand(t *testing.T, action string, groups []outOfBandGroup, timeout time.Duration) string {
	t.Helper()
	return runRayPython(t, timeout+time.Minute, action+" placement groups out of band", outOfBandScript, map[string]any{
		"address": GCSAddress(), "namespace": vcluster.DefaultNamespace, "action": action,
		"timeout": timeout.Seconds(), "groups": groups,
	})
}

// RemoveGroupsOutOfBand removes placement groups behind Terraform's back, the
// way an operator would (ray.util.remove_placement_group), and waits until Ray
// reports them REMOVED. Groups that do not exist are skipped.
func RemoveGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	groups := make([]outOfBandGroup, len(names))
	for i, n := range names {
		groups[i] = outOfBandGroup{Name: n}
	}
	out := runOutOfBand(t, "remove", groups, time.Minute)
	t.Logf("out of band: %s", strings.ReplaceAll(out, "\n", "; "))
}

// CreateGroupsOutOfBand makes detached per-node style groups (one
// {CPU: 1, GPU: 1} bundle each, PACK) behind Terraform's back, for import
// tests, and waits until they are placed.
func CreateGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	groups := make([]outOfBandGroup, len(names))
	for i, n := range names {
		groups[i] = outOfBandGroup{Name: n, Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 1, "GPU": 1}}}
	}
	out := runOutOfBand(t, "create", groups, time.Minute)
	t.Logf("out of band: %s", strings.ReplaceAll(out, "\n", "; "))
}
