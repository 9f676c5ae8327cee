package topology

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

var domainChoices = []string{"nvlink_domain_A", "nvlink_domain_B", "nvlink_domain_C", "nvlink_domain_D", NVLinkDomainUnknown}

func genTopology(t *rapid.T) []Node {
	n := rapid.IntRange(0, 30).Draw(t, "nodes")
	dup := rapid.Bool().Draw(t, "allowDuplicates")
	topo := make([]Node, n)
	for i := range topo {
		id := fmt.Sprintf("node-%d", i)
		if dup {
			id = fmt.Sprintf("node-%d", rapid.IntRange(0, n).Draw(t, "id"))
		}
		topo[i] = Node{
			ID:       id,
			Domain:   rapid.SampledFrom(domainChoices).Draw(t, "domain"),
			TopoRank: rapid.IntRange(-1, 10).Draw(t, "rank"),
		}
	}
	return topo
}

func TestPropertySelectSegmentNodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topo := genTopology(t)
		seg := rapid.IntRange(1, 4).Draw(t, "seg")
		num := seg * rapid.IntRange(0, 8).Draw(t, "segments")
		sel, rem, err := SelectSegmentNodes(topo, seg, num)
		if err != nil {
			if _, ok := err.(*ResourceInsufficientError); !ok {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
		}
		if e := checkSelectInvariants(topo, seg, num, sel, rem, err); e != nil {
			t.Fatal(e)
		}
	})
}

func TestPropertyPrepareSegmentTopology(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		topo := genTopology(t)
		seg := rapid.IntRange(1, 3).Draw(t, "seg")
		num := seg * rapid.IntRange(0, 5).Draw(t, "segments")
		plan, err := PrepareSegmentTopology(&seg, num, topo, "training")
		if err != nil {
			return
		}
		if !plan.HasTopology {
			if plan.Constraints != nil || len(plan.Remaining) != len(plan.Topology) {
				t.Fatalf("fallback plan %+v", plan)
			}
			return
		}
		if len(plan.Constraints) != len(plan.Selected) || len(plan.Selected) != num {
			t.Fatalf("plan %+v", plan)
		}
		dom := map[string]string{}
		for _, n := range plan.Topology {
			dom[n.ID] = n.Domain
		}
		for i, id := range plan.Selected {
			if len(plan.Constraints[i]) != 1 || plan.Constraints[i][dom[id]] != DomainConstraintAmount {
				t.Fatalf("constraint %d = %v for node %s in %s", i, plan.Constraints[i], id, dom[id])
			}
		}
	})
}

func genBundles(t *rapid.T) []Bundle {
	n := rapid.IntRange(0, 40).Draw(t, "bundles")
	noTopo := rapid.IntRange(0, 3).Draw(t, "noTopo") == 0
	out := make([]Bundle, n)
	for i := range out {
		b := Bundle{
			GPUID:  rapid.IntRange(0, 7).Draw(t, "gpu"),
			NodeID: fmt.Sprintf("n%d", rapid.IntRange(0, 9).Draw(t, "node")),
		}
		if noTopo {
			b.Domain, b.TopoRank = NVLinkDomainUnknown, TopoRankUnknown
		} else {
			b.Domain = rapid.SampledFrom(domainChoices).Draw(t, "domain")
			b.TopoRank = rapid.IntRange(-1, 6).Draw(t, "rank")
		}
		out[i] = b
	}
	return out
}

func TestPropertySortBundles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bundles := genBundles(t)
		var seg, gpus *int
		if rapid.Bool().Draw(t, "segmented") {
			s, g := rapid.IntRange(1, 3).Draw(t, "seg"), rapid.IntRange(1, 8).Draw(t, "gpus")
			seg, gpus = &s, &g
		}
		idx, trims, err := SortBundleIndicesByTopology(bundles, seg, gpus)
		if e := checkSortInvariants(bundles, seg, gpus, idx, err); e != nil {
			t.Fatal(e)
		}
		discarded := 0
		for _, tr := range trims {
			discarded += tr.Discarded
			if tr.Kept+tr.Discarded == 0 || tr.UsableNodes%*seg != 0 || tr.UsableNodes > tr.DomainNodes {
				t.Fatalf("bad trim %+v", tr)
			}
		}
		if len(idx)+discarded != len(bundles) {
			t.Fatalf("kept %d + discarded %d != %d", len(idx), discarded, len(bundles))
		}
	})
}

func TestPropertyCheckPlacementNoFalseErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		data := rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "data")
		groups, nodes := decodePlacement(data)
		f := CheckPlacement(groups, nodes)
		if e := checkPlacementAgainstBrute(groups, nodes, f); e != nil {
			t.Fatalf("%v\ngroups %+v\nnodes %+v\n%+v", e, groups, nodes, f)
		}
	})
}
