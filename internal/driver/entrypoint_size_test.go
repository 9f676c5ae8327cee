package driver

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// maxArgBytes is Linux's limit on one argument (MAX_ARG_STRLEN): the job
// supervisor runs the whole entrypoint as the one argument of `sh -c`.
const maxArgBytes = 128 << 10

// A create of 2,048 x 8 bundles (16,384, the largest RL runs), unified and
// per node, fits in one argument with room to spare.
func TestEntrypointFitsOneArgumentAt16384Bundles(t *testing.T) {
	counts := make([]int, 2048)
	for i := range counts {
		counts[i] = 8
	}
	for _, unified := range []bool{true, false} {
		spec := clusterspec.Spec{Name: "scale", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: 8,
			MaxColocatedWorkerGroups: 1, UseUnifiedPG: unified}.WithDefaults()
		template := record.NewManifest(spec, "owner", "test", record.Placement{})
		ep, err := Entrypoint("python", contract.RequestFor(spec, contract.ActionCreate).Owned(spec, "owner", false, &template))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("unified=%v: entrypoint %d bytes", unified, len(ep))
		if len(ep) > maxArgBytes/2 {
			t.Fatalf("unified=%v: the entrypoint is %d bytes; one argument holds at most %d", unified, len(ep), maxArgBytes)
		}
	}
}
