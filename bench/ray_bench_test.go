package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// Go benchmarks against the live Ray cluster. Benchmarks never run under a
// plain `go test`, and these also skip unless TF_ACC=1 (and a dashboard
// answers at RAY_ADDRESS). The side-by-side comparison with the Python
// baseline is bench/cmd/raybench (scripts/bench.sh); these are for quick
// `go test -bench` checks of the provider path alone:
//
//	TF_ACC=1 go test -run '^$' -bench Ray -benchtime 3x ./bench/

func rayClient(b *testing.B) *rayclient.Client {
	b.Helper()
	if os.Getenv("TF_ACC") != "1" {
		b.Skip("needs a live Ray cluster: set TF_ACC=1 (see scripts/bench.sh)")
	}
	addr := os.Getenv("RAY_ADDRESS")
	if addr == "" {
		addr = "http://127.0.0.1:8265"
	}
	c, err := rayclient.New(rayclient.Config{Address: addr})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Version(ctx); err != nil {
		b.Skipf("no Ray dashboard at %s: %v", addr, err)
	}
	return c
}

// BenchmarkRayProviderApply is create + delete of a per-node GPU cluster
// through driver.Run with the resource's Spec, reporting the phases.
func BenchmarkRayProviderApply(b *testing.B) {
	c := rayClient(b)
	var id [3]byte
	_, _ = rand.Read(id[:])
	prefix := "bench-" + hex.EncodeToString(id[:])
	b.Cleanup(func() {
		if left, err := Sweep(c, nil, vcluster.DefaultPythonExecutable, vcluster.DefaultNamespace, prefix); len(left) > 0 || err != nil {
			b.Logf("swept %v (%v)", left, err)
		}
	})
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("groups=%d", n), func(b *testing.B) {
			ctx := context.Background()
			var probe, start, create, del time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := WaitForCapacity(ctx, c, float64(n), float64(n), 5*time.Minute, b.Logf); err != nil {
					b.Skip(err)
				}
				spec := PerNodeGPUCluster(fmt.Sprintf("%s-b%02d-%d", prefix, n, i), n)
				b.StartTimer()
				cr, err := RunProvider(ctx, c, vcluster.DefaultPythonExecutable,
					DriverSpec(vcluster.ActionCreate, vcluster.DefaultNamespace, spec, ReadyTimeout), spec, true, 0)
				if err != nil {
					b.Fatalf("create: %v", err)
				}
				dr, err := RunProvider(ctx, c, vcluster.DefaultPythonExecutable,
					DriverSpec(vcluster.ActionDelete, vcluster.DefaultNamespace, spec, ReadyTimeout), spec, false, 0)
				if err != nil {
					b.Fatalf("delete: %v", err)
				}
				probe += cr.Phases.Probe
				start += cr.Phases.JobStart + dr.Phases.JobStart
				create += cr.Phases.Total
				del += dr.Phases.Total
			}
			per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
			b.ReportMetric(per(create), "create-s/op")
			b.ReportMetric(per(del), "delete-s/op")
			b.ReportMetric(per(probe), "probe-s/op")
			b.ReportMetric(per(start), "jobstart-s/op")
		})
	}
}

// BenchmarkRayRefreshRead is one cluster's Read: ListLiveGroups plus the
// drift comparison, reporting HTTP calls per Read.
func BenchmarkRayRefreshRead(b *testing.B) {
	c := rayClient(b)
	spec := PerNodeCPUCluster("bench-read-nothing", 3)
	ctx := context.Background()
	before := c.RequestCount()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		live, err := vcluster.ListLiveGroups(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		CompareGroups(spec.Groups(), nil, live)
	}
	b.ReportMetric(float64(c.RequestCount()-before)/float64(b.N), "calls/op")
}
