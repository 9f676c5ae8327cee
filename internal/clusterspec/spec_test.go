package clusterspec_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestSpecValidateOK(t *testing.T) {
	if issues := clusterspectest.ValidSpec().Validate(); len(issues) != 0 {
		t.Fatalf("valid spec has issues: %+v", issues)
	}
	s := clusterspectest.ValidSpec()
	s.Strategy = "" // defaults to SPREAD
	s.UseUnifiedPG = true
	s.SegmentSize = clusterspectest.Ptr(2)
	s.NodeResourceConstraints = []topology.Resources{{"nvlink_domain_a": 0.001}, {}}
	s.Ports = topology.PortRange{Low: 20000, High: 20100}
	if issues := s.Validate(); len(issues) != 0 {
		t.Fatalf("valid spec has issues: %+v", issues)
	}
}

func TestSpecValidateRules(t *testing.T) {
	long := make([]int, clusterspec.MaxLogicalNodes+1)
	long[0] = 1
	tests := []struct {
		name    string
		mutate  func(*clusterspec.Spec)
		path    string
		detail  string
		warning bool
	}{
		{"empty name", func(s *clusterspec.Spec) { s.Name = "" }, "name", `name "" must be 1-100 characters`, false},
		{"name with space", func(s *clusterspec.Spec) { s.Name = "a b" }, "name", `name "a b"`, false},
		{"name starting with dash", func(s *clusterspec.Spec) { s.Name = "-x" }, "name", `name "-x"`, false},
		{"name with shell chars", func(s *clusterspec.Spec) { s.Name = "x;rm" }, "name", `name "x;rm"`, false},
		{"name too long", func(s *clusterspec.Spec) { s.Name = strings.Repeat("a", 101) }, "name", "1-100 characters", false},
		{"empty list", func(s *clusterspec.Spec) { s.BundleCtPerNode = nil }, "bundle_ct_per_node_list", "must contain at least one node", false},
		{"too many nodes", func(s *clusterspec.Spec) { s.BundleCtPerNode = long }, "bundle_ct_per_node_list", "has 16385 entries; at most 16384", false},
		{"negative count", func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{8, -1} }, "bundle_ct_per_node_list[1]", "node 1 asks for -1 bundles", false},
		{"all zero", func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{0, 0} }, "bundle_ct_per_node_list", "every node asks for 0 bundles", false},
		{"count above gpus", func(s *clusterspec.Spec) { s.BundleCtPerNode = []int{8, 8, 9} }, "bundle_ct_per_node_list[2]", "node 2 asks for 9 bundles but num_gpus_per_node is 8", false},
		{"world size", func(s *clusterspec.Spec) { s.UseGPUs = false; s.BundleCtPerNode = []int{clusterspec.MaxWorldSize, 1} }, "bundle_ct_per_node_list", "more than 1048576 bundles", false},
		{"zero gpus per node", func(s *clusterspec.Spec) { s.NumGPUsPerNode = 0 }, "num_gpus_per_node", "num_gpus_per_node must be greater than 0 if using GPUs (got 0)", false},
		{"negative gpus per node", func(s *clusterspec.Spec) { s.UseGPUs = false; s.NumGPUsPerNode = -1 }, "num_gpus_per_node", "num_gpus_per_node (-1) must be >= 0", false},
		{"max colocated", func(s *clusterspec.Spec) { s.MaxColocatedWorkerGroups = 0 }, "max_colocated_worker_groups", "max_colocated_worker_groups (0) must be >= 1", false},
		{"strategy", func(s *clusterspec.Spec) { s.Strategy = "pack" }, "placement_group_strategy", `placement_group_strategy "pack" must be one of PACK, SPREAD, STRICT_PACK, STRICT_SPREAD; did you mean "PACK"?`, false},
		{"constraint length", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{}} }, "node_resource_constraints", "node_resource_constraints length (1) must match bundle_ct_per_node_list length (2)", false},
		{"constraint empty key", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{}, {" ": 1}} }, "node_resource_constraints[1]", "node 1 has a constraint with an empty resource name", false},
		{"constraint CPU", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{"CPU": 1}, {}} }, "node_resource_constraints[0]", `node 0 constrains "CPU"`, false},
		{"constraint GPU", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{"GPU": 1}, {}} }, "node_resource_constraints[0]", `node 0 constrains "GPU"`, false},
		{"constraint zero", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{"x": 0}, {}} }, "node_resource_constraints[0]", `node 0 constraint "x" = 0 must be a finite number > 0`, false},
		{"constraint negative", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{}, {"x": -1}} }, "node_resource_constraints[1]", `"x" = -1 must be`, false},
		{"constraint NaN", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{"x": math.NaN()}, {}} }, "node_resource_constraints[0]", `"x" = NaN must be`, false},
		{"constraint Inf", func(s *clusterspec.Spec) { s.NodeResourceConstraints = []topology.Resources{{"x": math.Inf(1)}, {}} }, "node_resource_constraints[0]", `"x" = +Inf must be`, false},
		{"segment zero", func(s *clusterspec.Spec) { s.UseUnifiedPG = true; s.SegmentSize = clusterspectest.Ptr(0) }, "segment_size", "segment_size (0) must be >= 1", false},
		{"segment divides", func(s *clusterspec.Spec) { s.UseUnifiedPG = true; s.SegmentSize = clusterspectest.Ptr(3) }, "segment_size", "the number of logical nodes (2, the length of bundle_ct_per_node_list) must be divisible by segment_size (3)", false},
		{"segment without unified", func(s *clusterspec.Spec) { s.SegmentSize = clusterspectest.Ptr(1) }, "segment_size", "segment_size only reorders and trims bundles of a unified GPU placement group", true},
		{"segment without gpus", func(s *clusterspec.Spec) {
			s.UseUnifiedPG = true
			s.UseGPUs = false
			s.SegmentSize = clusterspectest.Ptr(1)
		}, "segment_size", "it is ignored here", true},
		{"ports inverted", func(s *clusterspec.Spec) { s.Ports = topology.PortRange{Low: 2000, High: 1500} }, "port_range_high", "port_range_low (2000) must be lower than port_range_high (1500)", false},
		{"low default vs high", func(s *clusterspec.Spec) { s.Ports = topology.PortRange{Low: 0, High: 1000} }, "port_range_high", "port_range_low (1400) must be lower than port_range_high (1000)", false},
		{"ports negative", func(s *clusterspec.Spec) { s.Ports = topology.PortRange{Low: -1, High: 1000} }, "port_range_low", "port_range_low (-1) must be >= 1", false},
		{"ports too high", func(s *clusterspec.Spec) { s.Ports = topology.PortRange{Low: 1000, High: 70000} }, "port_range_high", "port_range_high (70000) must be <= 65536", false},
		{"ports ephemeral", func(s *clusterspec.Spec) { s.Ports = topology.PortRange{Low: 30000, High: 40000} }, "port_range_high", "reaches the Linux ephemeral port range", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := clusterspectest.ValidSpec()
			tc.mutate(&s)
			issues := s.Validate()
			for _, is := range issues {
				if is.Path == tc.path && strings.Contains(is.Detail, tc.detail) {
					if is.Warning != tc.warning {
						t.Fatalf("issue %+v: warning = %v, want %v", is, is.Warning, tc.warning)
					}
					if is.Summary == "" {
						t.Fatalf("issue %+v has no summary", is)
					}
					return
				}
			}
			t.Fatalf("no issue at %q containing %q; got %+v", tc.path, tc.detail, issues)
		})
	}
}

