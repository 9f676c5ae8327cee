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
			fmt.Fprintf(os.Stderr, ">> a 2,048 x 8 unified ray_virtual_cluster planned against %d nodes, then with select_nodes\n", nodes)
			var rows []*bench.ClusterPlanResult
			for _, selectNodes := range []bool{false, true} {
				cp, err := bench.RunClusterPlan(context.Background(), terraform, abs, nodes, 2048, 8, selectNodes, planReps, os.Stderr)
				rows = append(rows, cp)
				if err != nil {
					bench.PrintClusterPlan(os.Stdout, rows...)
					fmt.Fprintln(os.Stderr, "raybench topoplan:", err)
					return 1
				}
			}
			bench.PrintClusterPlan(os.Stdout, rows...)
		}
	}
	fmt.Printf("load average at the end: %s\n\n", loadAvg())
	return 0
}

// runPlan50 runs part plan50 (no Ray: the stand-in dashboard) with OpenTofu
// (-tofu), as part 2 does, and profiles both plugins.
func runPlan50(o *options) int {
	counts, err := intList(o.plan50Counts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench:", err)
		return 2
	}
	abs, _ := filepath.Abs(o.outDir)
	ctx := context.Background()
	start := time.Now()
	res, err := bench.RunPlan50(ctx, bench.Plan50Config{CLI: o.tofuBin, Dir: abs, Counts: counts, GroupsPerCluster: o.groupsPer,
		Reps: o.plan50Reps, Profile: true, Log: os.Stderr})
	fmt.Printf("## 2b. Plans of many clusters against a minimal provider (plan50, %s)\n\n", time.Since(start).Round(time.Second))
	bench.PrintPlan50(os.Stdout, res)
	bench.PrintProfiles(ctx, os.Stdout, res, 40)
	fmt.Printf("load average at the end: %s\n\n", loadAvg())
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench plan50:", err)
		return 1
	}
	return 0
}
