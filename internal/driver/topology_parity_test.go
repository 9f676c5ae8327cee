package driver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// topologyCase is one node and topology source, as the driver's probe and
// Go's clusterspec.TopologySource both read it.
type topologyCase struct {
	Source    clusterspec.TopologySource `json:"source"`
	Resources map[string]float64         `json:"resources"`
	Labels    map[string]string          `json:"labels"`
}

// TestDriverTopologyMatchesGo runs the driver's node_topology (driverpy/nodes.py)
// over the same nodes as clusterspec.TopologySource.Node: the probe must
// report the domain and rank the plan selected by.
func TestDriverTopologyMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	labels := clusterspec.TopologySource{DomainLabel: "raytf.io/nvlink-domain", RankLabel: "raytf.io/topo-rank"}
	res := map[string]float64{"CPU": 4, "nvlink_domain_rackB": 1, "nvlink_domain_rackA": 1, topology.TopoRankKey: 3.7}
	var cases []topologyCase
	for _, src := range []clusterspec.TopologySource{{}, labels, {DomainLabel: labels.DomainLabel}, {RankLabel: labels.RankLabel}} {
		for _, l := range []map[string]string{
			nil, {}, {labels.DomainLabel: "rackZ", labels.RankLabel: "12"}, {labels.DomainLabel: "", labels.RankLabel: ""},
			{labels.RankLabel: "-1"}, {labels.RankLabel: "+4"}, {labels.RankLabel: " 4"}, {labels.RankLabel: "4.0"},
			{labels.RankLabel: "٣"}, {labels.RankLabel: "0004"}, {labels.RankLabel: "1234567890123456789"},
			{labels.RankLabel: "123456789012345678"},
		} {
			cases = append(cases, topologyCase{Source: src, Resources: res, Labels: l}, topologyCase{Source: src, Labels: l})
		}
	}
	input, _ := json.Marshal(map[string]any{"contract": contract.DriverContract(), "cases": cases})
	out := runDriverHarness(t, py, input, `
from driverpy.contract import Contract
from driverpy.nodes import node_topology
from driverpy.runstate import Run
spec = json.loads(sys.stdin.read())
run = Run()
run.contract = Contract.from_request(spec["contract"])
out = []
for c in spec["cases"]:
    run.topo = {k: c["source"].get(k) or "" for k in run.topo}
    out.append(list(node_topology(run, {"resources": c["resources"], "labels": c["labels"]})))
print(json.dumps(out))
`)
	var got [][2]any
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("driver output %s: %v", out, err)
	}
	for i, c := range cases {
		domain, rank := c.Source.Node(c.Resources, c.Labels)
		if got[i][0] != domain || got[i][1] != float64(rank) {
			t.Errorf("source %+v resources %v labels %v: driver says %v, Go (%q, %d)", c.Source, c.Resources, c.Labels, got[i], domain, rank)
		}
	}
}

// runDriverHarness runs harness with the driverpy package importable, with
// input on stdin (the functions compared here never call ray).
func runDriverHarness(t *testing.T, py string, input []byte, harness string) []byte {
	t.Helper()
	cmd := exec.Command(py, "-c", "import json, sys\n"+harness)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+driverPackageDir(t))
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return out
}

// rankOrderCase is one unified GPU cluster's probed bundles.
type rankOrderCase struct {
	Bundles   []map[string]any   `json:"bundles"`
	RankOrder contract.RankOrder `json:"rank_order"`
}

