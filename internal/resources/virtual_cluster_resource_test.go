package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

func TestAccVirtualCluster_perNodeGroups(t *testing.T) {
	name := acctest.Name("pernode")
	vcTest(t, name, resource.TestStep{
		Config: acctest.VirtualCluster{Name: name, Counts: []int{2, 0, 1}, GPUsPerNode: 4, PortLow: 1500, PortHigh: 1600}.String(),
		Check:  acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 2, name + "-node2": 1}),
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("id"), knownvalue.StringExact(name)),
			expectVC(at("world_size"), knownvalue.Int64Exact(3)),
			expectVC(at("node_count"), knownvalue.Int64Exact(2)),
			expectVC(at("namespace"), knownvalue.StringExact("terraform-ray")),
			expectVC(at("placement_groups"), knownvalue.ListSizeExact(2)),
			expectVC(at("placement_groups", 0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
				"name":       knownvalue.StringExact(name + "-node0"),
				"strategy":   knownvalue.StringExact("PACK"),
				"state":      knownvalue.StringExact(raystate.PlacementGroupStateCreated),
				"drift":      knownvalue.StringExact(""),
				"node_index": knownvalue.Int64Exact(0),
			})),
			expectVC(at("placement_groups", 1, "node_index"), knownvalue.Int64Exact(2)),
			expectVC(at("bundles"), knownvalue.ListSizeExact(3)),
			expectVC(at("sorted_bundle_indices"), knownvalue.ListSizeExact(3)),
			expectVC(at("sorted_bundle_indices", 0), knownvalue.Int64Exact(0)),
			expectVC(at("bundles", 0, "gpu_id"), knownvalue.NotNull()),
			expectVC(at("bundles", 0, "node_ip"), knownvalue.StringRegexp(nodeIPRE)),
			expectVC(at("bundles", 2, "port"), intBetween(1500, 1600)),
			sameAsBundle0("master_address", "node_ip"),
			sameAsBundle0("master_port", "port"),
			expectVC(at("nvlink_domain_per_bundle"), knownvalue.ListSizeExact(3)),
		},
	})
}

func TestAccVirtualCluster_unifiedStrategies(t *testing.T) {
	name := acctest.Name("unified")
	step := func(strategy string, counts ...int) resource.TestStep {
		return resource.TestStep{
			Config: acctest.VirtualCluster{Name: name, Counts: counts, GPUsPerNode: 4, Unified: true, Strategy: strategy}.String(),
			Check:  acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 4}),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0, "strategy"), knownvalue.StringExact(strategy)),
				expectVC(at("placement_groups", 0, "node_index"), knownvalue.Int64Exact(-1)),
				expectVC(at("world_size"), knownvalue.Int64Exact(4)),
				expectVC(at("bundles"), knownvalue.ListSizeExact(4)),
			},
		}
	}
	strictPack := step("STRICT_PACK", 4)
	strictPack.ConfigStateChecks = append(strictPack.ConfigStateChecks,
		statecheck.CompareValuePairs(vcName, at("bundles", 0, "node_id"), vcName, at("bundles", 3, "node_id"), compare.ValuesSame()))
	strictSpread := step("STRICT_SPREAD", 1, 1, 1, 1)
	strictSpread.ConfigPlanChecks = expectAction(plancheck.ResourceActionDestroyBeforeCreate)
	vcTest(t, name, step("PACK", 2, 2), step("SPREAD", 2, 2), strictPack, strictSpread)
}

func TestAccVirtualCluster_noGPUs(t *testing.T) {
	name := acctest.Name("cpu")
	vcTest(t, name, resource.TestStep{
		Config: acctest.VirtualCluster{Name: name, Counts: []int{2}, NoGPUs: true, Colocated: 2}.String(),
		Check:  acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 2}),
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("bundles", 0, "gpu_id"), knownvalue.Null()),
			expectVC(at("bundles", 0, "port"), knownvalue.NotNull()),
		},
	})
}