func TestSpecCounts(t *testing.T) {
	s := clusterspec.Spec{BundleCtPerNode: []int{4, 0, 2, 0, 1}}
	if s.WorldSize() != 7 || s.NodeCount() != 3 {
		t.Fatal(s.WorldSize(), s.NodeCount())
	}
	if (clusterspec.Spec{}).WorldSize() != 0 || (clusterspec.Spec{}).NodeCount() != 0 {
		t.Fatal("empty spec")
	}
}

func TestSpecWithDefaults(t *testing.T) {
	got := (clusterspec.Spec{}).WithDefaults()
	if got.Ports != clusterspec.DefaultPorts || got.Strategy != clusterspec.DefaultStrategy || got.Namespace != clusterspec.DefaultNamespace || got.ReadyTimeout != clusterspec.DefaultReadyTimeout {
		t.Fatalf("%+v", got)
	}
	if got := (clusterspec.Spec{Ports: topology.PortRange{Low: 1500}}).WithDefaults().Ports; got != (topology.PortRange{Low: 1500, High: clusterspec.DefaultPorts.High}) {
		t.Fatal(got)
	}
	if (clusterspec.Spec{Strategy: topology.StrategyPack}).WithDefaults().Strategy != topology.StrategyPack {
		t.Fatal("strategy overridden")
	}
}

