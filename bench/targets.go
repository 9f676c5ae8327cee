package bench

import (
	"fmt"
	"io"
	"time"
)

// What the plan parts report and check: a plan of many clusters against a
// plan of one (reported: most of it is the CLI's own cost per instance; the
// plan's target is per instance, PerInstanceTarget), and the 10,000-node
// data source (a target).
const (
	// PlanScaleClusters is the many of the plan-of-many rows.
	PlanScaleClusters = 50
	// TopoPlanTarget is the most `terraform plan` of the data source may
	// take at TopoPlanNodes alive nodes (wall).
	TopoPlanTarget = 1200 * time.Millisecond
	TopoPlanNodes  = 10000
)

// Issue 53's targets of the many-clusters parts. Each is the most a median
// (shapes) or p95 (contention) may be against its own baseline of the same
// run.
const (
	// ShapesApplyTarget and ShapesDestroyTarget bound a shape's apply and
	// destroy against its single cluster's (median of the paired ratios),
	// at a -parallelism of at least the shape's clusters (part 7).
	ShapesApplyTarget   = 1.5
	ShapesDestroyTarget = 1.2
	// ContentionTarget bounds the p95 apply of N states that contend
	// (racing, or half select_nodes and half placed by Ray) against the p95
	// of N that do not, started at the same moment (part 6).
	ContentionTarget = 1.3
)

// ContentionVerdict judges a contending row's p95 against the apart row's
// of the same N: every apply must succeed, nothing be left in Ray, and the
// ratio stay within ContentionTarget. ok counts successful applies of n.
func ContentionVerdict(ratio float64, ok, n int, clean bool) string {
	switch {
	case ok < n:
		return fmt.Sprintf("not met (%d of %d applies failed)", n-ok, n)
	case !clean:
		return "not met (Ray still holds what the row made)"
	case ratio <= 0:
		return "-"
	}
	return Verdict(ratio <= ContentionTarget)
}

// Verdict is "met" or "not met".
func Verdict(met bool) string {
	if met {
		return "met"
	}
	return "not met"
}

// PrintPlanScaleTarget prints the plan-of-many line from plan wall times
// by cluster count (the first count is the one-cluster plan), reported
// without a target, or nothing when the counts do not include 1 and
// PlanScaleClusters.
func PrintPlanScaleTarget(out io.Writer, label string, wall, cpu map[int]time.Duration) {
	one, many := wall[1], wall[PlanScaleClusters]
	if one <= 0 || many <= 0 {
		return
	}
	fmt.Fprintf(out, "**plan of %d vs 1** (%s): %.2fx wall (%ss vs %ss; CPU %ss vs %ss = %.2fx) (reported, no target)\n\n",
		PlanScaleClusters, label, float64(many)/float64(one), Sec(many), Sec(one), Sec(cpu[PlanScaleClusters]), Sec(cpu[1]),
		float64(cpu[PlanScaleClusters])/float64(max(1, cpu[1])))
}

// PrintTopoPlanTarget prints the data-source target line: the median plan
// wall of the default configuration at TopoPlanNodes, or nothing when that
// case was not planned.
func PrintTopoPlanTarget(out io.Writer, results []TopoPlanResult) {
	for _, r := range results {
		if r.Nodes != TopoPlanNodes || r.Case.HCL != "" || len(r.Samples) == 0 || r.Samples[0].Plan == 0 {
			continue
		}
		var wall, cpu []time.Duration
		for _, s := range r.Samples {
			wall, cpu = append(wall, s.Plan), append(cpu, s.PlanCPU)
		}
		lo, hi := MinMax(wall)
		fmt.Fprintf(out, "**%s-node data source plan** (`data %q \"t\" {}`): %.2f s wall (%.2f-%.2f, CPU %.2f s) (target <= %.1f s): **%s**\n\n",
			thousands(TopoPlanNodes), TopologyDataSource, Median(wall).Seconds(), lo.Seconds(), hi.Seconds(), Median(cpu).Seconds(),
			TopoPlanTarget.Seconds(), Verdict(Median(wall) <= TopoPlanTarget))
		return
	}
}

// thousands renders n with comma separators (10000 -> "10,000").
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// PrintPlanScaleFloor reports the CLI's own share of the plan of many: the
// CLI alone (floor, no plugin) planning PlanScaleClusters instances'
// values, against the provider's plan of one, and what the plugin adds on
// top. Nothing is printed without both numbers.
func PrintPlanScaleFloor(out io.Writer, wall, floor map[int]time.Duration) {
	one, many := wall[1], floor[PlanScaleClusters]
	if one <= 0 || many <= 0 {
		return
	}
	share := ""
	if now := wall[PlanScaleClusters] - many; now > 0 {
		share = fmt.Sprintf("; the plugin's share: %ss (%s ms each)", Sec(now), Ms(now/PlanScaleClusters))
	}
	fmt.Fprintf(out, "**CLI floor of the plan of %d**: %ss = %.2fx the provider's plan of one%s\n\n",
		PlanScaleClusters, Sec(many), float64(many)/float64(one), share)
}