// Bundles pinned to rackB (topo_rank 4 and 5) come out in topology order:
// the rank-4 node's GPUs 0-3, then the rank-5 node's.
func TestAccVirtualCluster_topologyOrder(t *testing.T) {
	name := acctest.Name("topo")
	rankAndGPU := func(rank, gpu int64) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"topo_rank": knownvalue.Int64Exact(rank), "gpu_id": knownvalue.Int64Exact(gpu),
		})
	}
	vcTest(t, name, resource.TestStep{
		Config: acctest.VirtualCluster{Name: name, Counts: []int{4, 4}, GPUsPerNode: 4, Unified: true, Strategy: "PACK",
			Constraints: []map[string]float64{onDomain("nvlink_domain_rackB"), onDomain("nvlink_domain_rackB")}}.String(),
		Check: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 8}),
			checkRecordInRankOrder(t, name),
		),
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("bundles", 0), rankAndGPU(4, 0)),
			expectVC(at("bundles", 3), rankAndGPU(4, 3)),
			expectVC(at("bundles", 4), rankAndGPU(5, 0)),
			expectVC(at("bundles", 7, "nvlink_domain"), knownvalue.StringExact("nvlink_domain_rackB")),
			expectVC(at("master_address"), knownvalue.StringExact(acctest.NodeIP("rackB-2"))),
			expectVC(at("nvlink_domain_per_bundle", 5), knownvalue.StringExact("nvlink_domain_rackB")),
		},
	})
}

// checkRecordInRankOrder reads the cluster's record from Ray's KV: the create
// job wrote it in rank order (rackB's topo_rank 4 node first, GPU ids
// ascending), so no second job rewrote it (updated_at is still created_at).
func checkRecordInRankOrder(t *testing.T, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		m := acctest.ReadRecord(t, name)
		if m == nil || len(m.Bundles) != 8 {
			return fmt.Errorf("record of %s: %+v", name, m)
		}
		for rank, b := range m.Bundles {
			wantRank, wantGPU := 4+rank/4, rank%4
			if b.Rank != rank || b.TopoRank != wantRank || b.GPUID == nil || *b.GPUID != wantGPU || m.SortedBundleIndices[rank] != b.GlobalIndex {
				return fmt.Errorf("record bundle %d: %+v, want topo_rank %d, gpu %d", rank, b, wantRank, wantGPU)
			}
		}
		if m.UpdatedAt != m.CreatedAt {
			return fmt.Errorf("record rewritten after create (created %s, updated %s): a second job ran", m.CreatedAt, m.UpdatedAt)
		}
		return nil
	}
}

// With segment_size, a placement spanning only complete segments is kept; one
// that lands on an incomplete segment fails the apply and leaves no group.
func TestAccVirtualCluster_segments(t *testing.T) {
	name := acctest.Name("seg")
	cfg := func(second string) string {
		return acctest.VirtualCluster{Name: name, Counts: []int{4, 4}, GPUsPerNode: 4, Unified: true, Strategy: "PACK",
			SegmentSize: 2, ReadyTimeout: "60s",
			Constraints: []map[string]float64{onDomain("nvlink_domain_rackA"), onDomain(second)}}.String()
	}
	vcTest(t, name,
		resource.TestStep{
			Config: cfg("nvlink_domain_rackA"),
			Check:  acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 8}),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles", 0, "topo_rank"), knownvalue.Int64Exact(2)),
				expectVC(at("bundles", 4, "topo_rank"), knownvalue.Int64Exact(3)),
				expectVC(at("master_address"), knownvalue.StringExact(acctest.NodeIP("rackA-2"))),
			},
		},
		resource.TestStep{
			Config:      cfg("nvlink_domain_rackC"),
			ExpectError: regexp.MustCompile(`(?s)Incomplete NVLink segments.*kept 0 of 8 bundles`),
			Check:       acctest.CheckNoGroupsInRay(t, name),
		},
	)
}

func TestAccVirtualCluster_planTimeSegmentFeasibility(t *testing.T) {
	name := acctest.Name("segplan")
	vcTest(t, name, resource.TestStep{
		Config:      acctest.VirtualCluster{Name: name, Counts: []int{1, 1, 1, 1, 1, 1, 1, 1}, GPUsPerNode: 4, Unified: true, SegmentSize: 2}.String(),
		PlanOnly:    true,
		ExpectError: regexp.MustCompile(`(?s)cannot form 4 complete segments of 2 nodes.*nvlink_domain_rackC=1`),
	})
}

func TestAccVirtualCluster_planTimeCapacity(t *testing.T) {
	name := acctest.Name("cap")
	vcTest(t, name,
		resource.TestStep{
			Config:      acctest.VirtualCluster{Name: name, Counts: []int{5}, GPUsPerNode: 8, Unified: true, Strategy: "STRICT_PACK"}.String(),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)cannot hold this virtual cluster.*GPU`),
		},
		resource.TestStep{
			Config:      acctest.VirtualCluster{Name: name, Counts: []int{8, 8, 8}, GPUsPerNode: 8}.String(),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)requested 24 GPU, \d+ available`),
		},
	)
}

