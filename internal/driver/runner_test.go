package driver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// fakeAPI mimics the Ray job API closely enough for Run: job records with
// statuses, metadata and end times, and log files that - like Ray's -
// survive DeleteJob.
type fakeAPI struct {
	mu       sync.Mutex
	jobs     map[string]*fakeJob
	logs     map[string]string
	calls    []string
	behavior func(j *fakeJob) // advances a job on each GetJob
	// submitErr fails SubmitJob; with submitLost the job is created anyway
	// (the answer was lost on the way back).
	submitErr  error
	submitLost bool
	// firstSubmit is when SubmitJob was first called.
	firstSubmit time.Time
	listErr     error
	// staleLog is put in front of every new job's log, as if Ray appended
	// to the file of an older run.
	staleLog string
	// onLogs runs on every GetJobLogs of a known job.
	onLogs func(j *fakeJob)
	// liveStops counts StopJob calls that hit a running job.
	liveStops int
}

type fakeJob struct {
	details rayclient.JobDetails
	runID   string
	polls   int
	stopped bool
	api     *fakeAPI
	// lingering: StopJob calls for which the finished job's supervisor is
	// still alive.
	lingering int
}

func (j *fakeJob) log(s string) { j.api.logs[j.details.SubmissionID] += s }

func (j *fakeJob) end(status string) {
	j.details.Status = status
	j.details.EndTime = time.Now().UnixMilli()
}

func newFake(behavior func(j *fakeJob)) *fakeAPI {
	return &fakeAPI{jobs: map[string]*fakeJob{}, logs: map[string]string{}, behavior: behavior}
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

// submitted lists the submission ids in order.
func (f *fakeAPI) submitted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if id, ok := strings.CutPrefix(c, "submit "); ok {
			out = append(out, id)
		}
	}
	return out
}

func notFound(id string) error {
	return &rayclient.APIError{StatusCode: 404, Method: "GET", Path: "/api/jobs/" + id, Message: "Job " + id + " does not exist"}
}

func (f *fakeAPI) SubmitJob(ctx context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("submit %s", req.SubmissionID)
	if f.firstSubmit.IsZero() {
		f.firstSubmit = time.Now()
	}
	if f.submitErr != nil && !f.submitLost {
		return nil, f.submitErr
	}
	if _, ok := f.jobs[req.SubmissionID]; ok {
		return nil, &rayclient.APIError{StatusCode: 500, Method: "POST", Path: "/api/jobs/",
			Message: "Job with submission_id " + req.SubmissionID + " already exists. Please use a different submission_id."}
	}
	j := f.addJob(req.SubmissionID, req.Metadata, rayclient.JobStatusPending)
	j.log(f.staleLog)
	j.log("2026-12-02 13:27:09,463\tINFO job_manager.py:581 -- Runtime env is setting up.\n")
	if f.submitErr != nil {
		return nil, f.submitErr
	}
	return &rayclient.JobSubmitResponse{JobID: req.SubmissionID, SubmissionID: req.SubmissionID}, nil
}

func (f *fakeAPI) addJob(id string, meta map[string]string, status string) *fakeJob {
	j := &fakeJob{api: f, runID: meta[metaRun], details: rayclient.JobDetails{
		Type: rayclient.JobTypeSubmission, SubmissionID: id, Status: status, Entrypoint: "python -c ...",
		Metadata: meta, StartTime: time.Now().UnixMilli()}}
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
			j.log("Running entrypoint for job " + id + ": python -c ...\n")
		}
		if f.behavior != nil {
			f.behavior(j)
		}
	}
	d := j.details
	return &d, nil
}

func (f *fakeAPI) ListJobs(ctx context.Context) ([]rayclient.JobDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("list")
	if f.listErr != nil {
		return nil, f.listErr
	}
	out := []rayclient.JobDetails{}
	for _, j := range f.jobs {
		out = append(out, j.details)
	}
	return out, nil
}

func (f *fakeAPI) GetJobLogs(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("logs %s", id)
	j, ok := f.jobs[id]
	if !ok {
		return "", notFound(id)
	}
	if f.onLogs != nil {
		f.onLogs(j)
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
			j.end(rayclient.JobStatusSucceeded)
		}
	}
}

