package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	for key, want := range map[string][4]int{"distinct": {12, 12, 1, 1}, "shared": {12, 12, 1, 1}, "four": {4, 16, 1, 4}, "nemo": {4, 17, 1, 8},
		"placed": {12, 12, 1, 1}} {
		s := shapeByKey(t, key)
		if got := [4]int{s.Clusters(), s.Bundles(), s.Single().Clusters(), s.Single().Bundles()}; got != want {
			t.Errorf("%s: clusters, bundles, single's = %v, want %v", key, got, want)
		}
	}
	if ShapesAll != "distinct,shared,four,nemo,placed" {
		t.Errorf("ShapesAll = %q", ShapesAll)
	}
	if s, err := ShapesNamed("nemo, shared"); err != nil || len(s) != 2 || s[0].Key != "shared" {
		t.Errorf("ShapesNamed keeps Shapes' order: %v, %v", s, err)
	}
	if _, err := ShapesNamed("shared,round"); err == nil {
		t.Error("an unknown shape is an error")
	}
	all, _ := ShapesNamed(ShapesAll)
	if got := ShapesTables(all); !slices.Equal(got, []string{ShapesTable, ShapesSmallTable}) {
		t.Errorf("ShapesTables = %v", got)
	}
	if got := ShapesOn(all, ShapesSmallTable); len(got) != 1 || got[0].Key != "placed" || len(ShapesOn(all, "")) != len(all) {
		t.Errorf("ShapesOn(gpu2x7) = %v", got)
	}
}

// Every shape runs with all its clusters at once; with DefaultRows the
// 12-cluster shapes run at Terraform's default -parallelism too, reported.
func TestShapeRowsParallelism(t *testing.T) {
	shapes := []Shape{shapeByKey(t, "placed"), shapeByKey(t, "four")}
	var got []string
	for _, r := range shapeRows(ShapesConfig{Shapes: shapes, DefaultRows: true}) {
		got = append(got, fmt.Sprintf("%s @%d judged=%v", r.Name(), r.parallelism(), r.Judged()))
	}
	want := []string{"12 x 1, placed by Ray on 2-GPU nodes @12 judged=true",
		"12 x 1, placed by Ray on 2-GPU nodes, -parallelism=10 @10 judged=false", "4 x 4 bundles @10 judged=true"}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rows := shapeRows(ShapesConfig{Shapes: shapes}); len(rows) != 2 {
		t.Errorf("without DefaultRows: %d rows", len(rows))
	}
	if rows := shapeRows(ShapesConfig{Shapes: shapes, DefaultRows: true, Parallelism: 10}); len(rows) != 2 || rows[0].parallelism() != 10 {
		t.Errorf("-shapes-parallelism 10 runs every shape at 10 once: %d rows", len(rows))
	}
	placed := flatHCL("x", "n", shapes[0])
	if strings.Contains(placed, "node_resource_constraints") || strings.Contains(placed, "select_nodes") ||
		!strings.Contains(placed, "count = 12") || !strings.Contains(placed, "port_range_low = 3000 + count.index * 10") {
		t.Errorf("the placed shape is twelve clusters Ray places, each its own ports:\n%s", placed)
	}
}

// shapesNodeRE is a row of ray-cluster.sh's node tables.
var shapesNodeRE = regexp.MustCompile(`^\s*"(\S+)\s+(yes|no)\s+(\d+)\s+(\d+)\s+(\{.*\})"$`)

// nodeTable is the body of one node table of scripts/ray-cluster.sh.
func nodeTable(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../scripts/ray-cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n  "+name+")\n")
	table, _, _ = strings.Cut(table, ";;")
	if !ok {
		t.Fatalf("scripts/ray-cluster.sh has no %s node table", name)
	}
	return table
}

// tableGPUs are the GPUs of each booted GPU node of a node table.
func tableGPUs(t *testing.T, table string) []int {
	var gpus []int
	for _, l := range strings.Split(table, "\n") {
		if m := shapesNodeRE.FindStringSubmatch(l); m != nil && m[4] != "0" && m[2] == "yes" {
			n, _ := strconv.Atoi(m[4])
			cpus, _ := strconv.Atoi(m[3])
			if cpus < n {
				t.Errorf("node %s: %d CPUs for %d GPUs (every bundle holds a CPU)", m[1], cpus, n)
			}
			gpus = append(gpus, n)
		}
	}
	return gpus
}

// The placed shape runs where Ray must spread it: six or more 2-GPU nodes,
// room for every bundle.
func TestShapesSmallTable(t *testing.T) {
	gpus := tableGPUs(t, nodeTable(t, ShapesSmallTable))
	total := 0
	for _, g := range gpus {
		total += g
		if g != 2 {
			t.Errorf("a %s node holds %d GPUs, want 2", ShapesSmallTable, g)
		}
	}
	if s := shapeByKey(t, "placed"); len(gpus) < 6 || s.Bundles() > total || s.Table != ShapesSmallTable {
		t.Errorf("%d nodes, %d GPUs for %d bundles", len(gpus), total, s.Bundles())
	}
}

// The shapes fit the shapes node table scripts/bench.sh starts: every node
// of ShapesDomains holds ShapesNodeGPUs GPUs and as many CPUs, and no
// shape pins more bundles to one node than it holds.
func TestShapesFitTheirNodeTable(t *testing.T) {
	table := nodeTable(t, ShapesTable)
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
	for _, s := range ShapesOn(Shapes, ShapesTable) {
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
	shared := &ShapeRow{Shape: shapeByKey(t, "shared"), Parallelism: 10, Samples: []ShapeSample{shapeSample(3, 2, 1, 1, 1, 1, 2)}}
	PrintShapes(&out, []*ShapeRow{row, {Shape: shapeByKey(t, "nemo")}, shared}, "terraform")
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{
		// apply 2.25x, 2.5x, 2.4x; destroy 1.5x, 2x, 2x: both medians over their targets.
		"| 4 x 4 bundles | 4 | 16 | four [4] | 3 | 9.000 / 10.000 / 12.000 | 4.000 / 4.000 / 5.000 | 2.40 (2.25-2.50) |",
		"| 2.00 (1.50-2.00) | <= 1.5x, 1.2x | not met (apply, destroy) | 3, 3 | 1, 1 | 1, 0, 0, 0 | 3 |",
		"| 4 x 4 bundles | 2.000 / 3.000 / 3.000 | 2.000 / 2.000 / 2.000 | 1.50 (1.00-1.50) | 0.000, 0.000 | 2, 2 |",
		// a row at Terraform's default -parallelism is reported, not judged
		"| 12 x 1, shared node, -parallelism=10 | 12 | 12 | packed [1] | 1 | 3.000 / 3.000 / 3.000 | 2.000 / 2.000 / 2.000 | 1.50 (1.50-1.50) | 1.000 / 1.000 / 1.000 | 1.000 / 1.000 / 1.000 | 1.00 (1.00-1.00) | - | reported |",
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