// Two clusters that fit alone but not together are now a plan error (the
// plan counts the other clusters it creates), so the apply-time path is
// exercised with the head node's CPUs held by an actor, which the plan
// cannot see: the driver gives up, returns the node view, and the provider
// explains it.
func TestAccVirtualCluster_applyTimeInfeasible(t *testing.T) {
	name := acctest.Name("late")
	vcTest(t, name, resource.TestStep{
		PreConfig: func() {
			acctest.HoldResources(t, name+"-holder", map[string]float64{"CPU": 4, "node:" + acctest.NodeIP("head"): 0.001})
		},
		Config: acctest.VirtualCluster{Label: "a", Name: name + "-a", Counts: []int{1}, NoGPUs: true, ReadyTimeout: "8s",
			Constraints: []map[string]float64{{"node:" + acctest.NodeIP("head"): 0.001}}}.String(),
		ExpectError: regexp.MustCompile(`(?s)Cannot create the virtual cluster.*not\s+ready\s+after.*Why:.*CPU.*No\s+placement\s+group\s+of\s+this\s+cluster\s+was\s+left\s+behind`),
	})
}

func TestAccVirtualCluster_driftAndImport(t *testing.T) {
	name := acctest.Name("drift")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, GPUsPerNode: 4}.String()
	groups := map[string]int{name + "-node0": 1, name + "-node1": 1}
	vcTest(t, name,
		resource.TestStep{Config: cfg, Check: acctest.CheckGroupsInRay(t, name, groups)},
		resource.TestStep{
			PreConfig: func() { acctest.RemoveGroupsOutOfBand(t, name+"-node1") },
			Config:    cfg,
			PlanOnly:  true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ExpectNonEmptyPlan: true,
		},
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionDestroyBeforeCreate),
			Check:            acctest.CheckGroupsInRay(t, name, groups),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 1, "drift"), knownvalue.StringExact("")),
			},
		},
		resource.TestStep{
			ResourceName:            vcName,
			ImportState:             true,
			ImportStateId:           name,
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: importIgnore,
		},
		resource.TestStep{
			PreConfig:        func() { acctest.RemoveGroupsOutOfBand(t, name+"-node0", name+"-node1") },
			Config:           cfg,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionCreate),
			Check:            acctest.CheckGroupsInRay(t, name, groups),
		},
	)
}

// With Ray unreachable the live checks become a warning: the plan succeeds
// and the checks run again at apply.
func TestAccVirtualCluster_planWithUnreachableRay(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config:   acctest.HCL(unreachableProvider, acctest.VirtualCluster{Name: "unreachable", Counts: []int{1}}),
			PlanOnly: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionCreate),
			}},
			ExpectNonEmptyPlan: true,
		}},
	})
}

// Port range, segment_size, num_gpus_per_node and ready_timeout change in
// place: the groups stay (same ids in Ray), only the probe is re-run.
func TestAccVirtualCluster_updateInPlace(t *testing.T) {
	name := acctest.Name("upd")
	base := acctest.VirtualCluster{Name: name, Counts: []int{2, 2}, GPUsPerNode: 4, Unified: true, Strategy: "PACK",
		Constraints: []map[string]float64{onDomain("nvlink_domain_rackB"), onDomain("nvlink_domain_rackB")}}
	ports, moreGPUs := base, base
	ports.PortLow, ports.PortHigh, ports.SegmentSize, ports.ReadyTimeout = 2200, 2300, 1, "90s"
	// Segment trimming depends on num_gpus_per_node: change it without segments.
	moreGPUs.GPUsPerNode = 8
	sameGroup := statecheck.CompareValue(compare.ValuesSame())
	vcTest(t, name,
		resource.TestStep{
			Config: base.String(),
			Check:  acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 4}),
			ConfigStateChecks: []statecheck.StateCheck{
				sameGroup.AddStateValue(vcName, at("placement_groups", 0, "id")),
			},
		},
		resource.TestStep{
			Config:           ports.String(),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				portsUniquePerNode(vcName, 2200, 2300),
				expectVC(at("segment_size"), knownvalue.Int64Exact(1)),
				expectVC(at("ready_timeout"), knownvalue.StringExact("90s")),
				sameGroup.AddStateValue(vcName, at("placement_groups", 0, "id")),
			},
		},
		resource.TestStep{
			Config:           moreGPUs.String(),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("num_gpus_per_node"), knownvalue.Int64Exact(8)),
				expectVC(at("segment_size"), knownvalue.Null()),
				sameGroup.AddStateValue(vcName, at("placement_groups", 0, "id")),
			},
		},
	)
}

