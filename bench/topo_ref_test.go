package bench

import (
	"fmt"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"os"
	"os/exec"
	"testing"
	"time"
)

// The Python reference and the Go functions agree on the synthetic inputs.
func TestTopologyRefOutputsMatch(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	rows, err := RunTopologyRef(python, t.TempDir(), []int{100, 1000}, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if !r.Match || r.Go <= 0 || r.Python <= 0 {
			t.Errorf("%s at %d nodes: match %t, go %v, python %v", r.Function, r.Nodes, r.Match, r.Go, r.Python)
		}
	}
	PrintTopologyRef(os.Stderr, rows)
}

// Go benchmarks of the exact topo-ref inputs, for profiling:
// go test -run '^$' -bench BenchmarkRef -cpuprofile cpu.out ./bench/
func BenchmarkRef(b *testing.B) {
	for _, n := range []int{10000} {
		in, err := NewRefInputs(n)
		if err != nil {
			b.Fatal(err)
		}
		seg, gpus := in.Segment, in.GPUs
		b.Run(fmt.Sprintf("select/nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := topology.SelectSegmentNodes(in.topo, seg, in.NumNodes); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("prepare/nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := topology.PrepareSegmentTopology(&seg, in.NumNodes, in.topo, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("sort/nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := topology.SortBundleIndicesByTopology(in.bundles, &seg, &gpus); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("feasibility/nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				topology.CheckPlacement(in.requests, in.capacity)
			}
		})
	}
}
