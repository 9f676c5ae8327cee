package topology

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConstants(t *testing.T) {
	if NVLinkDomainPrefix != "nvlink_domain_" || TopoRankKey != "topo_rank" ||
		NVLinkDomainUnknown != "unknown" || TopoRankUnknown != -1 || DomainConstraintAmount != 0.001 {
		t.Fatal("topology constants drifted from the reference")
	}
	got := []int{DefaultGenerationPortRangeLow, DefaultGenerationPortRangeHigh, DefaultGymPortRangeLow,
		DefaultGymPortRangeHigh, DefaultVLLMPortRangeLow, DefaultVLLMPortsPerEngine,
		DefaultMasterPortRangeLow, DefaultMasterPortRangeHigh}
	want := []int{3000, 4999, 5000, 5999, 7000, 100, 1400, 1999}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("port constants (-want +got):\n%s", diff)
	}
}

func TestParseNodeTopology(t *testing.T) {
	tests := []struct {
		name   string
		res    map[string]float64
		domain string
		rank   int
	}{
		{"nil", nil, NVLinkDomainUnknown, TopoRankUnknown},
		{"no topology keys", map[string]float64{"CPU": 64, "GPU": 8}, NVLinkDomainUnknown, TopoRankUnknown},
		{"domain only", map[string]float64{"nvlink_domain_abc": 1}, "nvlink_domain_abc", TopoRankUnknown},
		{"rank only", map[string]float64{"topo_rank": 7}, NVLinkDomainUnknown, 7},
		{"both", map[string]float64{"nvlink_domain_x": 1, "topo_rank": 12, "GPU": 4}, "nvlink_domain_x", 12},
		{"bare prefix is a domain", map[string]float64{"nvlink_domain_": 1}, "nvlink_domain_", TopoRankUnknown},
		{"prefix must lead", map[string]float64{"my_nvlink_domain_a": 1, "NVLINK_DOMAIN_b": 1}, NVLinkDomainUnknown, TopoRankUnknown},
		{"several domains pick smallest", map[string]float64{"nvlink_domain_b": 1, "nvlink_domain_a": 1, "nvlink_domain_c": 1}, "nvlink_domain_a", TopoRankUnknown},
		{"truncate positive", map[string]float64{"topo_rank": 3.99}, NVLinkDomainUnknown, 3},
		{"truncate negative toward zero", map[string]float64{"topo_rank": -2.7}, NVLinkDomainUnknown, -2},
		{"zero", map[string]float64{"topo_rank": 0}, NVLinkDomainUnknown, 0},
		{"NaN", map[string]float64{"topo_rank": math.NaN()}, NVLinkDomainUnknown, TopoRankUnknown},
		{"+Inf", map[string]float64{"topo_rank": math.Inf(1)}, NVLinkDomainUnknown, TopoRankUnknown},
		{"-Inf", map[string]float64{"topo_rank": math.Inf(-1)}, NVLinkDomainUnknown, TopoRankUnknown},
		{"too large", map[string]float64{"topo_rank": 1e300}, NVLinkDomainUnknown, TopoRankUnknown},
		{"2^53", map[string]float64{"topo_rank": 1 << 53}, NVLinkDomainUnknown, 1 << 53},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, r := ParseNodeTopology(tc.res)
			if d != tc.domain || r != tc.rank {
				t.Fatalf("ParseNodeTopology(%v) = (%q, %d), want (%q, %d)", tc.res, d, r, tc.domain, tc.rank)
			}
		})
	}
}

func TestHasTopology(t *testing.T) {
	if HasTopology(nil) || HasTopology([]Node{}) {
		t.Fatal("empty topology has no NVLink info")
	}
	// Only the domain counts (prepare_segment_topology's test), not the rank.
	if HasTopology([]Node{{"a", NVLinkDomainUnknown, 5}}) {
		t.Fatal("a known rank alone is not NVLink info")
	}
	if !HasTopology([]Node{{"a", NVLinkDomainUnknown, -1}, {"b", "nvlink_domain_x", -1}}) {
		t.Fatal("one known domain is enough")
	}
}

func TestNormalizeTopologyDictSemantics(t *testing.T) {
	in := []Node{{"a", "d1", 1}, {"b", "d1", 2}, {"a", "d2", 9}, {"c", "d3", 3}, {"b", "d4", 4}}
	want := []Node{{"a", "d2", 9}, {"b", "d4", 4}, {"c", "d3", 3}}
	if diff := cmp.Diff(want, normalizeTopology(in)); diff != "" {
		t.Fatalf("normalizeTopology (-want +got):\n%s", diff)
	}
	uniq := []Node{{"a", "d1", 1}, {"b", "d1", 2}}
	if got := normalizeTopology(uniq); &got[0] != &uniq[0] {
		t.Fatal("unique input should be returned as is")
	}
}
