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
	if got := b.String(); !strings.Contains(got, "plan of 50 vs 1** (steady): 2.25x wall") || !strings.Contains(got, "(target <= 2.5x): **met**") {
		t.Errorf("got %q", got)
	}
	b.Reset()
	wall[50] = 2 * time.Second
	PrintPlanScaleTarget(&b, "steady", wall, cpu)
	if got := b.String(); !strings.Contains(got, "5.00x wall") || !strings.Contains(got, "**not met**") {
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
	if got := b.String(); !strings.Contains(got, "1.200s = 3.00x the provider's plan of one") || !strings.Contains(got, "out of reach") {
		t.Errorf("got %q", got)
	}
	b.Reset()
	wall[50] = 1100 * time.Millisecond
	PrintPlanScaleFloor(&b, wall, map[int]time.Duration{50: 600 * time.Millisecond})
	if got := b.String(); !strings.Contains(got, "plugin's share now: 0.500s (10 ms each)") || !strings.Contains(got, "1.50x") || !strings.Contains(got, "leaves the plugin 0.400s for 50 instances (8.00 ms each)") || strings.Contains(got, "out of reach") {
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