// TestDriverRankOrderMatchesGo: the record the driver writes in rank order
// must be in Go's order, or every unified create pays a second job to
// rewrite it. Random clusters with unknown domains and ranks, missing GPU
// ids, ties, and segments that do and do not trim.
func TestDriverRankOrderMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	cases := make([]rankOrderCase, 3000)
	for i := range cases {
		nodes, gpus := 1+rng.IntN(8), 1+rng.IntN(4)
		c := &cases[i]
		c.RankOrder.GPUsPerNode = gpus
		if rng.IntN(2) == 0 {
			seg := 1 + rng.IntN(3)
			c.RankOrder.SegmentSize = &seg
		}
		noTopology := rng.IntN(6) == 0
		for n := range nodes {
			domain := fmt.Sprintf("%sd%d", topology.NVLinkDomainPrefix, rng.IntN(3))
			rank := rng.IntN(6)
			if noTopology || rng.IntN(8) == 0 {
				domain, rank = topology.NVLinkDomainUnknown, topology.TopoRankUnknown
			}
			for range 1 + rng.IntN(gpus) {
				var gpu any = rng.IntN(gpus)
				if rng.IntN(10) == 0 {
					gpu = nil
				}
				c.Bundles = append(c.Bundles, map[string]any{"gpu_id": gpu, "nvlink_domain": domain, "topo_rank": rank,
					"node_id": fmt.Sprintf("node%02d", (n*7)%nodes)})
			}
		}
		rng.Shuffle(len(c.Bundles), func(a, b int) { c.Bundles[a], c.Bundles[b] = c.Bundles[b], c.Bundles[a] })
	}
	input, _ := json.Marshal(map[string]any{"contract": contract.DriverContract(), "cases": cases})
	out := runDriverHarness(t, py, input, `
from driverpy.contract import Contract
from driverpy.record import topology_order
from driverpy.runstate import Run
spec = json.loads(sys.stdin.read())
run = Run()
run.contract = Contract.from_request(spec["contract"])
print(json.dumps([topology_order(run, c["bundles"], c["rank_order"]) for c in spec["cases"]]))
`)
	var got [][]int
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("driver output %.200s: %v", out, err)
	}
	for i, c := range cases {
		in := make([]topology.Bundle, len(c.Bundles))
		for j, b := range c.Bundles {
			gpu := -1
			if g, ok := b["gpu_id"].(int); ok {
				gpu = g
			}
			in[j] = topology.Bundle{GPUID: gpu, Domain: b["nvlink_domain"].(string), TopoRank: b["topo_rank"].(int), NodeID: b["node_id"].(string)}
		}
		var gpus *int
		if c.RankOrder.SegmentSize != nil {
			gpus = &c.RankOrder.GPUsPerNode
		}
		want, _, err := topology.SortBundleIndicesByTopology(in, c.RankOrder.SegmentSize, gpus)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(want) != len(in) {
			want = nil // trimmed: the driver keeps natural order, Go reports an error
		}
		if fmt.Sprint(got[i]) != fmt.Sprint(want) {
			t.Fatalf("case %d (%+v): driver %v, Go %v", i, c, got[i], want)
		}
	}
}

// TestDriverMatchRuleMatchesGo runs the driver's amount comparison (driverpy/groups.py) over the
// vectors drift.SameAmount and SameResources are tested with
// (python/tests/testdata/live_match.json): a group the driver adopts as
// matching is one refresh finds no drift in.
func TestDriverMatchRuleMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "python", "tests", "testdata", "live_match.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct {
		Amounts []struct {
			A, B float64
			Same bool
		} `json:"amounts"`
		Resources []struct {
			A, B map[string]float64
			Same bool
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{"contract": contract.DriverContract(), "vectors": vectors})
	out := runDriverHarness(t, py, input, `
from driverpy.contract import Contract
from driverpy.groups import norm_bundle, same_amount, same_bundle
from driverpy.runstate import Run
spec = json.loads(sys.stdin.read())
run = Run()
run.contract = Contract.from_request(spec["contract"])
v = spec["vectors"]
print(json.dumps({
    "amounts": [same_amount(run, c["A"], c["B"]) and same_amount(run, c["B"], c["A"]) for c in v["amounts"]],
    "resources": [same_bundle(run, norm_bundle(c["A"]), norm_bundle(c["B"])) for c in v["resources"]],
}))
`)
	var got struct{ Amounts, Resources []bool }
	if err := json.Unmarshal(out, &got); err != nil || len(got.Amounts) != len(vectors.Amounts) || len(got.Resources) != len(vectors.Resources) {
		t.Fatalf("driver output %s: %v", out, err)
	}
	for i, c := range vectors.Amounts {
		if got.Amounts[i] != c.Same || drift.SameAmount(c.A, c.B) != c.Same {
			t.Errorf("amounts %v vs %v: driver %v, Go %v, want %v", c.A, c.B, got.Amounts[i], drift.SameAmount(c.A, c.B), c.Same)
		}
	}
	for i, c := range vectors.Resources {
		if got.Resources[i] != c.Same || drift.SameResources(c.A, c.B) != c.Same {
			t.Errorf("resources %v vs %v: driver %v, want %v", c.A, c.B, got.Resources[i], c.Same)
		}
	}
}

