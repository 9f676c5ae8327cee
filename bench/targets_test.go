package bench

import (
	"strings"
	"testing"
	"time"
)

func TestPrintPlanScaleTarget(t *testing.T) {
	var b strings.Builder
	wall := map[int]time.Duration{1: 400 * time.Millisecond, 10: 600 * time.Millisecond, 50: 900 * time.Millisecond}
	cpu := map[int]time.Duration{1: 300 * time.Millisecond, 50: 1200 * time.Millisecond}
	PrintPlanScaleTarget(&b, "steady", wall, cpu)
	if got := b.String(); !strings.Contains(got, "plan of 50 vs 1** (steady): 2.25x wall") || !strings.Contains(got, "(reported, no target)") ||
		strings.Contains(got, "met") {
		t.Errorf("got %q", got)
	}
	b.Reset()
	PrintPlanScaleTarget(&b, "steady", map[int]time.Duration{1: time.Second}, cpu)
	if b.Len() != 0 {
		t.Errorf("printed without a 50-cluster plan: %q", b.String())
	}
}

func TestPrintPlanScaleFloor(t *testing.T) {
	var b strings.Builder
	wall := map[int]time.Duration{1: 400 * time.Millisecond}
	PrintPlanScaleFloor(&b, wall, map[int]time.Duration{50: 1200 * time.Millisecond})
	if got := b.String(); !strings.Contains(got, "1.200s = 3.00x the provider's plan of one") || strings.Contains(got, "share") {
		t.Errorf("got %q", got)
	}
	b.Reset()
	wall[50] = 1100 * time.Millisecond
	PrintPlanScaleFloor(&b, wall, map[int]time.Duration{50: 600 * time.Millisecond})
	if got := b.String(); !strings.Contains(got, "plugin's share: 0.500s (10 ms each)") || !strings.Contains(got, "1.50x") {
		t.Errorf("got %q", got)
	}
	b.Reset()
	PrintPlanScaleFloor(&b, wall, map[int]time.Duration{10: time.Second})
	if b.Len() != 0 {
		t.Errorf("printed without a 50-instance floor: %q", b.String())
	}
}

func TestPrintTopoPlanTarget(t *testing.T) {
	sample := func(wall time.Duration) TopoPlanSample { return TopoPlanSample{Plan: wall, PlanCPU: wall} }
	results := []TopoPlanResult{
		{Nodes: 1000, Samples: []TopoPlanSample{sample(time.Second)}},
		{Nodes: TopoPlanNodes, Case: TopoPlanCase{HCL: "  include_nodes = true\n"}, Samples: []TopoPlanSample{sample(9 * time.Second)}},
		{Nodes: TopoPlanNodes, Samples: []TopoPlanSample{sample(1100 * time.Millisecond), sample(1300 * time.Millisecond), sample(1000 * time.Millisecond)}},
	}
	var b strings.Builder
	PrintTopoPlanTarget(&b, results)
	if got := b.String(); !strings.Contains(got, "10,000-node data source plan** (`data \"ray_cluster_topology\" \"t\" {}`): 1.10 s wall (1.00-1.30") ||
		!strings.Contains(got, "(target <= 1.2 s): **met**") {
		t.Errorf("got %q", got)
	}
	if thousands(1234567) != "1,234,567" || thousands(100) != "100" {
		t.Errorf("thousands: %s %s", thousands(1234567), thousands(100))
	}
}

// Part plan50's lines: what each instance past the first costs ours against
// the minimal provider, and both plan-of-50 ratios.
func TestPrintPlan50(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	res := &Plan50Result{CLIVersion: "OpenTofu v1.12.6", Rows: []Plan50Row{
		{Clusters: 1, Reps: 3, Ours: PlanTimes{ms(200), ms(180)}, Minimal: PlanTimes{ms(190), ms(170)}, Floor: PlanTimes{ms(60), ms(50)}},
		{Clusters: 50, Reps: 3, Ours: PlanTimes{ms(200 + 49*30), ms(180 + 49*20)}, Minimal: PlanTimes{ms(190 + 49*20), ms(170 + 49*20)},
			Floor: PlanTimes{ms(60 + 49*10), ms(50 + 49*9)}},
	}}
	var b strings.Builder
	PrintPlan50(&b, res)
	got := b.String()
	for _, want := range []string{
		"**per instance, ours vs minimal**: 30 ms vs 20 ms wall = 1.50x (CPU 20 vs 20 ms) (target <= 1.1x): **not met**",
		"plan of 50 vs 1** (steady state, \"No changes\"): 8.35x wall", "(reported, no target)",
		"the minimal provider's own plan of 50 vs 1** (the floor of any framework provider with this schema): 6.16x wall",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if PerInstance(ms(100), ms(100), 1) != 0 {
		t.Error("one cluster has no instance past the first")
	}
}

// A contending row meets issue 53's bound only with every apply ok and
// nothing left in Ray.
func TestContentionVerdict(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		ok, n int
		clean bool
		want  string
	}{
		{1.3, 6, 6, true, "met"}, {1.31, 6, 6, true, "not met"}, {1.1, 5, 6, true, "not met (1 of 6 applies failed)"},
		{1.1, 6, 6, false, "not met (Ray still holds what the row made)"}, {0, 6, 6, true, "-"},
	} {
		if got := ContentionVerdict(tc.ratio, tc.ok, tc.n, tc.clean); got != tc.want {
			t.Errorf("ContentionVerdict(%v, %d, %d, %v) = %q, want %q", tc.ratio, tc.ok, tc.n, tc.clean, got, tc.want)
		}
	}
	if ShapesApplyTarget != 1.5 || ShapesDestroyTarget != 1.2 || ContentionTarget != 1.3 {
		t.Errorf("issue 53's targets: %v %v %v", ShapesApplyTarget, ShapesDestroyTarget, ContentionTarget)
	}
}
