package acctest

import (
	"context"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
)

// RemoveGroupsOutOfBand removes placement groups behind Terraform's back, the
// way an operator would, through a Ray job of the embedded driver.
func RemoveGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := driver.Spec{Action: "delete", Namespace: resources.DefaultNamespace}
	for _, n := range names {
		spec.Groups = append(spec.Groups, driver.Group{Name: n})
	}
	res, err := driver.Run(ctx, Client(t), resources.DefaultPythonExecutable, spec, driver.RunOptions{})
	if err != nil {
		t.Fatalf("removing %v out of band: %v", names, err)
	}
	t.Logf("removed out of band: %v (already gone: %v)", res.Removed, res.Missing)
}

// CreateGroupsOutOfBand makes per-node style groups (one {CPU:1, GPU:1}
// bundle each, PACK) behind Terraform's back, for import tests.
func CreateGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec := driver.Spec{Action: "create", Namespace: resources.DefaultNamespace, ReadyTimeoutSeconds: 60,
		Probe: driver.Probe{UseGPUs: true}}
	for _, n := range names {
		spec.Groups = append(spec.Groups, driver.Group{Name: n, Strategy: "PACK",
			Bundles: []map[string]float64{{"CPU": 1, "GPU": 1}}})
	}
	if _, err := driver.Run(ctx, Client(t), resources.DefaultPythonExecutable, spec, driver.RunOptions{}); err != nil {
		t.Fatalf("creating %v out of band: %v", names, err)
	}
}
