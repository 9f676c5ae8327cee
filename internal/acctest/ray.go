package acctest

import (
	"context"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// RemoveGroupsOutOfBand removes placement groups behind Terraform's back, the
// way an operator would, through a Ray job of the embedded driver.
func RemoveGroupsOutOfBand(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := vcluster.DeleteRequest(vcluster.DefaultNamespace, names...)
	res, err := driver.Run(ctx, Client(t), vcluster.DefaultPythonExecutable, spec, driver.RunOptions{})
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
	var groups []vcluster.GroupRequest
	for _, n := range names {
		groups = append(groups, vcluster.GroupRequest{Name: n, Bundles: []topology.Resources{{"CPU": 1, "GPU": 1}}})
	}
	spec := vcluster.NewRequest(vcluster.ActionCreate, vcluster.DefaultNamespace, groups, true, topology.PortRange{}, time.Minute)
	if _, err := driver.Run(ctx, Client(t), vcluster.DefaultPythonExecutable, spec, driver.RunOptions{}); err != nil {
		t.Fatalf("creating %v out of band: %v", names, err)
	}
}
