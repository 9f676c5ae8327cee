package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// flatHCL is a configuration with its alignment spaces folded, so that a
// check reads as the attribute a user writes.
func flatHCL(address, name string, s Shape) string {
	return strings.Join(strings.Fields(shapeHCL(address, name, s)), " ")
}

func shapeByKey(t *testing.T, key string) Shape {
	t.Helper()
	s, err := ShapesNamed(key)
	if err != nil || len(s) != 1 {
		t.Fatalf("ShapesNamed(%q) = %v, %v", key, s, err)
	}
	return s[0]
}

func TestShapesHCL(t *testing.T) {
	distinct := flatHCL("http://127.0.0.1:8460", "bench-1-distinct-r0", shapeByKey(t, "distinct"))
	for _, want := range []string{`resource "ray_virtual_cluster" "spread" {`, `name = "bench-1-distinct-r0-spread-${count.index}"`,
		`node_resource_constraints = [{ "nvlink_domain_${element(["rackA", "rackB", "rackC"], count.index)}" = 0.001 }]`,
		`count = 12`, `port_range_low = 3000 + count.index * 10`, `port_range_high = 3010 + count.index * 10`,
		`address = "http://127.0.0.1:8460"`} {
		if !strings.Contains(distinct, want) {
			t.Errorf("distinct shape lacks %q:\n%s", want, distinct)
		}
	}
	if single := flatHCL("x", "n", shapeByKey(t, "distinct").Single()); !strings.Contains(single, "count = 1 ") {
		t.Errorf("the single cluster is not count = 1:\n%s", single)
	}
	shared := flatHCL("x", "n", shapeByKey(t, "shared"))
	if !strings.Contains(shared, `node_resource_constraints = [{ "nvlink_domain_rackA" = 0.001 }]`) {
		t.Errorf("shared shape is not pinned to one node:\n%s", shared)
	}
	nemo := flatHCL("x", "n", shapeByKey(t, "nemo"))
	for _, want := range []string{`name = "n-policy" bundle_ct_per_node_list = [4, 4] use_unified_pg = true placement_group_strategy = "PACK" port_range_low = 3000 port_range_high = 3010`,
		`name = "n-inference" bundle_ct_per_node_list = [2, 2] port_range_low = 3010`, `name = "n-teacher" bundle_ct_per_node_list = [4] port_range_low = 3020`,
		`name = "n-reward" bundle_ct_per_node_list = [1] port_range_low = 3030 port_range_high = 3040`} {
		if !strings.Contains(nemo, want) {
			t.Errorf("NeMo-RL set lacks %q:\n%s", want, nemo)
		}
	}
	if strings.Contains(nemo, "count") || strings.Contains(nemo, "node_resource_constraints") {
		t.Errorf("the NeMo-RL set declares one cluster per role, placed by Ray:\n%s", nemo)
	}
	if single := flatHCL("x", "n", shapeByKey(t, "nemo").Single()); strings.Count(single, "resource ") != 1 || !strings.Contains(single, `"n-policy"`) {
		t.Errorf("the set's single cluster is its policy:\n%s", single)
	}
}

func TestShapesSizesAndNames(t *testing.T) {
	for key, want := range map[string][4]int{"distinct": {12, 12, 1, 1}, "shared": {12, 12, 1, 1}, "four": {4, 16, 1, 4}, "nemo": {4, 17, 1, 8}} {
		s := shapeByKey(t, key)
		if got := [4]int{s.Clusters(), s.Bundles(), s.Single().Clusters(), s.Single().Bundles()}; got != want {
			t.Errorf("%s: clusters, bundles, single's = %v, want %v", key, got, want)
		}
	}
	if ShapesAll != "distinct,shared,four,nemo" {
		t.Errorf("ShapesAll = %q", ShapesAll)
	}
	if s, err := ShapesNamed("nemo, shared"); err != nil || len(s) != 2 || s[0].Key != "shared" {
		t.Errorf("ShapesNamed keeps Shapes' order: %v, %v", s, err)
	}
	if _, err := ShapesNamed("shared,round"); err == nil {
		t.Error("an unknown shape is an error")
	}
	if got := (ShapesConfig{}).parallelism(12); got != 12 {
		t.Errorf("12 clusters at once: -parallelism=%d", got)
	}
	if got := (ShapesConfig{}).parallelism(1); got != terraformParallelism {
		t.Errorf("one cluster: Terraform's default, got %d", got)
	}
	if got := (ShapesConfig{Parallelism: 10}).parallelism(12); got != 10 {
		t.Errorf("-shapes-parallelism 10: got %d", got)
	}
}

// shapesNodeRE is a row of ray-cluster.sh's node tables.
var shapesNodeRE = regexp.MustCompile(`^\s*"(\S+)\s+(yes|no)\s+(\d+)\s+(\d+)\s+(\{.*\})"$`)