// ready_timeout is a duration, not a string: respelling it ("180s" as "3m")
// plans nothing, and the state keeps the spelling the cluster was created with.
func TestAccVirtualCluster_readyTimeoutRespelled(t *testing.T) {
	name := acctest.Name("respell")
	before := acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 4, ReadyTimeout: "180s"}
	after := before
	after.ReadyTimeout = "3m"
	vcTest(t, name,
		resource.TestStep{Config: before.String()},
		resource.TestStep{
			Config:            after.String(),
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			ConfigStateChecks: []statecheck.StateCheck{expectVC(at("ready_timeout"), knownvalue.StringExact("180s"))},
		},
	)
}

// Which configuration changes replace the cluster and which update it in
// place, as the plan shows them: the schema's RequiresReplace attributes must
// be exactly the resource's shape attributes (TestAccVirtualCluster_updateInPlace
// applies the in-place ones and checks that the groups stay).
func TestAccVirtualCluster_replaceOrUpdate(t *testing.T) {
	name := acctest.Name("shape")
	base := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, GPUsPerNode: 4}
	replace, update := plancheck.ResourceActionDestroyBeforeCreate, plancheck.ResourceActionUpdate
	changes := []struct {
		attribute string
		edit      func(c *acctest.VirtualCluster)
		action    plancheck.ResourceActionType
	}{
		{"name", func(c *acctest.VirtualCluster) { c.Name += "-renamed" }, replace},
		{"bundle_ct_per_node_list", func(c *acctest.VirtualCluster) { c.Counts = []int{1, 2} }, replace},
		{"use_gpus", func(c *acctest.VirtualCluster) { c.NoGPUs = true }, replace},
		{"max_colocated_worker_groups", func(c *acctest.VirtualCluster) { c.Colocated = 2 }, replace},
		{"use_unified_pg", func(c *acctest.VirtualCluster) { c.Unified = true }, replace},
		{"placement_group_strategy", func(c *acctest.VirtualCluster) { c.Strategy = "PACK" }, replace},
		{"node_resource_constraints", func(c *acctest.VirtualCluster) {
			c.Constraints = []map[string]float64{onDomain("nvlink_domain_rackA"), onDomain("nvlink_domain_rackA")}
		}, replace},
		{"num_gpus_per_node", func(c *acctest.VirtualCluster) { c.GPUsPerNode = 8 }, update},
		{"segment_size", func(c *acctest.VirtualCluster) { c.SegmentSize = 1 }, update},
		{"port_range_low", func(c *acctest.VirtualCluster) { c.PortLow = 1500 }, update},
		{"port_range_high", func(c *acctest.VirtualCluster) { c.PortHigh = 1900 }, update},
		{"ready_timeout", func(c *acctest.VirtualCluster) { c.ReadyTimeout = "90s" }, update},
	}
	steps := []resource.TestStep{{Config: base.String()}}
	for _, change := range changes {
		changed := base
		change.edit(&changed)
		steps = append(steps, resource.TestStep{
			Config:   changed.String(),
			PlanOnly: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPreRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, change.action),
			}},
			ExpectNonEmptyPlan: true,
		})
	}
	vcTest(t, name, steps...)
}

// Ray keeps resource amounts in units of 1e-4: a constraint of 0.00015 is
// reserved as one of them, and every check (drift, the driver's adoption,
// the data source, raytf_attach) takes what Ray reports for the declared
// amount (drift.SameAmount). The plan after the apply is empty.
func TestAccVirtualCluster_subUnitConstraintPlansEmpty(t *testing.T) {
	name := acctest.Name("subunit")
	const declared = 0.00015
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1}, NoGPUs: true,
		Constraints: []map[string]float64{{"nvlink_domain_rackA": declared}}}.String()
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
				func(_ *terraform.State) error {
					groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
					if err != nil {
						return err
					}
					for _, g := range groups {
						for _, b := range g.Bundles {
							got, ok := b.UnitResources["nvlink_domain_rackA"]
							if !ok || !drift.SameAmount(got, declared) {
								return fmt.Errorf("bundle %d of %s reserves nvlink_domain_rackA = %v (present %v); want %v",
									b.BundleIndex, g.Name, got, ok, declared)
							}
						}
					}
					return nil
				},
			),
		},
		// A refresh and plan with the same configuration: no drift, no change.
		resource.TestStep{Config: cfg, PlanOnly: true},
	)
}
