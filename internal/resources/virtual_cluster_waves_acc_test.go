package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Acceptance test of several clusters in one configuration:
// Terraform creates and destroys them concurrently, and the provider runs
// each wave of them as one Ray job (driver.Batcher).

// waveConfig is count one-GPU clusters on disjoint port ranges, plus, when
// withInfeasible, a cluster of 24 GPUs (the test cluster has 20) that plans
// (capacity_check = "none") and cannot be placed.
func waveConfig(name string, count int, withInfeasible bool) string {
	blocks := []fmt.Stringer{acctest.VirtualCluster{Label: "wave", Name: name + "-${count.index}", Counts: []int{1}, GPUsPerNode: 1,
		Extra: []acctest.Attr{
			{Key: "count", Expr: strconv.Itoa(count)},
			{Key: "port_range_low", Expr: "1700 + count.index * 10"},
			{Key: "port_range_high", Expr: "1710 + count.index * 10"},
		}}}
	if withInfeasible {
		blocks = append(blocks, acctest.VirtualCluster{Label: "too_big", Name: name + "-big", Counts: []int{4, 4, 4, 4, 4, 4},
			GPUsPerNode: 4, CapacityCheck: "none", ReadyTimeout: "5s", PortLow: 1800, PortHigh: 1900})
	}
	return acctest.HCL(blocks...)
}

// checkOwnedInRay reads each cluster's record from Ray's KV (out of band)
// and checks that it names the owner this state holds.
func checkOwnedInRay(t *testing.T, name string, count int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for i := range count {
			addr := fmt.Sprintf("ray_virtual_cluster.wave.%d", i)
			rs, ok := s.RootModule().Resources[addr]
			if !ok {
				return fmt.Errorf("%s is not in state", addr)
			}
			cluster := fmt.Sprintf("%s-%d", name, i)
			rec := acctest.ReadRecord(t, cluster)
			if rec == nil || rec.Owner == "" || rec.Owner != record.OwnerDigest(rs.Primary.Attributes["owner_id"]) {
				return fmt.Errorf("record of %s in Ray: %+v, want the digest of owner %q", cluster, rec, rs.Primary.Attributes["owner_id"])
			}
		}
		if record := acctest.ReadRecord(t, name+"-big"); record != nil {
			return fmt.Errorf("the infeasible cluster left a record: %+v", record)
		}
		return nil
	}
}

// checkNoJobRecords waits (up to 20 s: records are deleted in the
// background, ~2 s after each job) until Ray's job list holds no record of
// a job on name's clusters.
func checkNoJobRecords(t *testing.T, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		var left []string
		for deadline := time.Now().Add(20 * time.Second); ; {
			jobs, err := acctest.Client(t).ListJobs(context.Background())
			if err != nil {
				return err
			}
			left = left[:0]
			for _, j := range jobs {
				if strings.HasPrefix(j.SubmissionID, "raytf_") && strings.Contains(j.SubmissionID, name) {
					left = append(left, j.SubmissionID+" ("+j.Status+")")
				}
			}
			if len(left) == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("job records left in Ray: %s", strings.Join(left, ", "))
			}
			time.Sleep(time.Second)
		}
	}
}

func TestAccVirtualCluster_severalClustersOneApply(t *testing.T) {
	name := acctest.Name("wave")
	const count = 3
	groups := map[string]int{}
	for i := range count {
		groups[fmt.Sprintf("%s-%d-node0", name, i)] = 1
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckNoGroupsInRay(t, name),
			checkNoJobRecords(t, name),
		),
		Steps: []resource.TestStep{
			{
				// The infeasible cluster fails alone: the others are created.
				Config: waveConfig(name, count, true),
				ExpectError: regexp.MustCompile(`(?s)Cannot create the virtual cluster.*not\s+ready\s+after\s+5s` +
					`.*No\s+placement\s+group\s+of\s+this\s+cluster\s+was\s+left\s+behind`),
			},
			{
				// Without it, the state matches Ray: nothing to do.
				Config:           waveConfig(name, count, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeAggregateTestCheckFunc(
					acctest.CheckGroupsInRay(t, name, groups),
					checkOwnedInRay(t, name, count),
					checkNoJobRecords(t, name),
				),
			},
		},
	})
}