// loseJob makes Ray fail the job as if its supervisor actor had died, or
// had never started (so it never launched the driver).
func loseJob(j *fakeJob, errorType string) {
	if errorType == "JOB_SUPERVISOR_ACTOR_START_FAILURE" {
		id := j.details.SubmissionID
		j.api.logs[id] = strings.ReplaceAll(j.api.logs[id], entrypointHeader, "")
	}
	j.end(rayclient.JobStatusFailed)
	j.details.ErrorType = errorType
	j.details.Message = "Job supervisor actor died"
}

// fastOpts: the fake has no job monitor to wait for, and its lost drivers
// never live on.
var fastOpts = RunOptions{PollInterval: time.Millisecond, Timing: &RunTiming{}}

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
	ids := f.submitted()
	if len(ids) != 1 || f.count("delete "+ids[0]) != 1 || ids[0] != "raytf_create_g_"+res.RunID {
		t.Errorf("calls = %v", f.calls)
	}
	if len(f.jobs) != 0 {
		t.Error("job record not deleted")
	}
}

// Guarantee: while the driver probes (its last phase), wait reads the logs
// between status polls and returns on the read that holds the result, the
// job still RUNNING; before that phase every logs read follows a status poll.
func TestWaitReadsLogsForResultWhileProbing(t *testing.T) {
	const id, runID = "raytf_create_g_run1", "run1"
	probingAt := -1 // index in f.calls of the status poll that logged probing
	f := newFake(func(j *fakeJob) {
		if j.polls == 3 {
			j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":%q,"ready":0,"total":2,"run_id":%q}`+"\n", PhaseProbing, runID))
			probingAt = len(j.api.calls) - 1
		}
	})
	f.addJob(id, map[string]string{metaRun: runID}, rayclient.JobStatusRunning)
	printedAt, logsAfterProbing := -1, 0
	f.onLogs = func(j *fakeJob) {
		if probingAt < 0 {
			return
		}
		if logsAfterProbing++; logsAfterProbing == 4 { // Ray still shows the job RUNNING
			j.log(resultLine(runID, true, ""))
			printedAt = len(j.api.calls) - 1
		}
	}
	r := &runner{api: f, opts: RunOptions{PollInterval: 200 * time.Millisecond}, id: id, runID: runID}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	job, err := r.wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if job.Status != rayclient.JobStatusRunning || printedAt != len(f.calls)-1 || !strings.Contains(r.logs, "RAYTF_RESULT") {
		t.Fatalf("wait = %s, want RUNNING at the read that held the result (call %d): %v", job.Status, printedAt, f.calls)
	}
	if !strings.HasPrefix(f.calls[printedAt-1], "logs ") {
		t.Errorf("the result was not seen by a logs-only read: %v", f.calls)
	}
	for i, c := range f.calls[:probingAt] {
		if strings.HasPrefix(c, "logs ") && !strings.HasPrefix(f.calls[i-1], "get ") {
			t.Errorf("logs read without a status poll before the probing phase: %v", f.calls)
		}
	}
}

