package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// fakeAPI mimics the Ray job API closely enough for Run: job records with
// statuses, and log files that - like Ray's - survive DeleteJob and are
// appended to when a submission id is reused.
type fakeAPI struct {
	mu       sync.Mutex
	jobs     map[string]*fakeJob
	logs     map[string]string
	calls    []string
	behavior func(j *fakeJob) // advances a job on each GetJob
	// deleteFails makes DeleteJob of these ids fail.
	deleteFails map[string]bool
	submitErr   error
	// liveStops counts StopJob calls that hit a running job or a ghost.
	liveStops int
}

type fakeJob struct {
	details rayclient.JobDetails
	runID   string
	polls   int
	stopped bool
	api     *fakeAPI
	// ghost: a supervisor still runs the driver although the job is terminal;
	// onStop is what the driver prints when stopped.
	ghost  bool
	onStop func(j *fakeJob)
	// lingering: StopJob calls for which the finished job's supervisor is
	// still alive.
	lingering int
}

func (j *fakeJob) log(s string) { j.api.logs[j.details.SubmissionID] += s }

func newFake(behavior func(j *fakeJob)) *fakeAPI {
	resetRecent()
	return &fakeAPI{jobs: map[string]*fakeJob{}, logs: map[string]string{}, behavior: behavior, deleteFails: map[string]bool{}}
}

func (f *fakeAPI) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeAPI) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func notFound(id string) error {
	return &rayclient.APIError{StatusCode: 404, Method: "GET", Path: "/api/jobs/" + id, Message: "Job " + id + " does not exist"}
}

func (f *fakeAPI) SubmitJob(ctx context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("submit %s", req.SubmissionID)
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	if _, ok := f.jobs[req.SubmissionID]; ok {
		return nil, &rayclient.APIError{StatusCode: 500, Method: "POST", Path: "/api/jobs/",
			Message: "Job with submission_id " + req.SubmissionID + " already exists. Please use a different submission_id."}
	}
	j := f.addJob(req.SubmissionID, req.Entrypoint, rayclient.JobStatusPending)
	j.log("2026-12-02 13:27:09,463\tINFO job_manager.py:581 -- Runtime env is setting up.\n")
	return &rayclient.JobSubmitResponse{JobID: req.SubmissionID, SubmissionID: req.SubmissionID}, nil
}

func (f *fakeAPI) addJob(id, entrypoint, status string) *fakeJob {
	j := &fakeJob{api: f, runID: runIDFromEntrypoint(entrypoint), details: rayclient.JobDetails{
		Type: rayclient.JobTypeSubmission, SubmissionID: id, Status: status, Entrypoint: entrypoint}}
	f.jobs[id] = j
	return j
}

func (f *fakeAPI) GetJob(ctx context.Context, id string) (*rayclient.JobDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("get %s", id)
	j, ok := f.jobs[id]
	if !ok {
		return nil, notFound(id)
	}
	if !rayclient.IsTerminalStatus(j.details.Status) {
		j.polls++
		if j.polls == 1 && j.details.Status == rayclient.JobStatusPending {
			j.details.Status = rayclient.JobStatusRunning
			j.log("Running entrypoint for job " + id + ": " + j.details.Entrypoint + "\n")
		}
		if f.behavior != nil {
			f.behavior(j)
		}
	}
	d := j.details
	return &d, nil
}

func (f *fakeAPI) GetJobLogs(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("logs %s", id)
	if _, ok := f.jobs[id]; !ok {
		return "", notFound(id)
	}
	return f.logs[id], nil
}

func (f *fakeAPI) StopJob(ctx context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("stop %s", id)
	j, ok := f.jobs[id]
	if !ok {
		return false, notFound(id)
	}
	if j.ghost {
		f.liveStops++
		j.ghost = false
		if j.onStop != nil {
			j.onStop(j)
		}
		return true, nil
	}
	if rayclient.IsTerminalStatus(j.details.Status) {
		if j.lingering > 0 {
			j.lingering--
			return true, nil
		}
		return false, nil
	}
	f.liveStops++
	j.stopped = true
	return true, nil
}

