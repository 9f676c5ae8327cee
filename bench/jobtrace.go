package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Call is one job-API call made by driver.Run, as seen by TracedJobs.
type Call struct {
	Op         string // list, submit, get, logs, stop, delete
	Start, End time.Time
	Status     string // job status for get
	Err        bool
}

// TracedJobs wraps the job API driver.Run uses and timestamps every call. It
// changes nothing about the calls: driver.Run makes exactly the requests it
// makes in the provider. On the local cluster it also reads the driver
// process's start time from /proc (the pid Ray reports in driver_info), which
// splits Ray's job-start latency from the interpreter's own start-up.
type TracedJobs struct {
	API driver.JobAPI

	mu        sync.Mutex
	calls     []Call
	lastJob   *rayclient.JobDetails
	lastLogs  string
	procStart time.Time
	// supStart is the job supervisor worker's start, resultAt the end of
	// the first logs call holding the driver's result (Observe only).
	supStart, resultAt time.Time
}

var _ driver.JobAPI = (*TracedJobs)(nil)

func (t *TracedJobs) record(op string, start time.Time, status string, err error) {
	t.mu.Lock()
	t.calls = append(t.calls, Call{Op: op, Start: start, End: time.Now(), Status: status, Err: err != nil})
	t.mu.Unlock()
}

// SubmitJob implements driver.JobAPI.
func (t *TracedJobs) SubmitJob(ctx context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error) {
	start := time.Now()
	r, err := t.API.SubmitJob(ctx, req)
	if err == nil { // a new launch: its own driver process and job record
		t.mu.Lock()
		t.procStart, t.lastJob = time.Time{}, nil
		t.mu.Unlock()
	}
	t.record("submit", start, "", err)
	return r, err
}

// GetJob implements driver.JobAPI.
func (t *TracedJobs) GetJob(ctx context.Context, id string) (*rayclient.JobDetails, error) {
	start := time.Now()
	j, err := t.API.GetJob(ctx, id)
	status := ""
	if err == nil {
		status = j.Status
		t.mu.Lock()
		t.lastJob = j
		if j.DriverInfo != nil && t.procStart.IsZero() {
			if pid, perr := strconv.Atoi(j.DriverInfo.PID); perr == nil && pid > 0 {
				if ps, ok := processStart(pid); ok {
					t.procStart = ps
				}
			}
		}
		t.mu.Unlock()
	}
	t.record("get", start, status, err)
	return j, err
}

// ListJobs implements driver.JobAPI.
func (t *TracedJobs) ListJobs(ctx context.Context) ([]rayclient.JobDetails, error) {
	start := time.Now()
	jobs, err := t.API.ListJobs(ctx)
	t.record("list", start, "", err)
	return jobs, err
}

// GetJobLogs implements driver.JobAPI.
func (t *TracedJobs) GetJobLogs(ctx context.Context, id string) (string, error) {
	start := time.Now()
	l, err := t.API.GetJobLogs(ctx, id)
	if err == nil {
		t.mu.Lock()
		t.lastLogs = l
		t.mu.Unlock()
	}
	t.record("logs", start, "", err)
	return l, err
}

// StopJob implements driver.JobAPI.
func (t *TracedJobs) StopJob(ctx context.Context, id string) (bool, error) {
	start := time.Now()
	ok, err := t.API.StopJob(ctx, id)
	t.record("stop", start, "", err)
	return ok, err
}

// DeleteJob implements driver.JobAPI.
func (t *TracedJobs) DeleteJob(ctx context.Context, id string) (bool, error) {
	start := time.Now()
	ok, err := t.API.DeleteJob(ctx, id)
	t.record("delete", start, "", err)
	return ok, err
}

// processStart returns when a local process started, from /proc/<pid>/stat
// (field 22, clock ticks since boot; USER_HZ is 100 on Linux) and
// /proc/uptime, with 10ms resolution.
func processStart(pid int) (time.Time, bool) {
	now := time.Now()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, false
	}
	up, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return time.Time{}, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return time.Time{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseFloat(f[19], 64) // field 22 overall
	if err != nil {
		return time.Time{}, false
	}
	uf := strings.Fields(string(up))
	if len(uf) == 0 {
		return time.Time{}, false
	}
	uptime, err := strconv.ParseFloat(uf[0], 64)
	if err != nil {
		return time.Time{}, false
	}
	age := uptime - ticks/100
	if age < 0 {
		return time.Time{}, false
	}
	return now.Add(-time.Duration(age * float64(time.Second))), true
}

