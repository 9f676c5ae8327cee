package driver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// topologyCase is one node and topology source, as the driver's probe and
// Go's vcluster.TopologySource both read it.
type topologyCase struct {
	Source    vcluster.TopologySource `json:"source"`
	Resources map[string]float64      `json:"resources"`
	Labels    map[string]string       `json:"labels"`
}

// TestDriverTopologyMatchesGo runs driver.py's node_topology (with a stub
// ray) over the same nodes as vcluster.TopologySource.Node: the probe must
// report the domain and rank the plan selected by.
func TestDriverTopologyMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	labels := vcluster.TopologySource{DomainLabel: "raytf.io/nvlink-domain", RankLabel: "raytf.io/topo-rank"}
	res := map[string]float64{"CPU": 4, "nvlink_domain_rackB": 1, "nvlink_domain_rackA": 1, topology.TopoRankKey: 3.7}
	var cases []topologyCase
	for _, src := range []vcluster.TopologySource{{}, labels, {DomainLabel: labels.DomainLabel}, {RankLabel: labels.RankLabel}} {
		for _, l := range []map[string]string{
			nil, {}, {labels.DomainLabel: "rackZ", labels.RankLabel: "12"}, {labels.DomainLabel: "", labels.RankLabel: ""},
			{labels.RankLabel: "-1"}, {labels.RankLabel: "+4"}, {labels.RankLabel: " 4"}, {labels.RankLabel: "4.0"},
			{labels.RankLabel: "٣"}, {labels.RankLabel: "0004"}, {labels.RankLabel: "1234567890123456789"},
			{labels.RankLabel: "123456789012345678"},
		} {
			cases = append(cases, topologyCase{Source: src, Resources: res, Labels: l}, topologyCase{Source: src, Labels: l})
		}
	}
	input, _ := json.Marshal(map[string]any{"contract": vcluster.DriverContract(), "cases": cases})
	// driver.py ends by calling main(); the harness runs everything before it.
	body, _, ok := strings.Cut(string(driverSource), "\nmain()\n")
	if !ok {
		t.Fatal("driver.py no longer ends with main()")
	}
	harness := body + `
spec = json.loads(sys.stdin.read())
load_contract(spec["contract"])
out = []
for c in spec["cases"]:
    load_topology(c["source"])
    out.append(list(node_topology({"resources": c["resources"], "labels": c["labels"]})))
print(json.dumps(out))
`
	dir := writeRayStub(t)
	script := filepath.Join(dir, "harness.py")
	if err := os.WriteFile(script, []byte(harness), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
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