func (f *fakeAPI) DeleteJob(ctx context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("delete %s", id)
	j, ok := f.jobs[id]
	if !ok {
		return false, notFound(id)
	}
	if f.deleteFails[id] {
		return false, &rayclient.APIError{StatusCode: 500, Method: "DELETE", Path: "/api/jobs/" + id, Message: "storage unavailable"}
	}
	if !rayclient.IsTerminalStatus(j.details.Status) {
		return false, &rayclient.APIError{StatusCode: 500, Method: "DELETE", Path: "/api/jobs/" + id, Message: "non-terminal state"}
	}
	delete(f.jobs, id) // the log file stays, as in Ray
	return true, nil
}

func resultLine(runID string, ok bool, extra string) string {
	errPart := `null`
	if !ok {
		errPart = `{"kind": "timeout", "message": "group \"g\" bundle 0 needs {\"GPU\": 1}"}`
	}
	return fmt.Sprintf("\nRAYTF_RESULT {\"ok\": %t, \"action\": \"create\", \"error\": %s, \"groups\": [], \"removed\": [%s], \"missing\": [], \"ray_version\": \"2.60.0\", \"run_id\": %q}\n",
		ok, errPart, extra, runID)
}

// succeedAfter finishes a job after n polls with progress and an ok result.
func succeedAfter(n int) func(j *fakeJob) {
	return func(j *fakeJob) {
		if j.polls == 2 {
			j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"waiting","ready":0,"total":2,"run_id":%q}`+"\n", j.runID))
		}
		if j.polls >= n {
			j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"waiting","ready":2,"total":2,"run_id":%q}`+"\n", j.runID))
			j.log(resultLine(j.runID, true, ""))
			j.details.Status = rayclient.JobStatusSucceeded
		}
	}
}

var fastOpts = RunOptions{PollInterval: time.Millisecond}

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") == "" {
		// The fake has no job monitor to wait for or to resurrect records.
		recordSettle, resurrectionChecks = 0, 0
	}
	os.Exit(m.Run())
}

func resetRecent() {
	recent.Lock()
	defer recent.Unlock()
	recent.used = map[string]time.Time{}
}

// fastRelaunch shortens the relaunch pause for one test.
func fastRelaunch(t *testing.T) {
	old := relaunchDelay
	relaunchDelay = time.Millisecond
	t.Cleanup(func() { relaunchDelay = old })
}

func TestRunSuccess(t *testing.T) {
	f := newFake(succeedAfter(3))
	var phases []string
	opts := fastOpts
	opts.OnProgress = func(p Progress) { phases = append(phases, fmt.Sprintf("%s %d/%d", p.Phase, p.Ready, p.Total)) }
	opts.RuntimeEnv = map[string]any{"env_vars": map[string]string{"A": "b"}}
	res, err := Run(context.Background(), f, "python", createSpec("g"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.RayVersion != "2.60.0" {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(phases, ","); got != "waiting 0/2,waiting 2/2" {
		t.Errorf("progress = %q", got)
	}
	id := SubmissionID(createSpec("g"), 0)
	if f.count("submit "+id) != 1 || f.count("delete "+id) != 1 {
		t.Errorf("calls = %v", f.calls)
	}
	if len(f.jobs) != 0 {
		t.Error("job record not deleted")
	}
}

func TestRunDeletesRecordAfterSupervisorExits(t *testing.T) {
	f := newFake(nil)
	ok := succeedAfter(2)
	f.behavior = func(j *fakeJob) {
		ok(j)
		j.lingering = 3
	}
	if _, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts); err != nil {
		t.Fatal(err)
	}
	stops, deleted := 0, false
	for _, c := range f.calls {
		switch {
		case strings.HasPrefix(c, "stop "):
			stops++
		case strings.HasPrefix(c, "delete "):
			deleted = true
			if stops != 4 {
				t.Errorf("deleted after %d stop polls, want 4 (3 alive + 1 gone)", stops)
			}
		}
	}
	if !deleted {
		t.Errorf("not deleted: %v", f.calls)
	}
}

func TestRunDriverError(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		j.log(resultLine(j.runID, false, `"g"`))
		j.details.Status = rayclient.JobStatusFailed
		j.details.Message = "Job entrypoint command failed with exit code 1"
	})
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	var de *DriverError
	if !errors.As(err, &de) || de.Kind != KindTimeout || !strings.Contains(de.Message, `needs {"GPU": 1}`) {
		t.Fatalf("err = %v", err)
	}
	if res == nil || len(res.Removed) != 1 {
		t.Fatalf("result = %+v", res)
	}
}

