package topology

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(i int) *int { return &i }

func TestSelectSegmentNodesArgumentErrors(t *testing.T) {
	tests := []struct {
		seg, num int
		msg      string
	}{
		{0, 4, "invalid argument: segment_size (0) must be >= 1"},
		{-2, 4, "invalid argument: segment_size (-2) must be >= 1"},
		{2, -2, "invalid argument: num_nodes (-2) must be >= 0"},
		{4, 6, "invalid argument: num_nodes (6) must be divisible by segment_size (4)"},
		{3, 1, "invalid argument: num_nodes (1) must be divisible by segment_size (3)"},
	}
	for _, tc := range tests {
		sel, rem, err := SelectSegmentNodes([]Node{{"a", "nvlink_domain_x", 1}}, tc.seg, tc.num)
		if !errors.Is(err, ErrInvalidArgument) || err.Error() != tc.msg {
			t.Errorf("SelectSegmentNodes(seg=%d, num=%d) err = %v, want %q", tc.seg, tc.num, err, tc.msg)
		}
		if sel != nil || rem != nil {
			t.Errorf("results must be nil on error")
		}
	}
}

func TestSelectSegmentNodes(t *testing.T) {
	tests := []struct {
		name      string
		topo      []Node
		seg, num  int
		selected  []string
		remaining []string
	}{
		{
			name:      "empty topology, zero nodes",
			seg:       2,
			selected:  []string{},
			remaining: []string{},
		},
		{
			name:      "zero nodes keeps everything remaining in input order",
			topo:      []Node{{"b", "nvlink_domain_x", 2}, {"a", "nvlink_domain_x", 1}},
			seg:       1,
			selected:  []string{},
			remaining: []string{"b", "a"},
		},
		{
			name: "domains ordered by min rank, nodes by rank",
			topo: []Node{
				{"b2", "nvlink_domain_B", 11}, {"a2", "nvlink_domain_A", 2}, {"b1", "nvlink_domain_B", 10},
				{"a1", "nvlink_domain_A", 1},
			},
			seg: 2, num: 4,
			selected:  []string{"a1", "a2", "b1", "b2"},
			remaining: []string{},
		},
		{
			name: "greedy stops once enough segments are taken",
			topo: []Node{
				{"b1", "nvlink_domain_B", 10}, {"b2", "nvlink_domain_B", 11}, {"a1", "nvlink_domain_A", 1},
				{"a2", "nvlink_domain_A", 2}, {"a3", "nvlink_domain_A", 3}, {"a4", "nvlink_domain_A", 4},
			},
			seg: 2, num: 2,
			selected:  []string{"a1", "a2"},
			remaining: []string{"b1", "b2", "a3", "a4"},
		},
		{
			name: "domain too small is skipped, later domain used",
			topo: []Node{
				{"a1", "nvlink_domain_A", 1}, {"b1", "nvlink_domain_B", 5}, {"b2", "nvlink_domain_B", 6},
			},
			seg: 2, num: 2,
			selected:  []string{"b1", "b2"},
			remaining: []string{"a1"},
		},
		{
			name: "partial domain contributes whole segments only",
			topo: []Node{
				{"a5", "nvlink_domain_A", 5}, {"a1", "nvlink_domain_A", 1}, {"a3", "nvlink_domain_A", 3},
				{"a2", "nvlink_domain_A", 2}, {"a4", "nvlink_domain_A", 4}, {"b1", "nvlink_domain_B", 9},
				{"b2", "nvlink_domain_B", 8},
			},
			seg: 2, num: 6,
			selected:  []string{"a1", "a2", "a3", "a4", "b2", "b1"},
			remaining: []string{"a5"},
		},
		{
			name: "rank ties inside a domain keep input order",
			topo: []Node{
				{"x", "nvlink_domain_A", 3}, {"y", "nvlink_domain_A", 3}, {"z", "nvlink_domain_A", 1},
			},
			seg: 1, num: 3,
			selected:  []string{"z", "x", "y"},
			remaining: []string{},
		},
		{
			name: "min-rank ties between domains keep first appearance",
			topo: []Node{
				{"c1", "nvlink_domain_C", 5}, {"a1", "nvlink_domain_A", 1}, {"b1", "nvlink_domain_B", 5},
				{"a2", "nvlink_domain_A", 7},
			},
			seg: 1, num: 4,
			selected:  []string{"a1", "a2", "c1", "b1"},
			remaining: []string{},
		},
		{
			name: "unknown-domain nodes are never selected even with low ranks",
			topo: []Node{
				{"u1", NVLinkDomainUnknown, -1}, {"u2", NVLinkDomainUnknown, 0}, {"a1", "nvlink_domain_A", 10},
				{"a2", "nvlink_domain_A", 11},
			},
			seg: 2, num: 2,
			selected:  []string{"a1", "a2"},
			remaining: []string{"u1", "u2"},
		},
		{
			name: "unknown ranks sort first within a domain",
			topo: []Node{
				{"a1", "nvlink_domain_A", 4}, {"a0", "nvlink_domain_A", TopoRankUnknown},
			},
			seg: 1, num: 1,
			selected:  []string{"a0"},
			remaining: []string{"a1"},
		},
		{
			name: "duplicate ids follow dict semantics",
			topo: []Node{
				{"n1", "nvlink_domain_A", 1}, {"n2", "nvlink_domain_A", 2}, {"n1", "nvlink_domain_B", 0},
			},
			seg: 1, num: 1,
			selected:  []string{"n1"},
			remaining: []string{"n2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sel, rem, err := SelectSegmentNodes(tc.topo, tc.seg, tc.num)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !cmp.Equal(sel, tc.selected) || !cmp.Equal(rem, tc.remaining) {
				t.Fatalf("got (%v, %v), want (%v, %v)", sel, rem, tc.selected, tc.remaining)
			}
		})
	}
}

