package driver

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"
)

// removeOutOfBandScript removes one named group with plain ray.util calls
// (never the driver) and waits until Ray reports it REMOVED.
const removeOutOfBandScript = `import sys, time, ray
from ray.util.placement_group import get_placement_group, placement_group_table, remove_placement_group
ray.init(address=sys.argv[1], namespace=sys.argv[2], logging_level="ERROR", log_to_driver=False)
pg = get_placement_group(sys.argv[3])
remove_placement_group(pg)
deadline = time.time() + 60
while placement_group_table(pg).get("state") != "REMOVED":
    if time.time() > deadline:
        sys.exit("not REMOVED after 60s")
    time.sleep(0.1)
print("REMOVED", pg.id.hex())`

// Guarantee: a group removed while a create waits for it (as the cleanup of
// a killed earlier run removes the group the relaunched run adopted) is
// created again; the create ends as it would have (here: never fits) rather
// than with an internal error, and its failure cleanup leaves no group.
func TestAccDriverRecreatesGroupRemovedDuringWait(t *testing.T) {
	e := newAccEnv(t)
	spec := e.neverFits(20)
	name := spec.Groups[0].Name

	var mu sync.Mutex
	var phases []string
	removed := make(chan error, 1)
	var once sync.Once
	opts := RunOptions{PollInterval: 100 * time.Millisecond, OnProgress: func(p Progress) {
		mu.Lock()
		phases = append(phases, p.Phase)
		mu.Unlock()
		if p.Phase != "waiting" {
			return
		}
		once.Do(func() {
			go func() {
				out, err := exec.Command(testSidePython(), "-c", removeOutOfBandScript, testGCSAddress(), e.ns, name).CombinedOutput()
				if err != nil {
					err = errors.New(string(out))
				}
				t.Logf("out of band: %s", out)
				removed <- err
			}()
		})
	}}
	_, err := Run(context.Background(), e.client, e.python, spec, opts)
	mu.Lock()
	waited := slices.Contains(phases, "waiting")
	mu.Unlock()
	if !waited {
		t.Fatalf("the driver never reported waiting; err = %v", err)
	}
	if rerr := <-removed; rerr != nil {
		t.Fatalf("removing %s out of band: %v", name, rerr)
	}
	var de *DriverError
	if !errors.As(err, &de) || (de.Kind != KindTimeout && de.Kind != KindInfeasible) {
		t.Fatalf("err = %v, want the never-fitting group's timeout or infeasible error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(phases, "recreated") {
		t.Fatalf("phases %v: the removed group was not created again", phases)
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Fatalf("groups left after the failed create: %v", mapKeys(live))
	}
}
