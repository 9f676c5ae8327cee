package plainray

import (
	"strings"
	"testing"
	"time"
)

// groupsScript creates or removes detached placement groups with plain
// ray.util calls. Its input: {address, namespace, action: "create"|"remove",
// timeout, groups: [{name, strategy, bundles}]}.
const groupsScript = `from ray.util.placement_group import (get_placement_group, placement_group,
                                      placement_group_table, remove_placement_group)
import time
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

// Group is one placement group for CreateGroups (name only for RemoveGroups).
type Group struct {
	Name     string               `json:"name"`
	Strategy string               `json:"strategy,omitempty"`
	Bundles  []map[string]float64 `json:"bundles,omitempty"`
}

func runGroups(t testing.TB, namespace, action string, groups []Group, timeout time.Duration) {
	t.Helper()
	out := Run(t, timeout+time.Minute, action+" placement groups out of band", groupsScript, map[string]any{
		"address": GCSAddress(), "namespace": namespace, "action": action,
		"timeout": timeout.Seconds(), "groups": groups,
	})
	t.Logf("out of band: %s", strings.ReplaceAll(out, "\n", "; "))
}

// CreateGroups makes detached groups in namespace and waits until they are
// placed.
func CreateGroups(t testing.TB, namespace string, groups ...Group) {
	t.Helper()
	runGroups(t, namespace, "create", groups, time.Minute)
}

// RemoveGroups removes the named groups of namespace (skipping those that do
// not exist) and waits until Ray reports them REMOVED.
func RemoveGroups(t testing.TB, namespace string, names ...string) {
	t.Helper()
	groups := make([]Group, len(names))
	for i, n := range names {
		groups[i] = Group{Name: n}
	}
	runGroups(t, namespace, "remove", groups, time.Minute)
}
