package driver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// JobAPI is the part of the Ray job API that Run needs; *rayclient.Client
// implements it.
type JobAPI interface {
	SubmitJob(ctx context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error)
	GetJob(ctx context.Context, id string) (*rayclient.JobDetails, error)
	GetJobLogs(ctx context.Context, id string) (string, error)
	StopJob(ctx context.Context, id string) (bool, error)
	DeleteJob(ctx context.Context, id string) (bool, error)
}

var _ JobAPI = (*rayclient.Client)(nil)

// RunOptions tunes Run.
type RunOptions struct {
	// PollInterval is the first status poll delay (default 250ms); later
	// polls back off by 1.5x up to max(PollInterval, 400ms).
	PollInterval time.Duration
	// OnProgress, if set, receives the driver's progress lines as they show
	// up in the job logs (the logs are fetched on every poll).
	OnProgress func(Progress)
	// RuntimeEnv is passed as the job's runtime_env.
	RuntimeEnv map[string]any
	// BackgroundCleanup deletes a successful job's record in the background
	// instead of before returning (it waits ~1.5s for Ray's supervisor to
	// exit). A record left behind when the process exits first is harmless:
	// the next run under that id replaces it.
	BackgroundCleanup bool
}

// relaunchDelay is the pause before the first relaunch; it grows linearly.
var relaunchDelay = 500 * time.Millisecond

const (
	defaultPollInterval = 250 * time.Millisecond
	// Driver jobs are short (seconds), so the backoff ceiling stays low:
	// the bench showed ~0.8s of lag per job with a 1s ceiling.
	maxPollInterval = 400 * time.Millisecond
	// submitAttempts bounds how many submission ids (attempt n, n+1, ...)
	// one submission tries when ids are taken by finished job records.
	submitAttempts = 4
	// maxAttemptSkip bounds the attempts one submission walks through,
	// including ids skipped because they were used moments ago.
	maxAttemptSkip = 32
	// relaunches bounds how often Run resubmits a job that Ray lost.
	relaunches = 3
	// pollErrorLimit is how many consecutive failed status polls (after the
	// client's own retries) Run tolerates.
	pollErrorLimit = 5
	// stopGrace bounds stopping a job after cancellation: Ray sends SIGTERM,
	// waits 3s (RAY_JOB_STOP_WAIT_TIME_S) and then SIGKILLs.
	stopGrace = 30 * time.Second
	// cleanupTimeout bounds the best-effort delete of the job record.
	cleanupTimeout = 10 * time.Second
	logTailLines   = 25
	logTailBytes   = 4096
)

// Run executes spec as a Ray job and returns the driver's result.
//
// The job gets the deterministic SubmissionID(spec, attempt). If that id is
// taken by a running job (an earlier, interrupted Run of the same spec), Run
// attaches to it and waits for its result; if it is taken by a finished job,
// that record is deleted and the spec resubmitted under the next attempt's
// id (Ray ties a supervisor actor and a job monitor to each id, and reusing
// an id right after its job ended races with their teardown). A job that
// Ray itself fails before the driver reports (supervisor actor start
// failure or death) is resubmitted up to 3 times; the driver is idempotent.
//
// When ctx is done (Terraform timeout or cancel) the job is stopped - the
// driver's SIGTERM handler removes the groups this run created - and an
// error wrapping ctx.Err() is returned. If ctx ends just as the driver
// succeeds, Run returns both the result and that error, so the caller can
// still record what exists.
//
// A result with ok=false is returned together with a *DriverError. A job
// that ends without a result gives an error with Ray's job message and the
// tail of its log. The finished job record is deleted (best effort), once
// Ray's supervisor actor for it is gone.
func Run(ctx context.Context, api JobAPI, python string, spec Spec, opts RunOptions) (*Result, error) {
	if api == nil {
		return nil, errors.New("driver: no Ray job API client")
	}
	if strings.TrimSpace(python) == "" {
		return nil, errors.New("driver: python executable must not be empty")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	r := &runner{api: api, python: python, spec: spec, opts: opts}
	for launch := 0; ; launch++ {
		if err := r.newLaunch(); err != nil {
			return nil, err
		}
		if err := r.submit(ctx); err != nil {
			if ctx.Err() != nil && r.id != "" {
				// The submission may have reached Ray before ctx ended.
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
				_, _ = r.api.StopJob(sctx, r.id)
				cancel()
			}
			return nil, err
		}
		job, err := r.wait(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return r.cancelled(ctx, ctx.Err())
			}
			return nil, err
		}
		if launch < relaunches && r.lostByRay(ctx, job) {
			// Ray failed the job itself, without a driver result: typically
			// the previous job under this submission id was still tearing
			// down its supervisor actor. Any driver it started has been
			// stopped; the driver is idempotent, so run it again under the
			// next id.
			r.deleteRecord(ctx)
			r.attempt++
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("%s was failed by Ray (%s) and ctx ended before a retry: %w", r.describe(), job.ErrorType, ctx.Err())
			case <-time.After(time.Duration(launch+1) * relaunchDelay):
			}
			continue
		}
		return r.finish(ctx, job)
	}
}