// TestDriverRecordMatchesGo: the record the driver writes after a create
// (Go's template plus the placement it observed, placed_record) is the one
// Go builds from the same result (record.NewManifest of NewPlacement),
// for per-node and unified GPU clusters.
func TestDriverRecordMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	seg := 1
	specs := []clusterspec.Spec{
		{Name: "pn", BundleCtPerNode: []int{2, 1}, UseGPUs: true, NumGPUsPerNode: 2, MaxColocatedWorkerGroups: 1},
		{Name: "un", BundleCtPerNode: []int{2, 2}, UseGPUs: true, NumGPUsPerNode: 2, MaxColocatedWorkerGroups: 1, UseUnifiedPG: true, SegmentSize: &seg},
	}
	type harnessCase struct {
		Own       contract.Ownership     `json:"own"`
		Groups    []contract.GroupResult `json:"groups"`
		RankOrder *contract.RankOrder    `json:"rank_order"`
	}
	var cases []harnessCase
	var want []record.Manifest
	for _, s := range specs {
		s = s.WithDefaults()
		res := &contract.Result{}
		node := 0
		for _, g := range s.Groups() {
			gr := contract.GroupResult{Name: g.Name, ID: "id-" + g.Name, State: "CREATED", Strategy: g.Strategy}
			for i := range g.Bundles {
				gpu := i % 2
				// Nodes in reverse rank order, so the unified cluster's order differs from its natural one.
				gr.Bundles = append(gr.Bundles, contract.BundleResult{Index: i, NodeID: fmt.Sprintf("n%d", node/2), NodeIP: fmt.Sprintf("10.0.0.%d", node/2),
					GPUID: &gpu, NVLinkDomain: "nvlink_domain_d" + fmt.Sprint(node/2), TopoRank: 9 - node/2, Port: 1400 + node})
				node++
			}
			res.Groups = append(res.Groups, gr)
		}
		p, issues := contract.NewPlacement(s, res)
		if clusterspec.HasError(issues) {
			t.Fatalf("%s: %v", s.Name, issues)
		}
		template := record.NewManifest(s, "owner", "test", record.Placement{})
		req := contract.RequestFor(s, contract.ActionCreate).Owned(s, "owner", false, &template)
		cases = append(cases, harnessCase{Own: *req.Ownership, Groups: res.Groups, RankOrder: req.RankOrder})
		want = append(want, record.NewManifest(s, "owner", "test", p))
	}
	input, _ := json.Marshal(map[string]any{"contract": contract.DriverContract(), "cases": cases})
	out := runDriverHarness(t, py, input, `
from driverpy.contract import Contract
from driverpy.record import placed_record
from driverpy.runstate import Run
spec = json.loads(sys.stdin.read())
run = Run()
run.contract = Contract.from_request(spec["contract"])
print(json.dumps([placed_record(run, c["own"], c["groups"], None, c["rank_order"]) for c in spec["cases"]]))
`)
	var got []record.Manifest
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(want) {
		t.Fatalf("driver output %s: %v", out, err)
	}
	for i := range want {
		got[i].CreatedAt, got[i].UpdatedAt = "", ""
		if diff := cmp.Diff(want[i], got[i]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", specs[i].Name, diff)
		}
	}
}