// Phases is where one driver.Run spent its time, in order. The parts add up
// to Total (Other is the rest: Go-side gaps between calls).
type Phases struct {
	Total time.Duration
	// LiveCheck is what Create does before the driver: FetchSnapshot (GET
	// nodes, GET placement groups) and the segment and capacity checks.
	LiveCheck time.Duration
	// Submit is POST /api/jobs/.
	Submit time.Duration
	// JobStart is from the submission's answer until the driver's python
	// process started (Ray's job supervisor actor, runtime env, spawn).
	JobStart time.Duration
	// Interpreter is python start-up (estimated with cold processes of the
	// same run) plus `import ray` as the driver measured it (0 for a delete
	// that reached the GCS directly).
	Interpreter time.Duration
	// RayInit (ray.init, or the direct GCS connection) .. Remove come from
	// the driver's RAYTF_PROGRESS "elapsed".
	RayInit, CreateCalls, PlacementWait, Probe, Remove time.Duration
	// DriverExit is from the driver's last progress line until Ray recorded
	// the job's end (result line, exit, supervisor bookkeeping), or until a
	// poll found the result line in the logs when that came first.
	DriverExit time.Duration
	// PollLag is from Ray's end time until a status poll saw it (0 when the
	// result line was seen first).
	PollLag time.Duration
	// ResultFetch is fetching the final logs; ResultParse parsing them.
	ResultFetch, ResultParse time.Duration
	// DeleteRecord is the job-record cleanup after the result: from the
	// first stop/delete call to the end of DELETE /api/jobs/{id}, including
	// driver.Run's waits between them.
	DeleteRecord time.Duration
	Other        time.Duration
	// Calls is the number of job-API calls; Polls the status polls;
	// Launches the job submissions (more than 1 when Ray lost a job).
	Calls, Polls, Launches int
	// Split is false when the driver process start could not be read, in
	// which case JobStart holds JobStart+Interpreter+DriverExit.
	Split bool
}

// PhaseNames lists the Phases fields in timeline order, for tables.
var PhaseNames = []string{"live check", "submit", "job start", "python+import ray", "ray.init / GCS connect", "create calls",
	"placement wait", "probes", "remove calls", "driver exit", "poll lag", "result fetch", "result parse",
	"job record cleanup", "other"}

