package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ray-infra/terraform-provider-ray/bench"
)

// runOffline runs the parts that need no Ray cluster: topo-ref (Go vs the
// Python reference maths) and topoplan (the topology data source against
// the stand-in dashboard).
func runOffline(part, python, outDir, refSizes string, refTime time.Duration, planNodes string, planReps int, terraform string) int {
	abs, _ := filepath.Abs(outDir)
	switch part {
	case "topo-ref":
		sizes, err := intList(refSizes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		fmt.Fprintf(os.Stderr, ">> topology maths: Go vs Python reference at %v nodes\n", sizes)
		rows, err := bench.RunTopologyRef(python, abs, sizes, refTime, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench topo-ref:", err)
			return 1
		}
		fmt.Printf("## 3b. Topology maths, Go vs the Python reference\n\n")
		bench.PrintTopologyRef(os.Stdout, rows)
	case "topoplan":
		sizes, err := intList(planNodes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		fmt.Fprintf(os.Stderr, ">> topology data source against the stand-in dashboard at %v nodes\n", sizes)
		start := time.Now()
		res, err := bench.RunTopoPlan(context.Background(), bench.TopoPlanConfig{Terraform: terraform, Dir: abs, Sizes: sizes,
			Cases: bench.DefaultTopoPlanCases, Reps: planReps, Log: os.Stderr})
		fmt.Printf("## 4. Plans at frontier scale (%s)\n\n", time.Since(start).Round(time.Second))
		bench.PrintTopoPlan(os.Stdout, res)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench topoplan:", err)
			return 1
		}
		if terraform != "" && len(sizes) > 0 {
			nodes := sizes[len(sizes)-1]
			fmt.Fprintf(os.Stderr, ">> a 2,048 x 8 unified ray_virtual_cluster planned against %d nodes\n", nodes)
			cp, err := bench.RunClusterPlan(context.Background(), terraform, abs, nodes, 2048, 8, planReps, os.Stderr)
			bench.PrintClusterPlan(os.Stdout, cp)
			if err != nil {
				fmt.Fprintln(os.Stderr, "raybench topoplan:", err)
				return 1
			}
		}
	}
	fmt.Printf("load average at the end: %s\n\n", loadAvg())
	return 0
}
