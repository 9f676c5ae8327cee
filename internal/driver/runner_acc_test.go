package driver

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Acceptance tests of Run's guarantees against a real Ray (TF_ACC=1; see
// driver_acc_test.go for the cluster and RAYTF_TEST_PYTHON). They need one
// free CPU and no GPU, so they also run against a one-node side cluster of
// another Ray version. The out-of-band kill connects to its GCS with plain
// Ray (plainray).

// hookAPI passes calls to Ray and lets a test interfere after they return.
type hookAPI struct {
	JobAPI
	mu          sync.Mutex
	submitted   []rayclient.JobSubmitRequest
	afterSubmit func(err error) error
	afterGet    func(j *rayclient.JobDetails, err error) error
}

func (h *hookAPI) SubmitJob(ctx context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error) {
	resp, err := h.JobAPI.SubmitJob(ctx, req)
	h.mu.Lock()
	h.submitted = append(h.submitted, req)
	h.mu.Unlock()
	if h.afterSubmit != nil {
		err = h.afterSubmit(err)
	}
	return resp, err
}

func (h *hookAPI) GetJob(ctx context.Context, id string) (*rayclient.JobDetails, error) {
	j, err := h.JobAPI.GetJob(ctx, id)
	if h.afterGet != nil {
		err = h.afterGet(j, err)
	}
	return j, err
}

func (h *hookAPI) submits() []rayclient.JobSubmitRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]rayclient.JobSubmitRequest(nil), h.submitted...)
}

// jobRecords lists the job records of this test's runs.
func (e *accEnv) jobRecords(t *testing.T) []string {
	t.Helper()
	jobs, err := e.client.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, j := range jobs {
		if strings.Contains(j.SubmissionID, e.prefix) {
			out = append(out, j.SubmissionID+" "+j.Status+" "+j.ErrorType)
		}
	}
	return out
}

func (e *accEnv) cpuSpec(name string, timeout int) contract.Request {
	s := e.spec(contract.ActionCreate, contract.RequestGroup{Name: name, Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 0.01}}})
	s.Probe.UseGPUs, s.ReadyTimeoutSeconds = false, timeout
	return s
}

// Guarantee: job records are cleaned up, and Ray's job monitor does not
// write them back - without the former resurrection sweep.
func TestAccRunnerLeavesNoJobRecords(t *testing.T) {
	e := newAccEnv(t)
	spec := e.spec(contract.ActionInspect, contract.RequestGroup{Name: "absent"})
	var ids []string
	for _, background := range []bool{false, false, false, true, true, true} {
		api := &hookAPI{JobAPI: e.client}
		res, err := Run(context.Background(), api, e.python, spec, RunOptions{PollInterval: 100 * time.Millisecond, BackgroundCleanup: background})
		if err != nil || len(res.Missing) != 1 {
			t.Fatalf("res = %+v, err = %v", res, err)
		}
		ids = append(ids, api.submits()[0].SubmissionID)
	}
	if ids[0] == ids[1] {
		t.Errorf("submission id reused: %v", ids)
	}
	// Ray's monitor writes a record back within ~2s of its supervisor's
	// exit, and background cleanups take ~2s.
	time.Sleep(8 * time.Second)
	if left := e.jobRecords(t); len(left) != 0 {
		t.Errorf("job records left: %v", left)
	}
}