func TestRunAttachesToRunningJob(t *testing.T) {
	spec := createSpec("g")
	id := SubmissionID(spec, 0)
	f := newFake(succeedAfter(3))
	// An earlier Run of the same spec (other run id) is still running.
	old := spec
	old.RunID = "earlier"
	ep, _ := Entrypoint("python", old)
	f.addJob(id, ep, rayclient.JobStatusRunning)
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != "earlier" || !res.OK {
		t.Fatalf("result = %+v", res)
	}
	if f.count("submit ") != 1 || f.liveStops != 0 {
		t.Errorf("calls = %v", f.calls)
	}
}

func TestRunReplacesFinishedJob(t *testing.T) {
	spec := createSpec("g")
	id := SubmissionID(spec, 0)
	f := newFake(succeedAfter(2))
	old := f.addJob(id, "python old", rayclient.JobStatusSucceeded)
	// Its log holds a result of the old run; Ray keeps the file and appends.
	old.log("Running entrypoint for job " + id + ": python old\n" + resultLine("oldrun", false, ""))
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.RunID == "oldrun" {
		t.Fatalf("took the stale result: %+v", res)
	}
	// The old record is deleted, and the job goes under the next id: Ray's
	// supervisor actor of the old job may still hold the old one.
	id1 := SubmissionID(spec, 1)
	if f.count("submit "+id) != 1 || f.count("delete "+id) != 1 || f.count("submit "+id1) != 1 || f.count("delete "+id1) != 1 {
		t.Errorf("calls = %v", f.calls)
	}
}

func TestRunRelaunchesJobRayCouldNotStart(t *testing.T) {
	fastRelaunch(t)
	spec := createSpec("g")
	id0, id1 := SubmissionID(spec, 0), SubmissionID(spec, 1)
	ok := succeedAfter(3)
	f := newFake(nil)
	f.behavior = func(j *fakeJob) {
		if j.details.SubmissionID == id0 {
			j.details.Status = rayclient.JobStatusFailed
			j.details.ErrorType = "JOB_SUPERVISOR_ACTOR_START_FAILURE"
			j.details.Message = "Failed to start supervisor actor: name is already taken"
			return
		}
		ok(j)
	}
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || f.count("submit "+id1) != 1 || f.count("delete "+id0) != 1 {
		t.Fatalf("res = %+v, calls = %v", res, f.calls)
	}
}

func TestRunUsesResultOfDriverRayMarkedFailed(t *testing.T) {
	// Ray marks the job FAILED (stale monitor of an earlier job with this id)
	// while its driver still runs; stopping it makes the driver report.
	f := newFake(func(j *fakeJob) {
		j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"started","run_id":%q}`+"\n", j.runID))
		j.details.Status = rayclient.JobStatusFailed
		j.details.ErrorType = "JOB_SUPERVISOR_ACTOR_DIED"
		j.details.Message = "Job supervisor actor died"
		j.ghost = true
		j.onStop = func(j *fakeJob) { j.log(resultLine(j.runID, true, "")) }
	})
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err != nil || !res.OK || f.count("submit ") != 1 || f.liveStops != 1 {
		t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
	}
}

func TestRunRelaunchesWhenRayKilledDriver(t *testing.T) {
	fastRelaunch(t)
	spec := createSpec("g")
	id0 := SubmissionID(spec, 0)
	ok := succeedAfter(3)
	f := newFake(nil)
	f.behavior = func(j *fakeJob) {
		if j.details.SubmissionID != id0 {
			ok(j)
			return
		}
		// The driver started, then Ray lost the job; the stopped ghost
		// reports its (cleaned-up) interruption.
		j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"started","run_id":%q}`+"\n", j.runID))
		j.details.Status = rayclient.JobStatusFailed
		j.details.ErrorType = "JOB_SUPERVISOR_ACTOR_DIED"
		j.ghost = true
		j.onStop = func(j *fakeJob) { j.log(resultLine(j.runID, false, `"g"`)) }
	}
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil || !res.OK || f.count("submit ") != 2 {
		t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
	}
}