// Values returns the phases in PhaseNames order.
func (p Phases) Values() []time.Duration {
	return []time.Duration{p.LiveCheck, p.Submit, p.JobStart, p.Interpreter, p.RayInit, p.CreateCalls, p.PlacementWait,
		p.Probe, p.Remove, p.DriverExit, p.PollLag, p.ResultFetch, p.ResultParse, p.DeleteRecord, p.Other}
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// ComputePhases splits one traced driver.Run (started at start, returned at
// end) into Phases. progress holds the run's RAYTF_PROGRESS lines; interp is
// the cold python start-up estimate used to split the process's lifetime.
// live is the LiveCheck that preceded the run (0 for delete); it is added to Total.
func (t *TracedJobs) ComputePhases(start, end time.Time, live time.Duration, progress []driver.Progress, interp time.Duration) (Phases, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := Phases{Total: end.Sub(start) + live, LiveCheck: live, Calls: len(t.calls)}
	// Only the last launch counts for the job's own phases: driver.Run
	// resubmits a job that Ray lost (Launches > 1), and the earlier
	// launches' time shows up as "other".
	submitEnd, termSeen := t.lastLaunch(&p, end)
	if submitEnd.IsZero() || termSeen.IsZero() || t.lastJob == nil {
		return p, fmt.Errorf("trace incomplete (submitted %v, end seen %v)", !submitEnd.IsZero(), !termSeen.IsZero())
	}
	t.afterJobEnd(&p, termSeen)

	imports, last := driverPhases(&p, progress)
	jobEnd := termSeen
	if t.lastJob.EndTime > 0 && time.UnixMilli(t.lastJob.EndTime).Before(termSeen) {
		jobEnd = time.UnixMilli(t.lastJob.EndTime)
	}
	p.PollLag = termSeen.Sub(jobEnd)
	window := jobEnd.Sub(submitEnd) - secs(last) // job start + interpreter + exit
	if !t.procStart.IsZero() && t.procStart.After(submitEnd) && t.procStart.Before(jobEnd) {
		p.Split = true
		p.JobStart = t.procStart.Sub(submitEnd)
		rest := window - p.JobStart
		p.Interpreter = min(interp, rest)
		p.DriverExit = rest - p.Interpreter
		p.Interpreter += secs(imports)
	} else {
		p.JobStart = window
		p.Interpreter = secs(imports)
	}
	var sum time.Duration
	for _, v := range p.Values()[:len(PhaseNames)-1] {
		sum += v
	}
	p.Other = p.Total - sum
	return p, nil
}

// lastLaunch counts the job-API calls into p (submission time, launches,
// status polls) and returns when the last launch's submission ended and
// when its end was seen (zero when not). t.mu is held.
func (t *TracedJobs) lastLaunch(p *Phases, end time.Time) (submitEnd, termSeen time.Time) {
	for _, c := range t.calls {
		if c.Op == "list" { // driver.Run's look-up of a running job of the spec
			p.Submit += c.End.Sub(c.Start)
		}
		if c.Op == "submit" {
			p.Submit += c.End.Sub(c.Start)
			if !c.Err {
				submitEnd, termSeen = c.End, time.Time{}
				p.Launches++
			}
		}
		if c.Op == "get" {
			p.Polls++
			if !submitEnd.IsZero() && termSeen.IsZero() && rayclient.IsTerminalStatus(c.Status) {
				termSeen = c.End
			}
		}
	}
	if termSeen.IsZero() && !submitEnd.IsZero() {
		// driver.Run returned on the result line in the logs, before Ray
		// marked the job terminal: the poll that fetched it ends the job.
		for _, c := range t.calls {
			if c.Op == "logs" && c.Start.After(submitEnd) && !c.End.After(end) {
				termSeen = c.Start
			}
		}
	}
	return submitEnd, termSeen
}

// afterJobEnd adds to p what follows the job's end, seen at termSeen:
// fetching the result, deleting the job record, parsing the result. t.mu is
// held.
func (t *TracedJobs) afterJobEnd(p *Phases, termSeen time.Time) {
	var cleanStart, cleanEnd time.Time
	for _, c := range t.calls {
		if c.Start.Before(termSeen) {
			continue
		}
		switch c.Op {
		case "logs":
			p.ResultFetch += c.End.Sub(c.Start)
		case "stop", "delete":
			// driver.Run's deleteRecord: stop until the supervisor is gone,
			// let Ray's job monitor settle, then DELETE the record.
			if cleanStart.IsZero() {
				cleanStart = c.Start
			}
			cleanEnd = c.End
		}
	}
	if !cleanStart.IsZero() {
		p.DeleteRecord = cleanEnd.Sub(cleanStart)
	}
	parseStart := time.Now()
	for _, c := range t.calls {
		if c.Op == "logs" && !c.Start.Before(termSeen) {
			// driver.Run parses progress and the result on each final fetch.
			_ = driver.ParseProgress(t.lastLogs)
			_, _ = driver.ParseResult(t.lastLogs, "")
		}
	}
	p.ResultParse = time.Since(parseStart)
}

// driverPhases sets p's phases inside the driver from its progress lines,
// and returns the seconds its imports took and its last progress time.
func driverPhases(p *Phases, progress []driver.Progress) (imports, last float64) {
	var started, created, ready, probed, removed float64
	for _, pr := range progress {
		last = max(last, pr.Elapsed)
		switch pr.Phase {
		case driver.PhaseStarted:
			started = pr.Elapsed
			imports, _ = pr.Raw["imports"].(float64)
		case driver.PhaseCreated:
			created = pr.Elapsed
		case driver.PhaseWaiting:
			ready = pr.Elapsed
		case driver.PhaseProbing:
			probed = pr.Elapsed
		case driver.PhaseRemoving:
			removed = pr.Elapsed
		}
	}
	p.RayInit = secs(started - imports)
	if created > 0 {
		p.CreateCalls = secs(created - started)
		if ready > 0 {
			p.PlacementWait = secs(ready - created)
			if probed > 0 {
				p.Probe = secs(probed - ready)
			}
		}
	}
	if removed > 0 {
		p.Remove = secs(removed - started)
	}
	return imports, last
}

// emptyJobPoll is how often EmptyJob polls: finer than driver.Run, so the
// floor it measures is the job's own cost.
const emptyJobPoll = 50 * time.Millisecond

// EmptyJob measures the job floor: a Ray job whose entrypoint is the shell's
// `true`, from submission until a status poll sees it SUCCEEDED. Any driver
// job pays this before its own work (the job supervisor actor's worker
// process, the entrypoint's shell). Its record is deleted in the background
// once the supervisor is gone.
func EmptyJob(ctx context.Context, c *rayclient.Client, id string) (time.Duration, error) {
	start := time.Now()
	if _, err := c.SubmitJob(ctx, rayclient.JobSubmitRequest{Entrypoint: "true", SubmissionID: id}); err != nil {
		return 0, err
	}
	for {
		j, err := c.GetJob(ctx, id)
		if err != nil {
			return 0, err
		}
		if rayclient.IsTerminalStatus(j.Status) {
			took := time.Since(start)
			go func() {
				time.Sleep(3 * time.Second) // Ray's job monitor writes a record deleted earlier back
				_, _ = c.DeleteJob(context.WithoutCancel(ctx), id)
			}()
			if j.Status != rayclient.JobStatusSucceeded {
				return took, fmt.Errorf("empty job %s ended %s: %s", id, j.Status, j.Message)
			}
			return took, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(emptyJobPoll):
		}
	}
}
