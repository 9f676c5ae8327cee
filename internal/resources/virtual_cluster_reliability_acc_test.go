package resources_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// The reliability tests run against the real local Ray. Those that stop Ray
// processes (restart, node stop) leave the cluster with all nodes alive when
// they end, pass or fail, and are skipped with RAY_TF_SKIP_DISRUPTIVE=1.

// createdWithoutDrift is a placement group Ray reports placed, as configured.
var createdWithoutDrift = knownvalue.ObjectPartial(map[string]knownvalue.Check{
	"state": knownvalue.StringExact(raystate.PlacementGroupStateCreated), "drift": knownvalue.StringExact(""),
})

// With the provider talking to Ray through a proxy that answers 503 and
// resets connections, every apply, refresh and destroy still converges, and
// Ray (asked directly, not through the proxy) holds exactly the wanted groups:
// a retried job submission whose first attempt reached Ray is adopted, not
// submitted twice.
func TestAccReliability_faultProxy(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("faults")
	proxy := acctest.NewFaultProxy(t, plainray.Address())
	proxy.Verbose = os.Getenv("RAY_TF_PROXY_LOG") != ""
	cfg := func(counts ...int) string {
		return acctest.HCL(
			acctest.Provider{Address: proxy.URL, MaxRetries: acctest.Retries(15), RetryWaitMin: "20ms", RetryWaitMax: "250ms"},
			acctest.VirtualCluster{Name: name, Counts: counts, GPUsPerNode: 4, PortLow: 1700, PortHigh: 1800},
		)
	}
	faulted := func(atLeast int64) resource.TestCheckFunc { return checkProxyFaulted(t, proxy, atLeast) }
	one := map[string]int{name + "-node0": 1}
	wider := map[string]int{name + "-node0": 2}
	noJobs := resource.ComposeAggregateTestCheckFunc(
		acctest.CheckNoActiveJobs(t, "raytf_create_"+name), acctest.CheckNoActiveJobs(t, "raytf_delete_"+name))
	vcTest(t, name,
		resource.TestStep{
			// 503s and resets in turn on every other request of plan and apply.
			PreConfig: func() { proxy.Inject(acctest.FaultRule{Mode: acctest.FaultAlternate, Every: 2, First: 6}) },
			Config:    cfg(1),
			Check:     resource.ComposeAggregateTestCheckFunc(faulted(6), acctest.CheckGroupsInRay(t, name, one), noJobs),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0, "state"), knownvalue.StringExact(raystate.PlacementGroupStateCreated)),
				expectVC(at("master_port"), intBetween(1700, 1800)),
			},
		},
		resource.TestStep{
			// Every connection is reset for 2s: the refresh retries through it.
			PreConfig:    func() { proxy.Inject(acctest.FaultRule{Mode: acctest.FaultReset, For: 2 * time.Second}) },
			RefreshState: true,
			Check:        resource.ComposeAggregateTestCheckFunc(faulted(3), acctest.CheckGroupsInRay(t, name, one)),
			RefreshPlanChecks: resource.RefreshPlanChecks{PostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectEmptyPlan(),
				plancheck.ExpectKnownValue(vcName, at("placement_groups", 0, "drift"), knownvalue.StringExact("")),
			}},
		},
		resource.TestStep{
			// Both job submissions of the replacement (delete, then create; a
			// kept node's new bundle count replaces) reach Ray, but the answers
			// to their first attempts are lost.
			PreConfig: func() {
				proxy.Inject(acctest.FaultRule{Mode: acctest.FaultResetAfterForward, Method: "POST", Path: "/api/jobs/", Distinct: true})
			},
			Config:           cfg(2),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionDestroyBeforeCreate),
			Check:            resource.ComposeAggregateTestCheckFunc(faulted(2), acctest.CheckGroupsInRay(t, name, wider), noJobs),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles"), knownvalue.ListSizeExact(2)),
			},
		},
		resource.TestStep{
			// Destroy through 503s and resets.
			PreConfig: func() { proxy.Inject(acctest.FaultRule{Mode: acctest.FaultAlternate, Every: 3, First: 6}) },
			Config:    cfg(2),
			Destroy:   true,
			Check: resource.ComposeAggregateTestCheckFunc(
				faulted(6),
				acctest.CheckNoGroupsInRay(t, name),
				noJobs,
			),
		},
	)
	t.Logf("faults injected: %s", strings.Join(proxy.FaultLog(), ", "))
}

// checkProxyFaulted asserts that the proxy broke at least atLeast requests
// under its current rule, and logs its counters.
func checkProxyFaulted(t *testing.T, proxy *acctest.FaultProxy, atLeast int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		st := proxy.Stats()
		t.Logf("fault proxy: %d requests, %d forwarded, %d faults so far (%d under this step's rule)",
			st.Requests, st.Forwarded, st.Faults, st.RuleFaults)
		if st.RuleFaults < atLeast {
			return fmt.Errorf("the proxy injected only %d faults, want at least %d", st.RuleFaults, atLeast)
		}
		return nil
	}
}

// checkRaySession records the Ray session name (a new one after each restart).
func checkRaySession(t *testing.T, session *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		v, err := acctest.Client(t).Version(context.Background())
		if err == nil {
			*session = v.SessionName
		}
		return err
	}
}