// The shapes fit the shapes node table scripts/bench.sh starts: every node
// of ShapesDomains holds ShapesNodeGPUs GPUs and as many CPUs, and no
// shape pins more bundles to one node than it holds.
func TestShapesFitTheirNodeTable(t *testing.T) {
	raw, err := os.ReadFile("../scripts/ray-cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n  shapes)\n")
	table, _, _ = strings.Cut(table, ";;")
	if !ok {
		t.Fatal("scripts/ray-cluster.sh has no shapes node table")
	}
	var domains []string
	for _, l := range strings.Split(table, "\n") {
		m := shapesNodeRE.FindStringSubmatch(l)
		if m == nil || m[4] == "0" {
			continue
		}
		var res map[string]float64
		if err := json.Unmarshal([]byte(strings.ReplaceAll(m[5], `\"`, `"`)), &res); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		for k := range res {
			if d, ok := strings.CutPrefix(k, topology.NVLinkDomainPrefix); ok {
				domains = append(domains, d)
			}
		}
		if cpus, _ := strconv.Atoi(m[3]); m[4] != strconv.Itoa(ShapesNodeGPUs) || cpus < ShapesNodeGPUs || m[2] != "yes" {
			t.Errorf("node %s: %s CPUs, %s GPUs, boot %s; want %d of each, booted", m[1], m[3], m[4], m[2], ShapesNodeGPUs)
		}
	}
	if !slices.Equal(domains, ShapesDomains) {
		t.Errorf("the table's GPU nodes are in domains %v, want one node in each of %v", domains, ShapesDomains)
	}
	for _, s := range Shapes {
		if s.Bundles() > len(ShapesDomains)*ShapesNodeGPUs {
			t.Errorf("%s: %d bundles on %d GPUs", s.Name, s.Bundles(), len(ShapesDomains)*ShapesNodeGPUs)
		}
		for _, b := range s.Blocks {
			if len(b.Domains) > 0 && (b.clusters()+len(b.Domains)-1)/len(b.Domains)*b.Counts[0] > ShapesNodeGPUs {
				t.Errorf("%s: %s pins more than %d bundles to one node", s.Name, b.Role, ShapesNodeGPUs)
			}
		}
	}
}

// shapeSample is one pair of runs, each command split when jobs is 1.
func shapeSample(apply, apply1, plan, plan1, destroy, destroy1 float64, jobs int) ShapeSample {
	run := func(a, p, d float64, jobs int) ShapeRun {
		cmd := func(wall float64) CLIPhases {
			w := time.Duration(wall * float64(time.Second))
			return CLIPhases{Wall: w, Jobs: jobs, CLIStart: w / 4, Job: Phases{Total: w / 2, Probe: w / 2}}
		}
		return ShapeRun{Apply: cmd(a), Destroy: cmd(d), Plan: PlanTimes{Wall: time.Duration(p * float64(time.Second))}, PlanCalls: 2,
			Nodes: 3}
	}
	return ShapeSample{Shape: run(apply, plan, destroy, jobs), Single: run(apply1, plan1, destroy1, 1)}
}

func TestPrintShapes(t *testing.T) {
	row := &ShapeRow{Shape: shapeByKey(t, "four"), Samples: []ShapeSample{
		shapeSample(9, 4, 2, 2, 3, 2, 1), shapeSample(10, 4, 3, 2, 4, 2, 2), shapeSample(12, 5, 3, 2, 4, 2, 1)}}
	row.Samples[1].Left = RaceLeft{Groups: 1, JobRecords: 3}
	var out bytes.Buffer
	PrintShapes(&out, []*ShapeRow{row, {Shape: shapeByKey(t, "nemo")}}, "terraform")
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		// apply 2.25x, 2.5x, 2.4x; destroy 1.5x, 2x, 2x: the median apply ratio is over 2x.
		"| 4 x 4 bundles | 4 | 16 | four [4] | 3 | 9.000 / 10.000 / 12.000 | 4.000 / 4.000 / 5.000 | 2.40 (2.25-2.50) |",
		"| 2.00 (1.50-2.00) | <= 2x | not met (apply) | 3, 3 | 1, 1 | 1, 0, 0, 0 | 3 |",
		"| 4 x 4 bundles | 2.000 / 3.000 / 3.000 | 2.000 / 2.000 / 2.000 | 1.50 (1.00-1.50) | <= 1.5x | met |",
		// the two one-job repetitions split: CLI start = wall / 4, probes = wall / 2
		"| 4 x 4 bundles | apply | 4 clusters | 2 | 2.625 | 0.000 | 0.000 | 5.250 |",
		"| 4 x 4 bundles | apply | single | 3 | 1.000 | 0.000 | 0.000 | 2.000 |",
		"| 4 x 4 bundles | apply | added | 2 | 1.625 |",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(flat, "NeMo-RL set") {
		t.Errorf("a shape without samples has no row:\n%s", out.String())
	}
	if w := worstLeft([]ShapeSample{{Left: RaceLeft{Claims: 2}}, {Left: RaceLeft{Groups: 1, Err: errors.New("x")}}}); w.Claims != 2 ||
		w.Groups != 1 || w.Err == nil {
		t.Errorf("worstLeft = %+v", w)
	}
}
