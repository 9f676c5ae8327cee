package resources_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// A per-node cluster grows from two logical nodes to three and shrinks back
// in place (issue #55): the two kept groups keep their ids, and a worker
// holding each kept bundle's whole GPU (so no probe could run there) lives
// on through both. A change of a kept node's bundles, and a grow that does
// not fit beside the kept groups, are named at plan.
func TestAccVirtualCluster_resizeKeepsWorkers(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("resize")
	cfg := func(counts ...int) string {
		return acctest.VirtualCluster{Name: name, Counts: counts, PortLow: 1900, PortHigh: 2000}.String()
	}
	group := func(i int) string { return fmt.Sprintf("%s-node%d", name, i) }
	ids := map[string]string{}
	var workers []*acctest.BundleWorker
	keptChecks := func(s *terraform.State) error {
		for i, w := range workers {
			if got := stateAttr(s, fmt.Sprintf("placement_groups.%d.id", i)); got != ids[group(i)] {
				return fmt.Errorf("%s has id %s, was %s: not kept", group(i), got, ids[group(i)])
			}
			if pid, _, err := w.Where(); err != nil || pid != w.PID {
				return fmt.Errorf("the worker in %s: pid %q (was %s): %v", group(i), pid, w.PID, err)
			}
		}
		return nil
	}
	inPlace := func(worldSize int64) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionUpdate),
			plancheck.ExpectKnownValue(vcName, tfjsonpath.New("world_size"), knownvalue.Int64Exact(worldSize)),
		}}
	}
	vcTest(t, name,
		resource.TestStep{
			Config: cfg(1, 1),
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1}),
				func(s *terraform.State) error {
					for i := 0; i < 2; i++ {
						ids[group(i)] = stateAttr(s, fmt.Sprintf("placement_groups.%d.id", i))
						workers = append(workers, acctest.StartBundleWorker(t, group(i), 0, 0, 1))
					}
					return nil
				},
			),
		},
		resource.TestStep{ // grow: one group more, the kept two untouched
			Config:           cfg(1, 1, 1),
			ConfigPlanChecks: inPlace(3),
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1, group(2): 1}),
				keptChecks,
				resource.TestCheckResourceAttr(vcName, "bundles.#", "3"),
				resource.TestCheckResourceAttr(vcName, "bundles.2.placement_group", group(2)),
				resource.TestCheckResourceAttr(vcName, "node_count", "3"),
			),
		},
		resource.TestStep{ // a grow that cannot fit beside the kept groups fails at plan: 18 GPUs more, 17 free
			Config:      cfg(slices.Repeat([]int{1}, 21)...),
			PlanOnly:    true,
			ExpectError: wrappedRE("must fit beside the groups it keeps"),
		},
		resource.TestStep{ // shrink: the added group goes, the kept two stay
			Config:           cfg(1, 1),
			ConfigPlanChecks: inPlace(2),
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1}),
				keptChecks,
				resource.TestCheckResourceAttr(vcName, "bundles.#", "2"),
			),
		},
		resource.TestStep{ // a kept node's bundles change: its group is made anew, so the cluster is replaced
			Config:             cfg(1, 2),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
		},
	)
}

// A cluster that selects its own nodes grows by one node in place: the kept
// nodes keep their groups and their selected nodes, the added one is
// chosen among the nodes they do not hold; the shrink gives it back.
func TestAccVirtualCluster_resizeSelectedNodes(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("resize-sel")
	cfg := func(nodes int) string { return selectConfig(name, nodes, func(*acctest.VirtualCluster) {}) }
	group := func(i int) string { return fmt.Sprintf("%s-node%d", name, i) }
	var held []string
	var groupIDs []string
	kept := func(s *terraform.State) error {
		for i := range held {
			if got := stateAttr(s, fmt.Sprintf("selected_node_ids.%d", i)); got != held[i] {
				return fmt.Errorf("logical node %d moved from %s to %s", i, held[i], got)
			}
			if got := stateAttr(s, fmt.Sprintf("placement_groups.%d.id", i)); got != groupIDs[i] {
				return fmt.Errorf("%s has id %s, was %s", group(i), got, groupIDs[i])
			}
		}
		return nil
	}
	// update is an in-place update to config that keeps both groups, with selected nodes in state.
	update := func(config, selected string) resource.TestStep {
		return resource.TestStep{
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionUpdate)}},
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1}),
				kept,
				resource.TestCheckResourceAttr(vcName, "selected_node_ids.#", selected),
			),
		}
	}
	vcTest(t, name,
		resource.TestStep{
			Config: cfg(2),
			Check: func(s *terraform.State) error {
				for i := 0; i < 2; i++ {
					held = append(held, stateAttr(s, fmt.Sprintf("selected_node_ids.%d", i)))
					groupIDs = append(groupIDs, stateAttr(s, fmt.Sprintf("placement_groups.%d.id", i)))
				}
				return nil
			},
		},
		resource.TestStep{
			Config: cfg(3),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(vcName, tfjsonpath.New("selected_node_ids")),
			}},
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1, group(2): 1}),
				kept,
				resource.TestCheckResourceAttr(vcName, "selected_node_ids.#", "3"),
				func(s *terraform.State) error {
					if added := stateAttr(s, "selected_node_ids.2"); slices.Contains(held, added) {
						return fmt.Errorf("the added node chose %s, which a kept node holds", added)
					}
					return nil
				},
			),
		},
		// Back to two nodes; then a logical node without bundles appended and
		// dropped: a resize that changes no group, one selected node per logical node.
		update(cfg(2), "2"),
		update(selectConfig(name, 2, func(c *acctest.VirtualCluster) { c.Counts = []int{1, 1, 0} }), "3"),
		update(cfg(2), "2"),
	)
}
