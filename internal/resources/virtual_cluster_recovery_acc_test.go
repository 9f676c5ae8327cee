package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// stopNodeUntilDead stops the test cluster's node and waits until Ray
// reports it DEAD (the node comes back when the test ends).
func stopNodeUntilDead(t *testing.T, node string) {
	t.Helper()
	acctest.StopNode(t, node)
	state, err := acctest.NodeState(context.Background(), acctest.Client(t), acctest.NodeIP(node))
	if err != nil || state != raystate.NodeStateDead {
		t.Fatalf("Ray reports %s %q (%v), want DEAD", node, state, err)
	}
}

// stateAttr reads one attribute of the cluster from state.
func stateAttr(s *terraform.State, key string) string {
	return s.RootModule().Resources[vcName].Primary.Attributes[key]
}

// A node holding a bundle of a cluster Ray places (no select_nodes) dies.
// Ray keeps the group (RESCHEDULING) and the other bundle, with its worker;
// the plan warns and replaces nothing; with recovery_timeout passed it
// would replace; once a node has room Ray places the bundle again in the
// same group, and the apply re-probes that bundle alone, in place: the
// group's id, the other bundle and its worker's process (holding that
// bundle's whole GPU, so no probe could run there) stay.
//
// Topology: topo_rank is 5 on rackB-1, 4 on rackB-2, 6 on rackC-1 (3 or less
// elsewhere). Bundle 0 needs topo_rank 5, bundle 1 needs 4. While two actors
// hold 1 on each rackB node, bundle 0 can only go to rackC-1 and bundle 1 to
// rackB-1. With rackC-1 dead, bundle 0 fits nowhere next to bundle 1; when
// rackC-1 comes back (a new node id, the same address) it fits there again.
func TestAccRecovery_unpinnedClusterKeepsItsWorkers(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.SkipDisruptive(t)
	name := acctest.Name("nodedown")
	group := name + "-unified"
	vc := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, GPUsPerNode: 4, Unified: true, Strategy: "PACK", ReadyTimeout: "90s",
		Constraints: []map[string]float64{{"topo_rank": 5}, {"topo_rank": 4}}}
	cfg := vc.String()
	vc.Extra = []acctest.Attr{{Key: "recovery_timeout", Expr: acctest.Quote("1s")}}
	withTimeout := vc.String()
	var releases []func()
	var worker *acctest.BundleWorker
	var groupID, lostNode string
	vcTest(t, name,
		resource.TestStep{
			PreConfig: func() {
				for _, node := range []string{"rackB-1", "rackB-2"} {
					releases = append(releases, acctest.HoldResources(t, name+"-"+node,
						map[string]float64{"node:" + acctest.NodeIP(node): 0.001, "topo_rank": 1}))
				}
			},
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group: 2}),
				func(s *terraform.State) error {
					groupID, lostNode = stateAttr(s, "placement_groups.0.id"), stateAttr(s, "bundles.1.node_id")
					// It holds the bundle's whole GPU, as a NeMo-RL worker does: a probe task
					// in that bundle (0.01 GPU) would wait out the update's probe timeout.
					worker = acctest.StartBundleWorker(t, group, 1, 0, 1)
					return nil
				},
			),
			// bundles are in rank order (topo_rank 5 before 6): group bundle 1 first.
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles", 0, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackB-1"))),
				expectVC(at("bundles", 1, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackC-1"))),
			},
		},
		resource.TestStep{ // recovering: the plan is empty (a warning says what Ray reports)
			PreConfig: func() {
				for _, release := range releases {
					release()
				}
				stopNodeUntilDead(t, "rackC-1")
				acctest.WaitForGroupState(t, group, raystate.PlacementGroupStateRescheduling, time.Minute)
				time.Sleep(2 * time.Second)
				acctest.WaitForGroupState(t, group, raystate.PlacementGroupStateRescheduling, 10*time.Second) // and it stays so
			},
			Config:   cfg,
			PlanOnly: true,
		},
		resource.TestStep{ // recovery_timeout has passed since the node died: replace
			Config:             withTimeout,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
		},
		resource.TestStep{ // Ray placed the bundle again: an in-place update probes it alone
			PreConfig: func() {
				acctest.EnsureCluster(t)
				acctest.WaitForGroupState(t, group, raystate.PlacementGroupStateCreated, 2*time.Minute)
			},
			Config:           cfg,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
			Check: resource.ComposeTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group: 2}),
				func(s *terraform.State) error {
					if id := stateAttr(s, "placement_groups.0.id"); id != groupID {
						return fmt.Errorf("the group is %s after the recovery, was %s: it was replaced", id, groupID)
					}
					if now := stateAttr(s, "bundles.1.node_id"); now == lostNode || now == "" {
						return fmt.Errorf("group bundle 0 is recorded on %q, the dead node was %s", now, lostNode)
					}
					pid, node, err := worker.Where()
					if err != nil || pid != worker.PID || node != worker.NodeID {
						return fmt.Errorf("the worker in bundle 1 is %s on %.12s (%v), was %s on %.12s", pid, node, err, worker.PID, worker.NodeID)
					}
					rec := acctest.ReadRecord(t, name)
					if rec == nil || len(rec.Bundles) != 2 || rec.Bundles[1].NodeID != stateAttr(s, "bundles.1.node_id") {
						return fmt.Errorf("the record in Ray does not hold the new placement: %+v", rec)
					}
					return nil
				},
			),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0), createdWithoutDrift),
				expectVC(at("bundles", 0, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackB-1"))),
				expectVC(at("bundles", 1, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackC-1"))),
			},
		},
		resource.TestStep{Config: cfg, PlanOnly: true}, // and it stays so
	)
}