func TestSelectSegmentNodesInsufficient(t *testing.T) {
	topo := []Node{
		{"b1", "nvlink_domain_B", 5}, {"a1", "nvlink_domain_A", 1}, {"b2", "nvlink_domain_B", 6},
		{"b3", "nvlink_domain_B", 7},
	}
	_, _, err := SelectSegmentNodes(topo, 2, 8)
	var rie *ResourceInsufficientError
	if !errors.As(err, &rie) || !errors.Is(err, ErrResourceInsufficient) || errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("want *ResourceInsufficientError, got %T %v", err, err)
	}
	const msg = "cannot form 4 complete segments of 2 nodes (8 nodes needed); nodes per NVLink domain: nvlink_domain_A=1, nvlink_domain_B=3"
	if rie.Error() != msg {
		t.Fatalf("message = %q\nwant      %q", rie.Error(), msg)
	}
	want := ResourceInsufficientError{
		Message: msg, SegmentsNeeded: 4, SegmentsAvailable: 1, SegmentSize: 2, NodesNeeded: 8,
		DomainNodeCounts: []DomainCount{{"nvlink_domain_A", 1}, {"nvlink_domain_B", 3}},
	}
	if diff := cmp.Diff(want, *rie); diff != "" {
		t.Fatalf("error (-want +got):\n%s", diff)
	}

	// Unknown nodes are mentioned; an empty domain list reads "none".
	_, _, err = SelectSegmentNodes([]Node{{"u", NVLinkDomainUnknown, 3}, {"v", NVLinkDomainUnknown, 4}}, 1, 1)
	const msg2 = "cannot form 1 complete segments of 1 nodes (1 nodes needed); nodes per NVLink domain: none; 2 nodes without NVLink domain info cannot be used"
	if !errors.As(err, &rie) || rie.Error() != msg2 || rie.UnknownNodes != 2 {
		t.Fatalf("err = %v, want %q", err, msg2)
	}
	_, _, err = SelectSegmentNodes(nil, 2, 2)
	if !errors.As(err, &rie) || rie.DomainNodeCounts != nil || rie.SegmentsAvailable != 0 {
		t.Fatalf("empty topology: err = %#v", err)
	}
}

