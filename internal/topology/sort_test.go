package topology

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSortBundleIndicesArgumentErrors(t *testing.T) {
	b := []Bundle{{0, "nvlink_domain_A", 1, "n"}}
	tests := []struct {
		seg, gpus *int
		msg       string
	}{
		{ptr(2), nil, "invalid argument: gpus_per_node is required when segment_size is set"},
		{ptr(0), ptr(8), "invalid argument: segment_size (0) must be >= 1"},
		{ptr(1), ptr(0), "invalid argument: gpus_per_node (0) must be >= 1"},
		{nil, ptr(-1), "invalid argument: gpus_per_node (-1) must be >= 1"},
	}
	for _, tc := range tests {
		for _, in := range [][]Bundle{b, nil} { // checked before the empty shortcut
			_, _, err := SortBundleIndicesByTopology(in, tc.seg, tc.gpus)
			if !errors.Is(err, ErrInvalidArgument) || err.Error() != tc.msg {
				t.Errorf("err = %v, want %q", err, tc.msg)
			}
		}
	}
}

func TestSortBundleIndicesByTopology(t *testing.T) {
	unk, ur := NVLinkDomainUnknown, TopoRankUnknown
	tests := []struct {
		name      string
		bundles   []Bundle
		seg, gpus *int
		want      []int
		trims     []DomainTrim
	}{
		{name: "empty", want: []int{}},
		{name: "empty with segment", seg: ptr(2), gpus: ptr(8), want: []int{}},
		{
			name: "no topology sorts by node id then gpu id",
			bundles: []Bundle{
				{1, unk, ur, "node-b"}, {0, unk, ur, "node-b"}, {3, unk, ur, "node-a"}, {2, unk, ur, "node-a"},
			},
			want: []int{3, 2, 1, 0},
		},
		{
			name: "no topology ties are stable",
			bundles: []Bundle{
				{0, unk, ur, "n"}, {0, unk, ur, "n"}, {0, unk, ur, "m"}, {0, unk, ur, "n"},
			},
			want: []int{2, 0, 1, 3},
		},
		{
			name: "no topology never trims even with a segment size",
			bundles: []Bundle{
				{0, unk, ur, "b"}, {0, unk, ur, "a"}, {0, unk, ur, "c"},
			},
			seg: ptr(2), gpus: ptr(1),
			want: []int{1, 0, 2},
		},
		{
			name: "domain min rank, then rank, then gpu id",
			bundles: []Bundle{
				{0, "nvlink_domain_B", 10, "b1"}, // 0
				{1, "nvlink_domain_A", 3, "a2"},  // 1
				{0, "nvlink_domain_A", 3, "a2"},  // 2
				{1, "nvlink_domain_B", 2, "b2"},  // 3: B min rank = 2
				{0, "nvlink_domain_A", 1, "a1"},  // 4: A min rank = 1
				{5, "nvlink_domain_B", 10, "b1"}, // 5
			},
			want: []int{4, 2, 1, 3, 0, 5},
		},
		{
			name: "node id is ignored with topology",
			bundles: []Bundle{
				{0, "nvlink_domain_A", 1, "z"}, {0, "nvlink_domain_A", 1, "a"},
			},
			want: []int{0, 1},
		},
		{
			name: "rank info alone counts as topology",
			bundles: []Bundle{
				{0, unk, 9, "a"}, {0, unk, 2, "b"}, {1, unk, 2, "b"},
			},
			want: []int{1, 2, 0},
		},
		{
			name: "domain info alone counts as topology (ties on rank -1 fall to gpu id)",
			bundles: []Bundle{
				{1, "nvlink_domain_A", ur, "b"}, {0, "nvlink_domain_A", ur, "a"}, {0, unk, ur, "c"},
			},
			want: []int{1, 2, 0},
		},
		{
			name: "equal domain min ranks keep first-appearance order",
			bundles: []Bundle{
				{0, "nvlink_domain_B", 5, "b"}, {0, "nvlink_domain_A", 5, "a"}, {1, "nvlink_domain_B", 5, "b"},
			},
			want: []int{0, 1, 2},
		},
		{
			name: "segment trims an incomplete domain segment",
			bundles: []Bundle{
				{0, "nvlink_domain_A", 3, "a3"}, // 0 discarded (rank 3 is the odd node)
				{0, "nvlink_domain_A", 1, "a1"}, // 1
				{1, "nvlink_domain_A", 1, "a1"}, // 2
				{0, "nvlink_domain_A", 2, "a2"}, // 3
				{1, "nvlink_domain_A", 2, "a2"}, // 4
				{1, "nvlink_domain_A", 3, "a3"}, // 5 discarded
				{0, "nvlink_domain_B", 0, "b1"}, // 6 discarded: B has 1 node
			},
			seg: ptr(2), gpus: ptr(2),
			want: []int{1, 2, 3, 4},
			trims: []DomainTrim{
				{Domain: "nvlink_domain_A", DomainNodes: 3, UsableNodes: 2, Kept: 4, Discarded: 2},
				{Domain: "nvlink_domain_B", DomainNodes: 1, UsableNodes: 0, Kept: 0, Discarded: 1},
			},
		},
		{
			name: "complete domains keep everything and report no trims",
			bundles: []Bundle{
				{0, "nvlink_domain_B", 4, "b1"}, {0, "nvlink_domain_B", 5, "b2"},
				{0, "nvlink_domain_A", 7, "a1"}, {0, "nvlink_domain_A", 8, "a2"},
			},
			seg: ptr(2), gpus: ptr(1),
			want: []int{0, 1, 2, 3},
		},
		{
			name: "trim keeps gpus_per_node bundles per usable node by (rank, gpu)",
			bundles: []Bundle{
				{2, "nvlink_domain_A", 1, "a1"}, {0, "nvlink_domain_A", 1, "a1"}, {1, "nvlink_domain_A", 1, "a1"},
				{0, "nvlink_domain_A", 2, "a2"},
			},
			seg: ptr(1), gpus: ptr(1),
			want: []int{1, 2},
			trims: []DomainTrim{
				{Domain: "nvlink_domain_A", DomainNodes: 2, UsableNodes: 2, Kept: 2, Discarded: 2},
			},
		},
		{
			name: "huge gpus_per_node keeps all without overflow",
			bundles: []Bundle{
				{0, "nvlink_domain_A", 1, "a1"}, {0, "nvlink_domain_A", 2, "a2"},
			},
			seg: ptr(1), gpus: ptr(int(^uint(0) >> 1)),
			want: []int{0, 1},
		},
		{
			name: "unknown domain is trimmed like any domain",
			bundles: []Bundle{
				{0, NVLinkDomainUnknown, 4, "u1"}, {0, "nvlink_domain_A", 1, "a1"}, {0, "nvlink_domain_A", 2, "a2"},
			},
			seg: ptr(2), gpus: ptr(1),
			want: []int{1, 2},
			trims: []DomainTrim{
				{Domain: NVLinkDomainUnknown, DomainNodes: 1, UsableNodes: 0, Kept: 0, Discarded: 1},
			},
		},
		{
			name: "segment path groups by domain before the global stable sort",
			bundles: []Bundle{
				{0, "nvlink_domain_A", 1, "a1"},
				{0, "nvlink_domain_B", 1, "b1"},
				{0, "nvlink_domain_A", 1, "a2"},
			},
			seg: ptr(1), gpus: ptr(2),
			// Filtered order is [A: 0, 2][B: 1]; all keys tie, so it survives.
			want: []int{0, 2, 1},
		},
		{
			name: "same input without a segment keeps input order on ties",
			bundles: []Bundle{
				{0, "nvlink_domain_A", 1, "a1"},
				{0, "nvlink_domain_B", 1, "b1"},
				{0, "nvlink_domain_A", 1, "a2"},
			},
			want: []int{0, 1, 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, trims, err := SortBundleIndicesByTopology(tc.bundles, tc.seg, tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			if !cmp.Equal(got, tc.want) || !cmp.Equal(trims, tc.trims) {
				t.Fatalf("got %v %+v, want %v %+v", got, trims, tc.want, tc.trims)
			}
		})
	}
}

func TestSortBundleIndicesDoesNotMutateInput(t *testing.T) {
	in := []Bundle{{1, "nvlink_domain_A", 2, "a"}, {0, "nvlink_domain_A", 1, "a"}}
	cp := append([]Bundle(nil), in...)
	if _, _, err := SortBundleIndicesByTopology(in, ptr(1), ptr(1)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cp, in); diff != "" {
		t.Fatalf("input mutated (-want +got):\n%s", diff)
	}
}
