package planning

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func nvl72Capacity(n int) []topology.NodeCapacity {
	out := make([]topology.NodeCapacity, n)
	for i := range out {
		total := topology.Resources{"CPU": 72, "GPU": 4, topology.TopoRankKey: float64(i + 1),
			fmt.Sprintf("%s%d", topology.NVLinkDomainPrefix, i/72): 1}
		out[i] = topology.NodeCapacity{ID: fmt.Sprintf("%056x", i), Total: total}
	}
	return out
}

// 2,048 per-node groups short of the same thing on 10,000 nodes: one line
// per distinct problem, a bounded node summary, the right attribute.
func TestShortageBoundedAtScale(t *testing.T) {
	spec := clusterspectest.ScaleSpec(2048, false)
	spec.NumGPUsPerNode, spec.MaxColocatedWorkerGroups = 8, 100
	capacity := nvl72Capacity(10000)
	s, _ := CheckCapacity(spec, capacity, nil, nil)
	if len(s.Errors) == 0 || len(s.Errors) > MaxShortageLines {
		t.Fatalf("%d error lines, want 1..%d: %q", len(s.Errors), MaxShortageLines, s.Errors)
	}
	if !strings.Contains(strings.Join(s.Errors, "\n"), "the same for 2047 more group(s)") {
		t.Fatalf("groups not merged: %q", s.Errors)
	}
	lines := strings.Split(s.Detail(), "\n")
	if len(lines) > 40 || !strings.Contains(s.Nodes, "... and 9984 more") || !strings.Contains(s.Nodes, "10000 alive nodes in 139 NVLink domain(s)") {
		t.Fatalf("detail has %d lines:\n%s", len(lines), s.Detail())
	}
	if got := ShortageAttribute(spec, capacity); got != clusterspec.AttrMaxColocatedWorkerGroups {
		t.Fatalf("attribute %q, want %q", got, clusterspec.AttrMaxColocatedWorkerGroups)
	}
	spec.MaxColocatedWorkerGroups = 1
	if got := ShortageAttribute(spec, capacity); got != clusterspec.AttrBundleCtPerNodeList {
		t.Fatalf("attribute %q, want %q", got, clusterspec.AttrBundleCtPerNodeList)
	}
	small := CapacitySummary(capacity[:3])
	if strings.Count(small, "\n") != 3 || strings.Contains(small, "more") {
		t.Fatalf("a small cluster lists every node:\n%s", small)
	}
}