func TestRunGivesUpRelaunching(t *testing.T) {
	fastRelaunch(t)
	f := newFake(func(j *fakeJob) {
		j.details.Status = rayclient.JobStatusFailed
		j.details.ErrorType = "JOB_SUPERVISOR_ACTOR_START_FAILURE"
		j.details.Message = "Failed to start supervisor actor"
	})
	_, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err == nil || !strings.Contains(err.Error(), "Failed to start supervisor actor") || f.count("submit ") != relaunches+1 {
		t.Fatalf("err = %v, calls = %v", err, f.calls)
	}
}

func TestRunUsesNextIDWhenRecordCannotBeDeleted(t *testing.T) {
	spec := createSpec("g")
	id0, id1 := SubmissionID(spec, 0), SubmissionID(spec, 1)
	f := newFake(succeedAfter(2))
	f.addJob(id0, "python old", rayclient.JobStatusFailed)
	f.deleteFails[id0] = true
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || f.count("submit "+id1) != 1 {
		t.Fatalf("calls = %v", f.calls)
	}
}

func TestRunIgnoresStaleResultWhenNewRunCrashes(t *testing.T) {
	spec := createSpec("g")
	id := SubmissionID(spec, 0)
	f := newFake(func(j *fakeJob) {
		j.log("Traceback (most recent call last):\nModuleNotFoundError: No module named 'ray'\n")
		j.details.Status = rayclient.JobStatusFailed
		j.details.Message = "Job entrypoint command failed with exit code 1, last available logs: ..."
		code := 1
		j.details.DriverExitCode = &code
	})
	f.logs[id] = "Running entrypoint for job " + id + ": python old\n" + resultLine("oldrun", true, "")
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err == nil || res != nil {
		t.Fatalf("stale result accepted: %+v", res)
	}
	for _, want := range []string{"FAILED", "exit code 1", "printed no result", "No module named 'ray'", "Ray: Job entrypoint command failed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "python old") {
		t.Errorf("tail includes the old run's log:\n%v", err)
	}
}

func TestRunFailedWithoutResult(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		j.log("\x1b[31mSegmentation fault\x1b[0m\n")
		j.details.Status = rayclient.JobStatusFailed
		j.details.Message = "Job entrypoint command failed with exit code 139"
	})
	_, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err == nil || !strings.Contains(err.Error(), "Segmentation fault") || strings.Contains(err.Error(), "\x1b") ||
		!strings.Contains(err.Error(), "exit code 139") {
		t.Fatalf("err = %v", err)
	}
	if len(f.jobs) != 0 {
		t.Error("failed job record not deleted")
	}
}

func TestRunStopsJobOnCancel(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		if j.stopped { // the driver's SIGTERM handler cleans up
			j.log(resultLine(j.runID, false, `"g"`))
			j.details.Status = rayclient.JobStatusStopped
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, f, "python", createSpec("g"), fastOpts)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if res != nil {
		t.Errorf("result = %+v", res)
	}
	if !strings.Contains(err.Error(), "removed the groups it had created (g)") || !strings.Contains(err.Error(), "job stopped") {
		t.Errorf("err = %v", err)
	}
	if f.liveStops != 1 || len(f.jobs) != 0 {
		t.Errorf("calls = %v", f.calls)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("cancel took too long")
	}
}

func TestRunCancelKeepsFinishedResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(func(j *fakeJob) {
		if j.polls == 2 {
			// Finishes just as the caller gives up.
			j.log(resultLine(j.runID, true, ""))
			j.details.Status = rayclient.JobStatusRunning
			cancel()
		}
		if j.stopped {
			j.details.Status = rayclient.JobStatusSucceeded
		}
	})
	res, err := Run(ctx, f, "python", createSpec("g"), fastOpts)
	if !errors.Is(err, context.Canceled) || res == nil || !res.OK {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

func TestRunSubmitErrors(t *testing.T) {
	f := newFake(nil)
	f.submitErr = &rayclient.APIError{StatusCode: 400, Method: "POST", Path: "/api/jobs/", Message: "bad runtime_env"}
	if _, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts); err == nil || !strings.Contains(err.Error(), "bad runtime_env") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Run(context.Background(), f, "python", Spec{Action: "nope"}, fastOpts); err == nil {
		t.Fatal("invalid spec accepted")
	}
	if _, err := Run(context.Background(), nil, "python", createSpec("g"), fastOpts); err == nil {
		t.Fatal("nil api accepted")
	}
}

func TestRunJobVanishes(t *testing.T) {
	f := newFake(nil)
	f.behavior = func(j *fakeJob) {
		if j.polls == 2 {
			delete(f.jobs, j.details.SubmissionID)
		}
	}
	_, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err == nil || !strings.Contains(err.Error(), "disappeared") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunIDFromEntrypoint(t *testing.T) {
	s := createSpec("g")
	s.RunID = "abc123"
	ep, _ := Entrypoint("/x y/python", s)
	if got := runIDFromEntrypoint(ep); got != "abc123" {
		t.Fatalf("got %q", got)
	}
	for _, ep := range []string{"", "python", "python x 'not-base64!'", "python -c x 'bm90IGpzb24='"} {
		if got := runIDFromEntrypoint(ep); got != "" {
			t.Errorf("runIDFromEntrypoint(%q) = %q", ep, got)
		}
	}
}

func TestRunSkipsIDsUsedMomentsAgo(t *testing.T) {
	spec := createSpec("g")
	f := newFake(succeedAfter(2))
	for i := 0; i < 3; i++ {
		if _, err := Run(context.Background(), f, "python", spec, fastOpts); err != nil {
			t.Fatal(err)
		}
		if id := SubmissionID(spec, i); f.count("submit "+id) != 1 {
			t.Fatalf("run %d did not use %s: %v", i, id, f.calls)
		}
	}
	if f.count("submit ") != 3 {
		t.Errorf("calls = %v", f.calls)
	}
}

func TestSweepResurrected(t *testing.T) {
	old := resurrectionDelay
	resurrectionDelay = time.Millisecond
	defer func() { resurrectionDelay = old }()
	checks := resurrectionChecks
	resurrectionChecks = 3
	defer func() { resurrectionChecks = checks }()

	f := newFake(nil)
	j := f.addJob("zombie", "Entrypoint not found.", rayclient.JobStatusFailed)
	j.details.ErrorType = "JOB_SUPERVISOR_ACTOR_DIED"
	live := f.addJob("live", "python -c x", rayclient.JobStatusRunning)
	failed := f.addJob("failed", "python -c x", rayclient.JobStatusFailed)
	failed.details.ErrorType = "JOB_ENTRYPOINT_COMMAND_ERROR"
	failed.details.StartTime = 1
	for _, id := range []string{"zombie", "live", "failed", "absent"} {
		sweepResurrected(f, id)
	}
	if _, ok := f.jobs["zombie"]; ok {
		t.Error("resurrected record kept")
	}
	if f.jobs["live"] != live || f.jobs["failed"] != failed {
		t.Error("a real job record was deleted")
	}
}