// Ray itself is restarted between apply and plan (every group is gone, the
// session is new): the next plan creates the cluster instead of failing, and
// the apply converges.
func TestAccReliability_rayRestarted(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.SkipDisruptive(t)
	name := acctest.Name("restart")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 4}.String()
	groups := map[string]int{name + "-node0": 1}
	var sessionBefore string
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			Check:  resource.ComposeAggregateTestCheckFunc(acctest.CheckGroupsInRay(t, name, groups), checkRaySession(t, &sessionBefore)),
		},
		resource.TestStep{
			PreConfig: func() {
				acctest.RestartCluster(t)
				v, err := acctest.Client(t).Version(context.Background())
				if err != nil || v.SessionName == sessionBefore {
					t.Fatalf("Ray was not restarted: session %v (before %s), %v", v, sessionBefore, err)
				}
				t.Logf("Ray restarted: session %s -> %s", sessionBefore, v.SessionName)
			},
			Config:             cfg,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionCreate),
			}},
		},
		resource.TestStep{
			Config:           cfg,
			ConfigPlanChecks: expectAction(plancheck.ResourceActionCreate),
			Check:            acctest.CheckGroupsInRay(t, name, groups),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("placement_groups", 0), createdWithoutDrift),
			},
		},
	)
}

// stopWaitingCreate finds the create job of group through the job API once
// its group exists and waits to be placed (PENDING), and stops it. It returns
// the stopped job's submission id.
func stopWaitingCreate(ctx context.Context, t *testing.T, group string) (string, error) {
	c := acctest.Client(t)
	prefix := "raytf_create_" + group + "_" // driver.SubmissionID: raytf_<action>_<group names>_<hash>_<attempt>
	for {
		jobs, err := acctest.ActiveJobs(ctx, c, prefix)
		if err == nil {
			for _, j := range jobs {
				if j.Status != rayclient.JobStatusRunning {
					continue
				}
				groups, err := c.ListPlacementGroups(ctx, rayclient.ListOptions{
					Filters: []rayclient.Filter{rayclient.Eq("name", group), rayclient.Ne("state", raystate.PlacementGroupStateRemoved)}})
				if err != nil || len(groups) == 0 || groups[0].State != raystate.PlacementGroupStatePending {
					continue
				}
				time.Sleep(time.Second) // well inside the wait
				if _, err := c.StopJob(ctx, j.SubmissionID); err != nil {
					return "", fmt.Errorf("stopping %s: %w", j.SubmissionID, err)
				}
				t.Logf("stopped driver job %s while its group %s was %s", j.SubmissionID, group, groups[0].State)
				return j.SubmissionID, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no running create job %s* with a pending group %s: %w", prefix, group, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A create waits for capacity that an actor outside any placement group
// holds (so the plan-time capacity check passes); its driver job is stopped
// through Ray's job API while it waits. The apply fails with a clear error
// and leaves no group; once the capacity is free, the next apply converges.
func TestAccReliability_driverJobStopped(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("jobstop")
	group := name + "-node0"
	// rackC-1 has topo_rank 6: the holder takes 3, the cluster's bundle needs 4.
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1}, NoGPUs: true, ReadyTimeout: "150s",
		Constraints: []map[string]float64{{"nvlink_domain_rackC": 0.001, "topo_rank": 4}}}.String()
	var release func()
	type stopResult struct {
		id  string
		err error
	}
	stopped := make(chan stopResult, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	vcTest(t, name,
		resource.TestStep{
			PreConfig: func() {
				release = acctest.HoldResources(t, name+"-holder", map[string]float64{"nvlink_domain_rackC": 0.001, "topo_rank": 3})
				go func() {
					id, err := stopWaitingCreate(ctx, t, group)
					stopped <- stopResult{id, err}
				}()
			},
			Config: cfg,
			ExpectError: wrappedRE(`Cannot create the virtual cluster`, `driver stopped by signal 15`,
				`removed group\(s\) created by this run: "`+group+`"`, `No placement group of this cluster was left behind`),
		},
		resource.TestStep{
			PreConfig: func() {
				select {
				case r := <-stopped:
					if r.err != nil {
						t.Fatalf("stopping the create job: %v", r.err)
					}
				case <-time.After(time.Minute):
					t.Fatal("the job stopper did not finish")
				}
				groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
				if err != nil || len(groups) != 0 {
					t.Fatalf("after the stopped create Ray holds %v (%v), want no group of %s", groups, err, name)
				}
				release() // free the capacity
			},
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{group: 1}),
				acctest.CheckNoActiveJobs(t, "raytf_create_"+name),
				acctest.CheckNoActiveJobs(t, "raytf_delete_"+name),
			),
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("bundles", 0, "node_ip"), knownvalue.StringExact(acctest.NodeIP("rackC-1"))),
				expectVC(at("bundles", 0, "topo_rank"), knownvalue.Int64Exact(6)),
			},
		},
	)
}

// Retries are bounded by max_retries: against a dashboard that only answers
// 503, max_retries = 0 sends one request and max_retries = 3 four, and the
// error names Ray's status and the attempts.
func TestAccReliability_retriesBounded(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	proxy := acctest.NewFaultProxy(t, plainray.Address())
	cfg := func(maxRetries int) string {
		return acctest.HCL(acctest.Provider{Address: proxy.URL, MaxRetries: acctest.Retries(maxRetries), RetryWaitMin: "10ms", RetryWaitMax: "20ms"}, acctest.Topology{})
	}
	var counts []int64 // requests per step
	steps := 0
	inject := func() {
		if steps > 0 {
			counts = append(counts, proxy.Stats().RuleFaults)
		}
		steps++
		proxy.Inject(acctest.FaultRule{Mode: acctest.Fault503})
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{PreConfig: inject, Config: cfg(0), ExpectError: wrappedRE(`GET /api/version: 503 Service Unavailable`)},
			{PreConfig: inject, Config: cfg(3), ExpectError: wrappedRE(`GET /api/version: 503 Service Unavailable`, `giving up after 4 attempts`)},
		},
	})
	counts = append(counts, proxy.Stats().RuleFaults)
	if fmt.Sprint(counts) != "[1 4]" {
		t.Fatalf("requests per step with max_retries 0 and 3: %v, want [1 4]", counts)
	}
}