// Guarantee: a retried apply attaches to the job already running.
func TestAccRunnerAttachesToRunningJob(t *testing.T) {
	e := newAccEnv(t)
	spec := e.cpuSpec("attach", 60)
	// The first Run loses Ray after submitting, as a killed provider would,
	// and leaves its job running.
	lost := &hookAPI{JobAPI: e.client, afterGet: func(*rayclient.JobDetails, error) error { return errors.New("connection refused") }}
	if _, err := Run(context.Background(), lost, e.python, spec, RunOptions{PollInterval: time.Millisecond}); err == nil {
		t.Fatal("first run did not fail")
	}
	first := lost.submits()[0]
	retry := &hookAPI{JobAPI: e.client}
	res, err := Run(context.Background(), retry, e.python, spec, RunOptions{PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(retry.submits()); n != 0 || res.RunID != first.Metadata[metaRun] {
		t.Errorf("retry submitted %d jobs; result of run %q, first run %q", n, res.RunID, first.Metadata[metaRun])
	}
	if len(e.livePGs(t)) != 1 {
		t.Errorf("groups: %v", mapKeys(e.livePGs(t)))
	}
}

// Guarantee: a submission whose answer was lost is found and waited for.
func TestAccRunnerReconcilesLostSubmitResponse(t *testing.T) {
	e := newAccEnv(t)
	api := &hookAPI{JobAPI: e.client, afterSubmit: func(err error) error {
		if err == nil {
			err = errors.New("read tcp: connection reset by peer")
		}
		return err
	}}
	res, err := Run(context.Background(), api, e.python, e.spec(contract.ActionInspect, contract.RequestGroup{Name: "absent"}), RunOptions{PollInterval: 100 * time.Millisecond})
	if err != nil || len(res.Missing) != 1 || len(api.submits()) != 1 {
		t.Fatalf("res = %+v, err = %v, submits %d", res, err, len(api.submits()))
	}
}

// loseSupervisor runs spec and, once its driver runs, kills the job's
// supervisor actor with plain Ray (ray.kill), or with killDriver SIGKILLs
// the supervisor's process and the driver, as the OOM killer would. It
// returns what happened.
func (e *accEnv) loseSupervisor(t *testing.T, spec contract.Request, killDriver bool, timing *RunTiming) lossOutcome {
	t.Helper()
	gcs, py := plainray.GCSAddress(), plainray.Python(t)
	var once sync.Once
	killed := make(chan error, 1)
	api := &hookAPI{JobAPI: e.client}
	supervisorDied, driverKilled := false, false
	api.afterGet = func(j *rayclient.JobDetails, err error) error {
		if err == nil && j.ErrorType == "JOB_SUPERVISOR_ACTOR_DIED" {
			supervisorDied = true
		}
		if err == nil && j.DriverExitCode != nil && *j.DriverExitCode < 0 {
			driverKilled = true
		}
		if err != nil || j.Status != rayclient.JobStatusRunning || j.DriverInfo == nil {
			return err
		}
		once.Do(func() {
			driverPID := "0"
			if killDriver {
				driverPID = j.DriverInfo.PID
			}
			out, kerr := exec.Command(py, "-c", `import os, signal, sys, ray
from ray.util.state import list_actors
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
name = "_ray_internal_job_actor_" + sys.argv[2]
if sys.argv[3] == "0":
    ray.kill(ray.get_actor(name, namespace="SUPERVISOR_ACTOR_RAY_NAMESPACE"), no_restart=True)
else:
    [pid] = [a.pid for a in list_actors(address=sys.argv[4], limit=10000) if a.name == name and a.state == "ALIVE"]
    os.kill(pid, signal.SIGKILL)
    os.kill(int(sys.argv[3]), signal.SIGKILL)`, gcs, j.SubmissionID, driverPID, e.client.Address()).CombinedOutput()
			if kerr != nil {
				kerr = fmt.Errorf("killing the supervisor: %v: %s", kerr, out)
			}
			killed <- kerr
		})
		return err
	}
	start := time.Now()
	res, err := Run(context.Background(), api, e.python, spec, RunOptions{PollInterval: 100 * time.Millisecond, Timing: timing})
	if kerr := <-killed; kerr != nil {
		t.Fatal(kerr)
	}
	t.Logf("after %v: %d launches, err = %v", time.Since(start).Round(time.Millisecond), len(api.submits()), err)
	if !supervisorDied && !driverKilled {
		t.Fatal("Ray reported neither the supervisor dead nor the driver killed")
	}
	return lossOutcome{res: res, err: err, submits: api.submits(), supervisorDied: supervisorDied}
}

type lossOutcome struct {
	res     *contract.Result
	err     error
	submits []rayclient.JobSubmitRequest
	// supervisorDied is whether Ray reported the supervisor dead, rather
	// than the driver killed (which ray.kill sometimes does).
	supervisorDied bool
}

// neverFits is a create that waits out its ready timeout.
func (e *accEnv) neverFits(timeout int) contract.Request {
	spec := e.spec(contract.ActionCreate, contract.RequestGroup{Name: "lost", Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 0.01, "GPU": 99}}})
	spec.Probe.UseGPUs, spec.ReadyTimeoutSeconds = false, timeout
	return spec
}

// Guarantee: a driver that outlives its lost supervisor is waited for, and
// its result reported, instead of a second driver racing it.
func TestAccRunnerWaitsForDriverRayLost(t *testing.T) {
	e := newAccEnv(t)
	o := e.loseSupervisor(t, e.neverFits(10), false, nil)
	res, err, subs := o.res, o.err, o.submits
	launches := 1 // the surviving driver's result is used
	if !o.supervisorDied {
		launches = 2 // the driver was killed with its supervisor: relaunched
		t.Log("ray.kill killed the driver too; the run was relaunched")
	}
	var de *contract.DriverError
	if len(subs) != launches || !errors.As(err, &de) || (de.Kind != contract.KindTimeout && de.Kind != contract.KindInfeasible) ||
		res == nil || res.RunID != subs[launches-1].Metadata[metaRun] {
		t.Fatalf("res = %+v, err = %v, launches %d", res, err, len(subs))
	}
}

// Guarantee: a job Ray lost with its driver is relaunched, and the result
// is the relaunched driver's.
func TestAccRunnerRelaunchesJobRayLost(t *testing.T) {
	e := newAccEnv(t)
	timing := DefaultRunTiming()
	timing.GhostSlack = 5 * time.Second
	o := e.loseSupervisor(t, e.neverFits(15), true, &timing)
	res, err, subs := o.res, o.err, o.submits
	var de *contract.DriverError
	if len(subs) != 2 || !errors.As(err, &de) || (de.Kind != contract.KindTimeout && de.Kind != contract.KindInfeasible) ||
		res == nil || res.RunID != subs[1].Metadata[metaRun] {
		t.Fatalf("res = %+v, err = %v, launches %d", res, err, len(subs))
	}
}

// Guarantee: a stopped driver's cleanup is reported.
func TestAccRunnerStopReportsCleanup(t *testing.T) {
	e := newAccEnv(t)
	spec := e.spec(contract.ActionCreate,
		contract.RequestGroup{Name: "stop-fits", Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 0.01}}},
		contract.RequestGroup{Name: "stop-huge", Strategy: "PACK", Bundles: []map[string]float64{{"GPU": 99}}})
	spec.Probe.UseGPUs, spec.ReadyTimeoutSeconds = false, 300
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the driver has created the groups and waits for them.
	_, err := Run(ctx, e.client, e.python, spec, RunOptions{PollInterval: 100 * time.Millisecond, OnProgress: func(p Progress) {
		if p.Phase == "waiting" {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "removed the groups it had created") {
		t.Fatalf("err = %v", err)
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Errorf("left behind: %v", mapKeys(live))
	}
}
