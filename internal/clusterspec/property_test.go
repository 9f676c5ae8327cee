package clusterspec_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestPropertySpecGroups(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		counts := rapid.SliceOfN(rapid.IntRange(0, 8), 1, 12).Draw(t, "counts")
		s := clusterspec.Spec{
			Name: "vc", BundleCtPerNode: counts, UseGPUs: rapid.Bool().Draw(t, "gpus"), NumGPUsPerNode: 8,
			MaxColocatedWorkerGroups: rapid.IntRange(1, 3).Draw(t, "mc"), UseUnifiedPG: rapid.Bool().Draw(t, "unified"),
		}
		groups := s.Groups()
		total := 0
		for _, g := range groups {
			total += len(g.Bundles)
		}
		if total != s.WorldSize() {
			t.Fatalf("%d bundles for world size %d", total, s.WorldSize())
		}
		if !s.UseUnifiedPG && len(groups) != s.NodeCount() {
			t.Fatalf("%d groups for %d nodes", len(groups), s.NodeCount())
		}
		// One idle 8-GPU node per logical node always suffices.
		var nodes []topology.NodeCapacity
		for i := range counts {
			nodes = append(nodes, topology.NodeCapacity{ID: fmt.Sprint(i), Total: topology.Resources{"CPU": 64, "GPU": 8}})
		}
		if s.WorldSize() > 0 {
			if f := topology.CheckPlacement(groups, nodes); len(f.Errors) != 0 || len(f.Warnings) != 0 {
				t.Fatalf("%+v", f)
			}
		}
	})
}