// Defaults is a fixed point of WithDefaults, and a Spec built from it with
// the zero-able fields cleared gets them back.
func TestDefaultsOwnEveryDefault(t *testing.T) {
	d := clusterspec.Defaults()
	if diff := cmp.Diff(d, d.WithDefaults()); diff != "" {
		t.Fatalf("WithDefaults changed Defaults (-want +got):\n%s", diff)
	}
	cleared := d
	cleared.Strategy, cleared.Ports, cleared.Namespace, cleared.ReadyTimeout, cleared.Pinning = "", topology.PortRange{}, "", 0, ""
	if diff := cmp.Diff(d, cleared.WithDefaults()); diff != "" {
		t.Fatalf("cleared spec (-want +got):\n%s", diff)
	}
	if d.UseGPUs != clusterspec.DefaultUseGPUs || d.NumGPUsPerNode != clusterspec.DefaultNumGPUsPerNode || d.MaxColocatedWorkerGroups != clusterspec.DefaultMaxColocatedWorkerGroups ||
		d.UseUnifiedPG != clusterspec.DefaultUseUnifiedPG || d.SelectNodes {
		t.Fatalf("%+v", d)
	}
}

func TestSpecGroupsPerNode(t *testing.T) {
	s := clusterspec.Spec{
		Name: "vc", BundleCtPerNode: []int{2, 0, 1}, UseGPUs: true, NumGPUsPerNode: 8,
		MaxColocatedWorkerGroups: 2, Strategy: topology.StrategyStrictSpread,
		NodeResourceConstraints: []topology.Resources{{"nvlink_domain_a": 0.001}, {"x": 1}, {}},
	}
	want := []clusterspec.GroupRequest{
		{Name: "vc-node0", Strategy: "PACK", NodeIndex: 0, Bundles: []topology.Resources{
			{"CPU": 2, "GPU": 1, "nvlink_domain_a": 0.001}, {"CPU": 2, "GPU": 1, "nvlink_domain_a": 0.001},
		}},
		{Name: "vc-node2", Strategy: "PACK", NodeIndex: 2, Bundles: []topology.Resources{{"CPU": 2, "GPU": 1}}},
	}
	got := s.Groups()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Groups (-want +got):\n%s", diff)
	}
	got[0].Bundles[0]["CPU"] = 99
	if got[0].Bundles[1]["CPU"] != 2 || s.NodeResourceConstraints[0]["CPU"] != 0 {
		t.Fatal("bundles must not share maps")
	}
}

func TestSpecGroupsUnified(t *testing.T) {
	s := clusterspec.Spec{
		Name: "vc", BundleCtPerNode: []int{1, 2}, UseGPUs: false, MaxColocatedWorkerGroups: 1,
		Strategy: topology.StrategyStrictPack, UseUnifiedPG: true,
		NodeResourceConstraints: []topology.Resources{{}, {"nvlink_domain_b": 0.001, "zero": 0}},
	}
	want := []clusterspec.GroupRequest{{Name: "vc-unified", Strategy: "STRICT_PACK", NodeIndex: -1, Bundles: []topology.Resources{
		{"CPU": 1}, {"CPU": 1, "nvlink_domain_b": 0.001}, {"CPU": 1, "nvlink_domain_b": 0.001},
	}}}
	if diff := cmp.Diff(want, s.Groups()); diff != "" {
		t.Fatalf("Groups (-want +got):\n%s", diff)
	}
	s.Strategy = ""
	if g := s.Groups(); g[0].Strategy != "SPREAD" {
		t.Fatal("unified group uses the default strategy")
	}
	// A zero max_colocated count (invalid) is omitted like any zero resource.
	s.MaxColocatedWorkerGroups = 0
	s.UseGPUs = true
	if g := s.Groups(); !cmp.Equal(g[0].Bundles[0], topology.Resources{"GPU": 1}) {
		t.Fatal(g[0].Bundles[0])
	}
	// Constraints shorter than the list (invalid) must not panic.
	s.NodeResourceConstraints = nil
	s.UseUnifiedPG = false
	if g := s.Groups(); len(g) != 2 {
		t.Fatal(g)
	}
}

func TestNamedLike(t *testing.T) {
	for group, want := range map[string]bool{
		"vc-unified": true, "vc-node0": true, "vc-node12": true,
		"vc-node": false, "vc-nodex": false, "vc-node-1": false, "vc-node+1": false, "vc2-node0": false,
		"vc-unified2": false, "xvc-node0": false, "vc": false,
	} {
		if got := clusterspec.NamedLike("vc", group); got != want {
			t.Errorf("NamedLike(vc, %q) = %v, want %v", group, got, want)
		}
	}
}
