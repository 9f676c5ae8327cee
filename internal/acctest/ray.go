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
