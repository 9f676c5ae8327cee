package drift

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// scaleResult is what the driver would report for spec: every bundle placed
// on node (global index / 8), GPU (global index % 8), in 72-node domains.
func scaleResult(spec clusterspec.Spec) (*contract.Result, []raystate.PlacementGroup) {
	res := &contract.Result{OK: true, Action: contract.ActionCreate}
	var live []raystate.PlacementGroup
	global := 0
	for gi, g := range spec.Groups() {
		id := fmt.Sprintf("%028x", gi)
		gr := contract.GroupResult{Name: g.Name, ID: id, State: raystate.PlacementGroupStateCreated, Strategy: g.Strategy, Created: true}
		lg := raystate.PlacementGroup{PlacementGroupID: id, Name: g.Name, State: raystate.PlacementGroupStateCreated}
		for bi, b := range g.Bundles {
			node, gpu := global/8, global%8
			nodeID := fmt.Sprintf("%056x", node)
			gr.Bundles = append(gr.Bundles, contract.BundleResult{Index: bi, Resources: b, NodeID: nodeID,
				NodeIP: fmt.Sprintf("10.0.%d.%d", node/256, node%256), GPUID: &gpu,
				NVLinkDomain: fmt.Sprintf("nvlink_domain_%d", node/72), TopoRank: node + 2, Port: 1400 + gpu})
			lg.Bundles = append(lg.Bundles, raystate.Bundle{PlacementGroupID: id, BundleIndex: bi, UnitResources: b, NodeID: nodeID})
			global++
		}
		res.Groups = append(res.Groups, gr)
		live = append(live, lg)
	}
	return res, live
}

// pipeline runs what a create and a refresh do with a spec: validation, the
// driver request (encoded), the placement and record from the result, and the
// drift comparison. It returns the world size and bundle count seen.
func pipeline(t testing.TB, spec clusterspec.Spec, res *contract.Result, live []raystate.PlacementGroup) (world, placed int) {
	if clusterspec.HasError(spec.Validate()) {
		t.Fatalf("spec invalid: %+v", spec.Validate())
	}
	if _, err := json.Marshal(contract.RequestFor(spec, contract.ActionCreate)); err != nil {
		t.Fatal(err)
	}
	p, issues := contract.NewPlacement(spec, res)
	if clusterspec.HasError(issues) {
		t.Fatalf("placement: %+v", issues)
	}
	if _, err := json.Marshal(record.NewManifest(spec, "owner", "test", p)); err != nil {
		t.Fatal(err)
	}
	rec := map[string]RecordedGroup{}
	for _, g := range p.Groups {
		rec[g.Want.Name] = RecordedGroup{ID: g.ID, BundleNodes: map[int]string{}}
	}
	for _, b := range p.Bundles {
		rec[b.Group].BundleNodes[b.BundleIndex] = b.NodeID
	}
	for _, c := range CompareGroups(spec.Groups(), rec, live) {
		if !c.Found || c.Drift != "" {
			t.Fatalf("group %s: found %v, drift %q", c.Want.Name, c.Found, c.Drift)
		}
	}
	return spec.WorldSize(), len(p.Bundles)
}

// 2,048 logical nodes x 8 GPUs (16,384 bundles), unified and per node, go
// through every Go step of a create and a refresh, and the work grows
// linearly: allocations at 16x the nodes are at most ~16x (a quadratic step
// would be 256x). Counts, not time.
func TestSpecPipelineLinear(t *testing.T) {
	for _, unified := range []bool{true, false} {
		t.Run(fmt.Sprintf("unified=%v", unified), func(t *testing.T) {
			allocs := func(nodes int) float64 {
				spec := clusterspectest.ScaleSpec(nodes, unified)
				res, live := scaleResult(spec)
				var world, placed int
				a := testing.AllocsPerRun(1, func() { world, placed = pipeline(t, spec, res, live) })
				if world != nodes*8 || placed != nodes*8 {
					t.Fatalf("%d nodes: world size %d, %d bundles placed; want %d", nodes, world, placed, nodes*8)
				}
				return a
			}
			small, large := allocs(128), allocs(2048)
			t.Logf("allocations: 128 nodes %.0f, 2,048 nodes %.0f (%.1fx)", small, large, large/small)
			if ratio := large / small; ratio > 20 {
				t.Fatalf("16x the nodes took %.1fx the allocations (%.0f vs %.0f): not linear", ratio, large, small)
			}
		})
	}
	long := clusterspectest.ScaleSpec(clusterspec.MaxLogicalNodes, false)
	if clusterspec.HasError(long.Validate()) {
		t.Fatalf("%d logical nodes rejected: %+v", clusterspec.MaxLogicalNodes, long.Validate())
	}
}