// Guarantee: a batch reads its logs between status polls only once every
// request of it probes or has its result; a single request once it probes.
func TestLastPhase(t *testing.T) {
	line := func(run, phase string) Progress { return Progress{RunID: run, Phase: phase} }
	for _, tc := range []struct {
		name     string
		progress []Progress
		batch    int
		want     bool
	}{
		{"nothing yet", nil, 0, false},
		{"waiting", []Progress{line("r", PhaseWaiting)}, 0, false},
		{"probing", []Progress{line("r", PhaseWaiting), line("r", PhaseProbing)}, 0, true},
		{"batch: one still waiting", []Progress{line("r", PhaseStarted), line("r.0", PhaseProbing), line("r.1", PhaseWaiting)}, 2, false},
		{"batch: one not started", []Progress{line("r", PhaseStarted), line("r.0", PhaseProbing)}, 2, false},
		{"batch: probing and done", []Progress{line("r", PhaseStarted), line("r.0", PhaseResult), line("r.1", PhaseProbing)}, 2, true},
		{"batch: a delete removing", []Progress{line("r.0", PhaseResult), line("r.1", PhaseRemoving)}, 2, false},
	} {
		if got := lastPhase(tc.progress, tc.batch); got != tc.want {
			t.Errorf("%s: lastPhase = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// Guarantee: every phase Go names is one driver.py reports.
func TestProgressPhasesInDriver(t *testing.T) {
	for _, phase := range []string{PhaseStarted, PhaseCreated, PhaseWaiting, PhaseProbing, PhaseRemoving, PhaseResult} {
		if !strings.Contains(string(driverSource), fmt.Sprintf(`, %q`, phase)) {
			t.Errorf("driver.py reports no progress phase %q", phase)
		}
	}
}

// Guarantee: a retried apply attaches to the job already running.
func TestRunAttachesToRunningJob(t *testing.T) {
	spec := createSpec("g")
	f := newFake(succeedAfter(3))
	// An earlier Run of the same spec is still running; so is a job of
	// another spec, which must not be taken.
	f.addJob("raytf_create_g_earlier", map[string]string{metaCreatedBy: createdBy, metaSpec: specKey(spec), metaRun: "earlier"}, rayclient.JobStatusRunning)
	other := createSpec("h")
	f.addJob("raytf_create_h_other", map[string]string{metaCreatedBy: createdBy, metaSpec: specKey(other), metaRun: "other"}, rayclient.JobStatusRunning)
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID != "earlier" || !res.OK {
		t.Fatalf("result = %+v", res)
	}
	if f.count("submit ") != 0 || f.liveStops != 0 || f.count("get raytf_create_h_other") != 0 {
		t.Errorf("calls = %v", f.calls)
	}
}

// Guarantee: a job that already printed its result (Run returned on it while
// Ray still shows it RUNNING) is not taken by the next identical request,
// which runs its own driver.
func TestRunDoesNotAttachToReportedJob(t *testing.T) {
	spec := createSpec("g")
	f := newFake(succeedAfter(3))
	done := f.addJob("raytf_create_g_done", map[string]string{metaCreatedBy: createdBy, metaSpec: specKey(spec), metaRun: "done"}, rayclient.JobStatusRunning)
	done.log(resultLine("done", true, ""))
	res, err := Run(context.Background(), f, "python", spec, fastOpts)
	if err != nil {
		t.Fatal(err)
	}
	if res.RunID == "done" || f.count("submit ") != 1 {
		t.Fatalf("result %+v after calls %v: want a fresh run", res, f.calls)
	}
}

// Guarantee: every launch has an id of its own, so nothing waits for an
// older job's teardown.
func TestRunSubmitsFreshIDs(t *testing.T) {
	spec := createSpec("g")
	f := newFake(succeedAfter(2))
	for i := 0; i < 3; i++ {
		if _, err := Run(context.Background(), f, "python", spec, fastOpts); err != nil {
			t.Fatal(err)
		}
	}
	ids := f.submitted()
	if len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] || len(f.jobs) != 0 {
		t.Errorf("ids = %v, records left %d", ids, len(f.jobs))
	}
}

// Guarantee: a lost submit response is reconciled.
func TestRunReconcilesLostSubmitResponse(t *testing.T) {
	f := newFake(succeedAfter(2))
	f.submitErr, f.submitLost = errors.New("connection reset by peer"), true
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err != nil || !res.OK || f.count("submit ") != 1 {
		t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
	}
}

func TestRunSubmitErrors(t *testing.T) {
	f := newFake(nil)
	f.submitErr = &rayclient.APIError{StatusCode: 400, Method: "POST", Path: "/api/jobs/", Message: "bad runtime_env"}
	if _, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts); err == nil || !strings.Contains(err.Error(), "bad runtime_env") {
		t.Fatalf("err = %v", err)
	}
	if f.liveStops != 0 {
		t.Errorf("calls = %v", f.calls)
	}
	if _, err := Run(context.Background(), f, "python", contract.Request{Action: "nope"}, fastOpts); err == nil {
		t.Fatal("invalid spec accepted")
	}
	if _, err := Run(context.Background(), nil, "python", createSpec("g"), fastOpts); err == nil {
		t.Fatal("nil api accepted")
	}
}

func TestRunSubmitsWhenListingFails(t *testing.T) {
	f := newFake(succeedAfter(2))
	f.listErr = errors.New("list timed out")
	if res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts); err != nil || !res.OK {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

// Guarantee: records left behind by earlier processes are cleaned up.
func TestRunDeletesOrphanedRecords(t *testing.T) {
	f := newFake(succeedAfter(2))
	ours := map[string]string{metaCreatedBy: createdBy, metaSpec: "x"}
	old := time.Now().Add(-2 * orphanAge).UnixMilli()
	f.addJob("orphan", ours, rayclient.JobStatusSucceeded).details.EndTime = old
	f.addJob("fresh", ours, rayclient.JobStatusFailed).end(rayclient.JobStatusFailed) // its Run may still read it
	lost := f.addJob("lost", ours, rayclient.JobStatusRunning)                        // its Run may wait for a driver that outlived it
	loseJob(lost, "JOB_SUPERVISOR_ACTOR_DIED")
	lost.details.EndTime = old
	f.addJob("foreign", nil, rayclient.JobStatusSucceeded).details.EndTime = old
	back := f.addJob("raytf_create_g_back", nil, rayclient.JobStatusPending) // written back by Ray's monitor
	back.end(rayclient.JobStatusFailed)
	back.details.Entrypoint = "Entrypoint not found."
	if _, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts); err != nil {
		t.Fatal(err)
	}
	_, orphan := f.jobs["orphan"]
	_, fresh := f.jobs["fresh"]
	_, foreign := f.jobs["foreign"]
	_, backKept := f.jobs["raytf_create_g_back"]
	if _, ok := f.jobs["lost"]; !ok {
		t.Error("record of a lost job deleted within the hour")
	}
	if orphan || !fresh || !foreign || backKept {
		t.Errorf("orphan kept %v, fresh kept %v, foreign kept %v, written-back kept %v", orphan, fresh, foreign, backKept)
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
		j.end(rayclient.JobStatusFailed)
		j.details.Message = "Job entrypoint command failed with exit code 1"
	})
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	var de *contract.DriverError
	if !errors.As(err, &de) || de.Kind != contract.KindTimeout || !strings.Contains(de.Message, `needs {"GPU": 1}`) {
		t.Fatalf("err = %v", err)
	}
	if res == nil || len(res.Removed) != 1 {
		t.Fatalf("result = %+v", res)
	}
}

// Guarantee: a job Ray lost is relaunched under a new id.
func TestRunRelaunchesJobRayLost(t *testing.T) {
	for _, errorType := range []string{"JOB_SUPERVISOR_ACTOR_START_FAILURE", "JOB_SUPERVISOR_ACTOR_DIED"} {
		t.Run(errorType, func(t *testing.T) {
			ok := succeedAfter(3)
			f := newFake(nil)
			f.behavior = func(j *fakeJob) {
				if j.details.SubmissionID == f.firstSubmitted() {
					j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"started","run_id":%q}`+"\n", j.runID))
					loseJob(j, errorType)
					return
				}
				ok(j)
			}
			spec := createSpec("g")
			spec.ReadyTimeoutSeconds = 1 // a lost driver that started is waited for 2s
			res, err := Run(context.Background(), f, "python", spec, fastOpts)
			ids := f.submitted()
			if err != nil || !res.OK || len(ids) != 2 || f.count("delete "+ids[0]) != 1 || res.RunID == "" {
				t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
			}
		})
	}
}

// firstSubmitted is the first submission id; the caller holds f.mu.
func (f *fakeAPI) firstSubmitted() string {
	for _, c := range f.calls {
		if id, ok := strings.CutPrefix(c, "submit "); ok {
			return id
		}
	}
	return ""
}

// Guarantee: a driver that outlives its lost supervisor is waited for, and
// no second one is launched beside it.
func TestRunWaitsForDriverRayLost(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		if j.details.Status == rayclient.JobStatusRunning && j.polls == 2 {
			loseJob(j, "JOB_SUPERVISOR_ACTOR_DIED")
		}
	})
	slow := fastOpts
	slow.Timing = &RunTiming{GhostSlack: time.Minute}
	logs := 0
	f.onLogs = func(j *fakeJob) {
		if logs++; logs == 3 {
			j.log(resultLine(j.runID, false, `"g"`))
		}
	}
	_, err := Run(context.Background(), f, "python", createSpec("g"), slow)
	var de *contract.DriverError
	if !errors.As(err, &de) || f.count("submit ") != 1 {
		t.Fatalf("err = %v, calls = %v", err, f.calls)
	}
}

// Guarantee: a driver killed by a signal (OOM killer, Ray) is relaunched.
func TestRunRelaunchesKilledDriver(t *testing.T) {
	ok := succeedAfter(3)
	f := newFake(nil)
	f.behavior = func(j *fakeJob) {
		if j.details.SubmissionID == f.firstSubmitted() {
			j.end(rayclient.JobStatusFailed)
			j.details.ErrorType = "JOB_ENTRYPOINT_COMMAND_ERROR"
			code := -9
			j.details.DriverExitCode = &code
			return
		}
		ok(j)
	}
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err != nil || !res.OK || f.count("submit ") != 2 {
		t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
	}
}

func TestRunUsesResultOfDriverRayMarkedFailed(t *testing.T) {
	// The driver reported, then Ray lost its supervisor: the result stands.
	f := newFake(func(j *fakeJob) {
		j.log(resultLine(j.runID, true, ""))
		loseJob(j, "JOB_SUPERVISOR_ACTOR_DIED")
	})
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err != nil || !res.OK || f.count("submit ") != 1 {
		t.Fatalf("res = %+v, err = %v, calls = %v", res, err, f.calls)
	}
}

func TestRunGivesUpRelaunching(t *testing.T) {
	f := newFake(func(j *fakeJob) { loseJob(j, "JOB_SUPERVISOR_ACTOR_START_FAILURE") })
	_, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
	if err == nil || !strings.Contains(err.Error(), "Job supervisor actor died") || f.count("submit ") != relaunches+1 {
		t.Fatalf("err = %v, calls = %v", err, f.calls)
	}
}

// Guarantee: output lines of other runs are ignored.
func TestRunIgnoresStaleResultWhenNewRunCrashes(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		j.log("Traceback (most recent call last):\nModuleNotFoundError: No module named 'ray'\n")
		j.end(rayclient.JobStatusFailed)
		j.details.Message = "Job entrypoint command failed with exit code 1, last available logs: ..."
		code := 1
		j.details.DriverExitCode = &code
	})
	f.staleLog = "Running entrypoint for job old: python old\n" + resultLine("oldrun", true, "")
	res, err := Run(context.Background(), f, "python", createSpec("g"), fastOpts)
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
		j.end(rayclient.JobStatusFailed)
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

// Guarantee: a stopped driver's cleanup is reported.
func TestRunStopsJobOnCancel(t *testing.T) {
	f := newFake(func(j *fakeJob) {
		if j.stopped { // the driver's SIGTERM handler cleans up
			j.log(resultLine(j.runID, false, `"g"`))
			j.end(rayclient.JobStatusStopped)
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

// Guarantee: a stopped driver's success is reported.
func TestRunCancelKeepsFinishedResult(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(func(j *fakeJob) {
		if j.polls == 2 {
			// Finishes just as the caller gives up.
			j.log(resultLine(j.runID, true, ""))
			cancel()
		}
		if j.stopped {
			j.end(rayclient.JobStatusSucceeded)
		}
	})
	res, err := Run(ctx, f, "python", createSpec("g"), fastOpts)
	if !errors.Is(err, context.Canceled) || res == nil || !res.OK {
		t.Fatalf("res = %+v, err = %v", res, err)
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

var submissionIDRE = regexp.MustCompile(`^raytf_[A-Za-z0-9-]{1,10}_[A-Za-z0-9_-]+_[A-Za-z0-9-]+$`)

func TestSubmissionID(t *testing.T) {
	a := createSpec("train-node0", "train-node1")
	a.RunID = "0123456789abcdef"
	if got := SubmissionID(a); got != "raytf_create_train-node0_train-node1_0123456789abcdef" {
		t.Errorf("id = %q", got)
	}
	b := a
	b.RunID = "fedcba9876543210"
	if SubmissionID(b) == SubmissionID(a) {
		t.Error("run id not in the submission id")
	}
	names := make([]string, 40)
	for i := range names {
		names[i] = strings.Repeat("x", 30) + "-ünï/'$`" + string(rune('a'+i%26))
	}
	long := createSpec(names...)
	long.Action = "create;rm -rf /"
	long.RunID = strings.Repeat("r", 100)
	for _, s := range []contract.Request{a, long, createSpec("🚀"), {Action: "../../etc", Groups: []contract.RequestGroup{{Name: "@@@"}}}} {
		if id := SubmissionID(s); len(id) > 100 || !submissionIDRE.MatchString(id) {
			t.Errorf("unsafe id %q", id)
		}
	}
}

func TestSpecKey(t *testing.T) {
	a, b := createSpec("g"), createSpec("g")
	b.RunID = "other"
	if specKey(a) != specKey(b) {
		t.Error("run id changes the spec key")
	}
	c := createSpec("g")
	c.Groups[0].Bundles[0]["GPU"] = 2
	if specKey(c) == specKey(a) || specKey(createSpec("h")) == specKey(a) {
		t.Error("different specs share a key")
	}
}