// A node a select_nodes cluster holds dies: its bundles are pinned to that
// node, which Ray can never place them on again, so the plan replaces the
// cluster at once and the apply chooses other nodes.
func TestAccRecovery_selectedNodeLostReplaces(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.SkipDisruptive(t)
	name := acctest.Name("pinlost")
	vc := acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 1, SelectNodes: true, ReadyTimeout: "60s",
		ExcludeNodeIDs: excludeAllBut(t, nodeIDs(t)[acctest.NodeIP("rackC-1")])}
	cfg := vc.String()
	vc.ExcludeNodeIDs = "" // in place, were it not for the lost node
	anywhere := vc.String()
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles", 0, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackC-1"))),
			},
		},
		resource.TestStep{
			PreConfig:          func() { stopNodeUntilDead(t, "rackC-1") },
			Config:             anywhere,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
		},
		resource.TestStep{
			Config:           anywhere,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionDestroyBeforeCreate),
			Check:            acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0), createdWithoutDrift),
				expectVC(at("bundles", 0, "node_ip"), knownvalue.NotNull()),
			},
		},
	)
}

// A select_nodes cluster pinned to its NVLink domain loses the node that
// holds its bundle: Ray places the bundle again on the domain's other node,
// in the same group, and the plan is an in-place update that re-probes it,
// never a replacement (with node pinning it would be one).
func TestAccRecovery_domainPinnedClusterStaysInItsDomain(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.SkipDisruptive(t)
	name := acctest.Name("domlost")
	ids := nodeIDs(t)
	rackB := []string{"rackB-1", "rackB-2"}
	vc := acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 1, SelectNodes: true, Pinning: "domain", ReadyTimeout: "60s",
		ExcludeNodeIDs: excludeAllBut(t, ids[acctest.NodeIP(rackB[0])], ids[acctest.NodeIP(rackB[1])])}
	cfg := vc.String()
	var groups map[string]string
	var lost, other string
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(groupIDs(t, name, &groups), func(s *terraform.State) error {
				ip := stateAttr(s, "bundles.0.node_ip")
				for i, n := range rackB {
					if acctest.NodeIP(n) == ip {
						lost, other = n, rackB[1-i]
						return nil
					}
				}
				return fmt.Errorf("the bundle is on %s, outside rackB", ip)
			}),
		},
		resource.TestStep{
			PreConfig: func() {
				stopNodeUntilDead(t, lost)
				waitForBundleOn(t, name, ids[acctest.NodeIP(other)])
			},
			Config:           cfg,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
			Check:            resource.ComposeAggregateTestCheckFunc(sameGroupIDs(t, name, &groups)),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles", 0, "node_id"), knownvalue.StringFunc(func(v string) error {
					if v != ids[acctest.NodeIP(other)] {
						return fmt.Errorf("bundle recorded on %s, want %s (%s)", v, ids[acctest.NodeIP(other)], other)
					}
					return nil
				})),
			},
		},
	)
}

// waitForBundleOn waits until Ray lists bundle 0 of cluster's one group
// placed on node.
func waitForBundleOn(t *testing.T, cluster, node string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var seen any
	for time.Now().Before(deadline) {
		live, err := acctest.LiveGroups(context.Background(), acctest.Client(t), cluster)
		if err == nil && len(live) == 1 && live[0].State == raystate.PlacementGroupStateCreated &&
			len(live[0].Bundles) > 0 && live[0].Bundles[0].NodeID == node {
			return
		}
		seen = live
		if err != nil {
			seen = err
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("Ray did not place %s's bundle again on %s within 90 s; last seen: %+v", cluster, node, seen)
}