// newLaunch gives the next submission its own run id and entrypoint.
func (r *runner) newLaunch() error {
	r.spec.RunID = newRunID()
	ep, err := Entrypoint(r.python, r.spec)
	if err != nil {
		return err
	}
	r.entrypoint, r.runID, r.attached, r.delivered = ep, r.spec.RunID, false, 0
	return nil
}

type runner struct {
	api        JobAPI
	python     string
	spec       Spec
	opts       RunOptions
	entrypoint string
	runID      string // run id whose output lines count
	id         string // submission id in use
	attempt    int    // SubmissionID attempt to try first
	attached   bool
	delivered  int // progress lines already handed to OnProgress
}

func newRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Sprintf("t%x", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}

func (r *runner) describe() string {
	return fmt.Sprintf("placement group driver job %q (%s %s)", r.id, r.spec.Action, groupNames(r.spec))
}

func groupNames(spec Spec) string {
	names := make([]string, 0, len(spec.Groups))
	for _, g := range spec.Groups {
		names = append(names, fmt.Sprintf("%q", g.Name))
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return strings.Join(names, ", ")
}

// submit submits the job, attaching to or replacing an existing job that
// holds the same submission id.
func (r *runner) submit(ctx context.Context) error {
	var lastErr error
	tried := 0
	for limit := r.attempt + maxAttemptSkip; tried < submitAttempts && r.attempt < limit; r.attempt++ {
		r.id = SubmissionID(r.spec, r.attempt)
		if recentlyUsed(r.id) {
			continue // its job just ended here; Ray may still be tearing it down
		}
		tried++
		for try := 0; try < 2; try++ {
			_, err := r.api.SubmitJob(ctx, rayclient.JobSubmitRequest{
				Entrypoint:   r.entrypoint,
				SubmissionID: r.id,
				RuntimeEnv:   r.opts.RuntimeEnv,
				Metadata: map[string]string{
					"created_by":   "terraform-provider-ray",
					"raytf_action": r.spec.Action,
				},
			})
			if err == nil {
				return nil
			}
			if !rayclient.IsAlreadyExists(err) {
				return fmt.Errorf("submitting %s: %w", r.describe(), err)
			}
			lastErr = err
			job, gerr := r.api.GetJob(ctx, r.id)
			if gerr != nil {
				if rayclient.IsNotFound(gerr) {
					continue // deleted meanwhile: submit again
				}
				return fmt.Errorf("submitting %s: id is taken and its job cannot be read: %w", r.describe(), gerr)
			}
			if !rayclient.IsTerminalStatus(job.Status) {
				// An earlier Run of this very spec is still going: wait for it.
				r.attached = true
				r.runID = runIDFromEntrypoint(job.Entrypoint)
				return nil
			}
			// Free the id, but submit under the next one: Ray names the job's
			// supervisor actor after the submission id, and reusing an id
			// while the old actor is still exiting makes the new job fail.
			if _, derr := r.api.DeleteJob(ctx, r.id); derr != nil && !rayclient.IsNotFound(derr) {
				lastErr = derr
			}
			break
		}
	}
	if lastErr == nil {
		lastErr = errors.New("all candidate ids were used moments ago")
	}
	return fmt.Errorf("submitting %s: no usable submission id after %d attempts: %w", r.describe(), tried, lastErr)
}

// recent remembers submission ids whose jobs this process finished lately.
// Ray ties a supervisor actor and a job monitor to each submission id; its
// monitor can fail a new job under the same id for a few seconds after the
// old job ended (even after the record is deleted), so such ids are skipped
// for a while. Other processes fall back on Run's relaunch.
var recent = struct {
	sync.Mutex
	used map[string]time.Time
}{used: map[string]time.Time{}}

// idQuarantine is how long a finished id is skipped.
const idQuarantine = 30 * time.Second

func noteUsed(id string) {
	recent.Lock()
	defer recent.Unlock()
	now := time.Now()
	for k, t := range recent.used {
		if now.Sub(t) > idQuarantine {
			delete(recent.used, k)
		}
	}
	recent.used[id] = now
}

func recentlyUsed(id string) bool {
	recent.Lock()
	defer recent.Unlock()
	t, ok := recent.used[id]
	return ok && time.Since(t) <= idQuarantine
}

// runIDFromEntrypoint recovers Spec.RunID from a driver entrypoint (its last
// word is the base64 spec); "" if it cannot.
func runIDFromEntrypoint(ep string) string {
	ep = strings.TrimSpace(ep)
	i := strings.LastIndexByte(ep, ' ')
	if i < 0 {
		return ""
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Trim(ep[i+1:], "'"))
	if err != nil {
		return ""
	}
	var s struct {
		RunID string `json:"run_id"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s.RunID
}

// wait polls the job until it is terminal; it returns ctx.Err() when ctx
// ends first.
func (r *runner) wait(ctx context.Context) (*rayclient.JobDetails, error) {
	interval := r.opts.PollInterval
	if interval <= 0 {
		interval = defaultPollInterval
	}
	ceiling := max(interval, maxPollInterval)
	timer := time.NewTimer(interval)
	defer timer.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
		job, err := r.api.GetJob(ctx, r.id)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && rayclient.IsNotFound(err):
			return nil, fmt.Errorf("%s disappeared while running (deleted by someone else?): %w", r.describe(), err)
		case err != nil:
			failures++
			if failures >= pollErrorLimit {
				return nil, fmt.Errorf("polling %s: %w", r.describe(), err)
			}
		default:
			failures = 0
			if r.opts.OnProgress != nil && job.Status != rayclient.JobStatusPending {
				if logs, lerr := r.api.GetJobLogs(ctx, r.id); lerr == nil {
					r.deliver(logs)
				}
			}
			if rayclient.IsTerminalStatus(job.Status) {
				return job, nil
			}
		}
		interval = min(interval*3/2, ceiling)
		timer.Reset(interval)
	}
}

// supervisorFailures are the Ray job error types that mean Ray lost the
// job rather than the driver failing.
var supervisorFailures = map[string]bool{
	"JOB_SUPERVISOR_ACTOR_START_FAILURE": true,
	"JOB_SUPERVISOR_ACTOR_DIED":          true,
}

// lostByRay reports whether Ray failed the job without this run's driver
// reporting a result, after making sure no driver of this run is still
// going.
//
// Ray names a job's supervisor actor after the submission id, and its job
// monitor is keyed by it too. Reusing an id right after its previous job
// ended therefore either fails the new job outright (the old actor still
// holds the name: JOB_SUPERVISOR_ACTOR_START_FAILURE, nothing ran), or lets
// the old job's monitor mark the new job FAILED when the old actor exits
// (JOB_SUPERVISOR_ACTOR_DIED) while the new driver keeps running. In the
// second case the job is stopped - the driver's SIGTERM handler removes what
// it created and reports - and a success reported meanwhile is used.
func (r *runner) lostByRay(ctx context.Context, job *rayclient.JobDetails) bool {
	if job.Status != rayclient.JobStatusFailed || !supervisorFailures[job.ErrorType] {
		return false
	}
	logs, err := r.api.GetJobLogs(ctx, r.id)
	if err != nil {
		return false
	}
	if _, perr := parseResult(logs, r.runID); perr == nil {
		return false // the driver finished: use its result
	}
	if job.ErrorType == "JOB_SUPERVISOR_ACTOR_START_FAILURE" && !r.ownLines(logs) {
		return true // no supervisor of this job ever ran
	}
	// Stop the supervisor until it is gone (it SIGTERMs the driver and
	// SIGKILLs it 3s later), watching for the driver's report. A driver that
	// has not printed its first line has created nothing, and the stop
	// request kills it before it can; it gets a short grace only.
	start := time.Now()
	for {
		alive, serr := r.api.StopJob(ctx, r.id)
		started := false
		if logs, err = r.api.GetJobLogs(ctx, r.id); err == nil {
			if res, perr := parseResult(logs, r.runID); perr == nil {
				return !res.OK
			}
			started = r.ownLines(logs)
		}
		grace := 1500 * time.Millisecond
		if started {
			grace = stopGrace / 3
		}
		if (serr == nil && !alive) || time.Since(start) > grace {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ownLines reports whether logs hold any progress line of this run.
func (r *runner) ownLines(logs string) bool {
	for _, p := range ParseProgress(logs) {
		if p.RunID == r.runID {
			return true
		}
	}
	return false
}

// deliver hands progress lines of this run not seen before to OnProgress.
func (r *runner) deliver(logs string) {
	if r.opts.OnProgress == nil {
		return
	}
	var mine []Progress
	for _, p := range ParseProgress(logs) {
		if r.runID == "" || p.RunID == r.runID {
			mine = append(mine, p)
		}
	}
	for ; r.delivered < len(mine); r.delivered++ {
		r.opts.OnProgress(mine[r.delivered])
	}
}

// finish turns a terminal job into the result.
func (r *runner) finish(ctx context.Context, job *rayclient.JobDetails) (*Result, error) {
	logs, lerr := r.api.GetJobLogs(ctx, r.id)
	if lerr == nil {
		r.deliver(logs)
	}
	var res *Result
	perr := lerr
	if lerr == nil {
		res, perr = parseResult(logs, r.runID)
	}
	if perr == nil {
		if r.opts.BackgroundCleanup {
			noteUsed(r.id) // quarantine the id now, not when the cleanup ends
			go r.deleteRecord(context.WithoutCancel(ctx))
		} else {
			r.deleteRecord(ctx)
		}
		return res, res.Err()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s ended with status %s", r.describe(), job.Status)
	if job.Status == rayclient.JobStatusStopped {
		b.WriteString(" (stopped by someone else)")
	}
	if m := strings.TrimSpace(job.Message); m != "" {
		fmt.Fprintf(&b, "; Ray: %s", m)
	}
	if job.DriverExitCode != nil {
		fmt.Fprintf(&b, "; exit code %d", *job.DriverExitCode)
	}
	switch {
	case lerr != nil:
		fmt.Fprintf(&b, "; its logs could not be read: %v", lerr)
	case errors.Is(perr, ErrNoResult):
		b.WriteString("; the driver printed no result")
	default:
		fmt.Fprintf(&b, "; %v", perr)
	}
	if lerr == nil {
		if tail := logTail(logs); tail != "" {
			fmt.Fprintf(&b, "\nlast lines of the job log:\n%s", tail)
		}
	}
	r.deleteRecord(ctx)
	return nil, errors.New(b.String())
}

// cancelled stops the job after ctx ended and reports what happened.
func (r *runner) cancelled(ctx context.Context, cause error) (*Result, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
	defer cancel()
	_, serr := r.api.StopJob(sctx, r.id)
	var job *rayclient.JobDetails
	for sctx.Err() == nil {
		j, err := r.api.GetJob(sctx, r.id)
		if err == nil && rayclient.IsTerminalStatus(j.Status) {
			job = j
			break
		}
		if err != nil && rayclient.IsNotFound(err) {
			break
		}
		select {
		case <-sctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s interrupted (%v)", r.describe(), cause)
	switch {
	case job == nil && serr != nil:
		fmt.Fprintf(&b, "; stopping the job failed (%v), it may still be running - check the Ray dashboard", serr)
	case job == nil:
		b.WriteString("; the job was asked to stop but did not finish in time - check the Ray dashboard")
	default:
		fmt.Fprintf(&b, "; job %s", strings.ToLower(job.Status))
		if logs, err := r.api.GetJobLogs(sctx, r.id); err == nil {
			if res, perr := parseResult(logs, r.runID); perr == nil {
				if res.OK {
					b.WriteString("; the driver had already finished successfully, so its groups were kept")
					r.deleteRecord(sctx)
					return res, &cancelError{msg: b.String(), cause: cause}
				} else if len(res.Removed) > 0 {
					fmt.Fprintf(&b, "; the driver removed the groups it had created (%s)", strings.Join(res.Removed, ", "))
				} else {
					b.WriteString("; the driver had created no groups")
				}
			}
		}
		r.deleteRecord(sctx)
	}
	return nil, &cancelError{msg: b.String(), cause: cause}
}

type cancelError struct {
	msg   string
	cause error
}

func (e *cancelError) Error() string { return e.msg }
func (e *cancelError) Unwrap() error { return e.cause }

// deleteRecord deletes the finished job's record, best effort.
//
// Ray's job monitor keeps watching a job's supervisor actor after the job
// is terminal; when it sees the actor gone and the record already deleted,
// it writes the record back as FAILED (JOB_SUPERVISOR_ACTOR_DIED) - and if a
// new job has taken the submission id meanwhile, it fails that one. So wait
// until the supervisor is gone (StopJob reports false; stopping a finished
// supervisor is harmless) and the monitor's 1s loop has seen it.
func (r *runner) deleteRecord(ctx context.Context) {
	defer noteUsed(r.id)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for {
		alive, err := r.api.StopJob(dctx, r.id)
		if err != nil || !alive {
			break
		}
		if !sleepCtx(dctx, 200*time.Millisecond) {
			return
		}
	}
	if !sleepCtx(dctx, recordSettle) {
		return
	}
	if _, err := r.api.DeleteJob(dctx, r.id); err == nil && resurrectionChecks > 0 {
		go sweepResurrected(r.api, r.id)
	}
}

// resurrectionChecks is how many times, resurrectionDelay apart, a deleted
// record is checked for being written back by Ray's job monitor.
var (
	resurrectionChecks = 3
	resurrectionDelay  = 2 * time.Second
)

// sweepResurrected deletes the record Ray's job monitor writes back (FAILED,
// JOB_SUPERVISOR_ACTOR_DIED, no entrypoint or start time) when it notices a
// deleted job's supervisor exit late. The monitor stops after writing it,
// so deleting it again is final. Only such records are touched, never a
// job that runs.
func sweepResurrected(api JobAPI, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(resurrectionChecks+1)*(resurrectionDelay+cleanupTimeout))
	defer cancel()
	for i := 0; i < resurrectionChecks; i++ {
		if !sleepCtx(ctx, resurrectionDelay) {
			return
		}
		job, err := api.GetJob(ctx, id)
		if err != nil {
			continue // not found (the usual case) or transient
		}
		if job.Status == rayclient.JobStatusFailed && job.ErrorType == "JOB_SUPERVISOR_ACTOR_DIED" &&
			(job.StartTime == 0 || job.Entrypoint == "Entrypoint not found.") {
			_, _ = api.DeleteJob(ctx, id)
			return
		}
		if job.Status != rayclient.JobStatusFailed {
			return // a new job took the id
		}
	}
}

// recordSettle is how long deleteRecord waits after the supervisor is gone
// (Ray's JOB_MONITOR_LOOP_PERIOD_S is 1s).
var recordSettle = 1500 * time.Millisecond

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// logTail returns the last lines of this run's part of the log, ANSI-free.
func logTail(logs string) string {
	// Ray appends to the same log file when a submission id is reused; this
	// run starts at the last "Running entrypoint" header.
	if i := strings.LastIndex(logs, "Running entrypoint for job "); i >= 0 {
		if j := strings.LastIndex(logs[:i], "\n"); j >= 0 {
			logs = logs[j+1:]
		} else {
			logs = logs[i:]
		}
	}
	lines := splitLines(logs)
	var keep []string
	size := 0
	for i := len(lines) - 1; i >= 0 && len(keep) < logTailLines; i-- {
		l := strings.TrimRight(cleanLine(lines[i]), " \t")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "Running entrypoint for job ") && len(l) > 200 {
			l = l[:200] + "..." // the entrypoint holds the whole driver
		}
		if size+len(l) > logTailBytes {
			break
		}
		size += len(l) + 1
		keep = append(keep, l)
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return strings.Join(keep, "\n")
}