func TestPrepareSegmentTopologyNilSegment(t *testing.T) {
	plan, err := PrepareSegmentTopology(nil, 4, []Node{{"a", "nvlink_domain_A", 1}}, "training")
	if err != nil {
		t.Fatal(err)
	}
	if plan.Constraints != nil || plan.Remaining == nil || len(plan.Remaining) != 0 ||
		plan.Topology == nil || len(plan.Topology) != 0 || plan.HasTopology || plan.Message != "" {
		t.Fatalf("nil segment plan = %#v", plan)
	}
}

func TestPrepareSegmentTopologyFallback(t *testing.T) {
	topo := []Node{{"n2", NVLinkDomainUnknown, 3}, {"n1", NVLinkDomainUnknown, -1}}
	// Divisibility is not checked on the fallback path (as in the reference).
	plan, err := PrepareSegmentTopology(ptr(4), 6, topo, "")
	if err != nil {
		t.Fatal(err)
	}
	want := SegmentPlan{
		Selected:  []string{},
		Remaining: []string{"n2", "n1"},
		Topology:  topo,
		Message:   "segment_size=4 is set but no NVLink domain info found, falling back to unordered allocation",
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Fatalf("plan (-want +got):\n%s", diff)
	}
	plan.Topology[0].ID = "mutated"
	if topo[0].ID != "n2" {
		t.Fatal("plan.Topology must not alias the input")
	}
	plan, err = PrepareSegmentTopology(ptr(2), 2, nil, "x")
	if err != nil || len(plan.Remaining) != 0 || plan.Topology == nil || plan.Constraints != nil {
		t.Fatalf("empty topology fallback = %#v, %v", plan, err)
	}
}

func TestPrepareSegmentTopologySelected(t *testing.T) {
	topo := []Node{
		{"u", NVLinkDomainUnknown, -1}, {"b1", "nvlink_domain_B", 20}, {"a1", "nvlink_domain_A", 1},
		{"b2", "nvlink_domain_B", 21}, {"a2", "nvlink_domain_A", 2}, {"a3", "nvlink_domain_A", 3},
	}
	plan, err := PrepareSegmentTopology(ptr(2), 4, topo, "inference")
	if err != nil {
		t.Fatal(err)
	}
	want := SegmentPlan{
		Constraints: []map[string]float64{
			{"nvlink_domain_A": 0.001}, {"nvlink_domain_A": 0.001}, {"nvlink_domain_B": 0.001}, {"nvlink_domain_B": 0.001},
		},
		Selected:    []string{"a1", "a2", "b1", "b2"},
		Remaining:   []string{"u", "a3"},
		Topology:    topo,
		HasTopology: true,
		Message:     "Topology-aware allocation: 4 inference nodes in 2 NVLink domains (segment_size=2)",
	}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Fatalf("plan (-want +got):\n%s", diff)
	}
	plan, err = PrepareSegmentTopology(ptr(1), 1, topo, "")
	if err != nil || plan.Message != "Topology-aware allocation: 1 training nodes in 1 NVLink domains (segment_size=1)" {
		t.Fatalf("default role: %q, %v", plan.Message, err)
	}
}

func TestPrepareSegmentTopologyErrors(t *testing.T) {
	topo := []Node{{"a1", "nvlink_domain_A", 1}}
	if _, err := PrepareSegmentTopology(ptr(2), 3, topo, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("divisibility: %v", err)
	}
	if _, err := PrepareSegmentTopology(ptr(1), 2, topo, ""); !errors.Is(err, ErrResourceInsufficient) {
		t.Fatalf("insufficient: %v", err)
	}
	for _, seg := range []int{0, -1} {
		if _, err := PrepareSegmentTopology(ptr(seg), 2, nil, ""); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("segment %d: %v", seg, err)
		}
	}
	if _, err := PrepareSegmentTopology(ptr(1), -1, nil, ""); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative nodes: %v", err)
	}
}

func TestSelectSegmentNodesHugeRequest(t *testing.T) {
	topo := []Node{{"a", "nvlink_domain_A", 1}}
	if _, _, err := SelectSegmentNodes(topo, 1, 1<<50); !errors.Is(err, ErrResourceInsufficient) {
		t.Fatal(err)
	}
}
