package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// ApplyConfig is how the reference benchmark runs the provider path.
type ApplyConfig struct {
	Client *Client
	// JobPython is the provider's python_executable (default "python").
	JobPython string
	// Namespace is the provider's namespace (default "terraform-ray").
	Namespace string
	Prefix    string // cluster names start with it ("bench-...")
	// Wait bounds how long a repetition waits for free GPUs when other
	// users of the cluster hold them.
	Wait time.Duration
	Log  io.Writer
}

// ApplySample is one repetition of one size: the provider's create and
// delete, and the persistent Python driver's cycle.
type ApplySample struct {
	ProviderPair
	Warm BaselineTimes
}

// ApplyResult holds every sample of one size.
type ApplyResult struct {
	Groups  int
	Samples []ApplySample
}

func (c *ApplyConfig) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// errBusy marks a repetition that could not run because the cluster's GPUs
// were held by someone else; it is retried, never counted.
var errBusy = errors.New("cluster resources busy")

// WaitForCapacity waits until the live cluster has at least cpu CPUs and gpu
// GPUs not reserved by placement groups.
func WaitForCapacity(ctx context.Context, c *rayclient.Client, cpu, gpu float64, wait time.Duration, log func(string, ...any)) error {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		snap, err := liveview.FetchSnapshot(ctx, c)
		if err != nil {
			return err
		}
		var freeCPU, freeGPU float64
		for _, n := range snap.Capacity(nil) {
			freeCPU += n.Available["CPU"]
			freeGPU += n.Available["GPU"]
		}
		if freeCPU >= cpu && freeGPU >= gpu {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: need %g CPU / %g GPU free, have %g / %g after waiting %v", errBusy, cpu, gpu, freeCPU, freeGPU, wait)
		}
		if first && log != nil {
			log("   waiting for %g GPU / %g CPU (free now %g / %g; other users of the cluster hold the rest)", gpu, cpu, freeGPU, freeCPU)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

// WaitUntilPlaceable waits until spec passes Create's live check (enough
// free resources on the right nodes, not just in total), at most wait.
func WaitUntilPlaceable(ctx context.Context, c *rayclient.Client, spec clusterspec.Spec, wait time.Duration, log func(string, ...any)) error {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		err := liveCheck(ctx, c, spec)
		if err == nil || !errors.Is(err, errBusy) || time.Now().After(deadline) {
			return err
		}
		if first && log != nil {
			log("   waiting until %s fits (%v)", spec.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(3 * time.Second):
		}
	}
}

// liveCheck is what the resource's Create runs before the driver job:
// FetchSnapshot and placement.CheckLive (segments, selectors, topology
// strategy, then capacity over what every other group leaves).
func liveCheck(ctx context.Context, c *rayclient.Client, spec clusterspec.Spec) error {
	snap, err := liveview.FetchSnapshot(ctx, c)
	if err != nil {
		return err
	}
	var errs []string
	busy := false
	for _, is := range placement.CheckLive(spec, snap, nil) {
		if !is.Warning {
			errs = append(errs, is.Summary+": "+is.Detail)
			busy = busy || is.Summary == placement.SummaryCannotHold
		}
	}
	switch {
	case busy:
		return fmt.Errorf("%w: %s", errBusy, strings.Join(errs, "; "))
	case len(errs) > 0:
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// ProviderRun is one traced driver.Run.
type ProviderRun struct {
	Result *contract.Result
	// Phases as computed with the interpreter estimate RunProvider got; see
	// Recompute.
	Phases   Phases
	HTTP     int64
	Progress []driver.Progress

	trace      *TracedJobs
	start, end time.Time
	live       time.Duration
}

// Recompute splits the run again with another interpreter estimate.
func (r *ProviderRun) Recompute(interp time.Duration) error {
	p, err := r.trace.ComputePhases(r.start, r.end, r.live, r.Progress, interp)
	if err == nil {
		r.Phases = p
	}
	return err
}

// RunProvider runs one driver action the way the resource does and traces it.
// For create, the resource's pre-create live check is included (withLive).
func RunProvider(ctx context.Context, c *Client, python string, ds contract.Request, spec clusterspec.Spec,
	withLive bool, interp time.Duration) (*ProviderRun, error) {
	var live time.Duration
	before := c.RequestCount()
	if withLive {
		t := time.Now()
		if err := liveCheck(ctx, c.Client, spec); err != nil {
			return nil, err
		}
		live = time.Since(t)
	}
	run := &ProviderRun{trace: &TracedJobs{API: c}, live: live}
	run.start = time.Now()
	res, err := driver.Run(ctx, run.trace, python, ds, driver.RunOptions{
		BackgroundCleanup: true, // as the resource runs it
		OnProgress:        func(p driver.Progress) { run.Progress = append(run.Progress, p) },
	})
	run.end = time.Now()
	run.Result = res
	run.HTTP = c.RequestCount() - before
	if err != nil {
		return run, err
	}
	return run, run.Recompute(interp)
}

// ProviderPair is one traced create and delete through the provider path.
type ProviderPair struct {
	Create, Delete Phases
	// Runs are the traced driver.Runs behind Create and Delete.
	CreateRun, DeleteRun *ProviderRun
}

// resplitAll splits the runs' process lifetimes again with the python
// start-up estimate interp (when there is one).
func resplitAll(interp time.Duration, pairs []*ProviderPair) {
	for _, p := range pairs {
		if interp > 0 {
			p.CreateRun.resplit(interp, &p.Create)
			p.DeleteRun.resplit(interp, &p.Delete)
		}
	}
}

// retryBusy runs one sample, again (up to 4 attempts) while the cluster's
// resources were held by someone else.
func retryBusy[S any](logf func(string, ...any), what string, run func(attempt int) (S, error)) (S, error) {
	var s S
	var err error
	for attempt := 0; attempt < 4; attempt++ {
		if s, err = run(attempt); err == nil || !errors.Is(err, errBusy) {
			break
		}
		logf("   %s: %v; retrying later", what, err)
		time.Sleep(10 * time.Second) // others' groups come and go
	}
	return s, err
}

// resplit splits the run's process lifetime again with the python start-up
// estimate interp into *into.
func (r *ProviderRun) resplit(interp time.Duration, into *Phases) {
	if r.Recompute(interp) == nil {
		*into = r.Phases
	}
}

// providerCycle is the provider's create of spec (after the resource's live
// check) and then its delete, each traced.
func (cfg *ApplyConfig) providerCycle(ctx context.Context, spec clusterspec.Spec, interp time.Duration) (cr, dr *ProviderRun, err error) {
	spec.Namespace, spec.ReadyTimeout = cfg.Namespace, ReadyTimeout
	owner, err := record.NewOwnerToken()
	if err != nil {
		return nil, nil, err
	}
	// The requests the resource sends: ownership, record and node claims included.
	cr, err = RunProvider(ctx, cfg.Client, cfg.JobPython, placement.CreateRequest(spec, owner, benchVersion), spec, true, interp)
	if err != nil {
		cfg.cleanupProvider(spec, owner)
		var de *contract.DriverError
		if errors.As(err, &de) && (de.Kind == contract.KindTimeout || de.Kind == contract.KindInfeasible) {
			return nil, nil, fmt.Errorf("%w: %v", errBusy, err)
		}
		return nil, nil, fmt.Errorf("provider create: %w", err)
	}
	dr, err = RunProvider(ctx, cfg.Client, cfg.JobPython, placement.DeleteRequest(spec, owner), spec, false, interp)
	if err != nil {
		cfg.cleanupProvider(spec, owner)
		return nil, nil, fmt.Errorf("provider delete: %w", err)
	}
	return cr, dr, nil
}

// benchVersion is the provider version bench's records name.
const benchVersion = "bench"

// renamed returns groups with from replaced by to in their names.
func renamed(groups []contract.RequestGroup, from, to string) []contract.RequestGroup {
	out := make([]contract.RequestGroup, len(groups))
	for i, g := range groups {
		out[i] = g
		out[i].Name = strings.Replace(g.Name, from, to, 1)
	}
	return out
}

func groupNames(groups []contract.RequestGroup) []string {
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = g.Name
	}
	return names
}

// cleanupProvider removes a cluster's groups after a failed run, as the
// resource does (placement.CleanupAfterFailedCreate).
func (cfg *ApplyConfig) cleanupProvider(spec clusterspec.Spec, owner string) {
	env := placement.Env{Run: func(ctx context.Context, req contract.Request) (*contract.Result, error) {
		return driver.Run(ctx, cfg.Client, cfg.JobPython, req, driver.RunOptions{})
	}}
	placement.CleanupAfterFailedCreate(context.Background(), env, spec, owner, errors.New("bench: failed run"))
}

// PrintApply prints the comparison and the phase breakdown.
func PrintApply(out io.Writer, results []ApplyResult) {
	fmt.Fprintln(out, "Apply (create) and destroy (delete) of a per-node GPU virtual cluster, median of the repetitions (seconds).")
	fmt.Fprintln(out, "provider = driver.Run with the resource's Spec (+ Create's live check); python = ray.util.placement_group in a driver connected once.")
	fmt.Fprintln(out)
	hdr := []string{"groups", "reps", "provider create", "python create+ready", "create ratio", "provider delete", "python remove", "delete ratio"}
	t := NewTable(out, hdr...)
	for _, r := range results {
		var pc, pd, wc, wr []time.Duration
		for _, s := range r.Samples {
			pc, pd = append(pc, s.Create.Total), append(pd, s.Delete.Total)
			wc, wr = append(wc, secs(s.Warm.Ready)), append(wr, secs(s.Warm.Remove))
		}
		row := []string{fmt.Sprint(r.Groups), fmt.Sprint(len(r.Samples)),
			Sec(Median(pc)), Sec(Median(wc)), Ratio(Median(pc), Median(wc)),
			Sec(Median(pd)), Sec(Median(wr)), Ratio(Median(pd), Median(wr))}
		t.Row(row...)
	}
	t.Flush()
	fmt.Fprintln(out)

	for _, kind := range []string{"create", "delete"} {
		printApplyPhases(out, results, kind)
	}

	var warmCalls, warmReady []string
	for _, r := range results {
		var c, rd []time.Duration
		for _, s := range r.Samples {
			c, rd = append(c, secs(s.Warm.CreateCalls)), append(rd, secs(s.Warm.Ready-s.Warm.CreateCalls))
		}
		warmCalls = append(warmCalls, fmt.Sprintf("%d groups %sms", r.Groups, Ms(Median(c))))
		warmReady = append(warmReady, fmt.Sprintf("%d groups %sms", r.Groups, Ms(Median(rd))))
	}
	fmt.Fprintf(out, "Python baseline split: placement_group() calls %s; wait ready %s.\n",
		strings.Join(warmCalls, ", "), strings.Join(warmReady, ", "))
	fmt.Fprintln(out)
}

// printApplyPhases prints where the provider's create or delete (kind)
// time goes, phase by phase per number of groups.
func printApplyPhases(out io.Writer, results []ApplyResult, kind string) {
	fmt.Fprintf(out, "Where the provider's %s time goes (median per phase, seconds; %% of the median total):\n\n", kind)
	hdr := []string{"phase"}
	meds := make([]Phases, len(results))
	for i, r := range results {
		var ps, split []Phases
		for _, s := range r.Samples {
			p := s.Delete
			if kind == "create" {
				p = s.Create
			}
			ps = append(ps, p)
			if p.Split {
				split = append(split, p)
			}
		}
		if len(split) > 0 { // one way of splitting the process lifetime per column
			ps = split
		}
		meds[i] = MedianPhases(ps)
		hdr = append(hdr, fmt.Sprintf("%d groups", r.Groups), "%")
	}
	t := NewTable(out, hdr...)
	for pi, name := range PhaseNames {
		row := []string{name}
		zero := true
		for _, m := range meds {
			v := m.Values()[pi]
			zero = zero && v == 0
			row = append(row, Sec(v), Pct(v, m.Total))
		}
		if !zero {
			t.Row(row...)
		}
	}
	row := []string{"total"}
	for _, m := range meds {
		row = append(row, Sec(m.Total), "")
	}
	t.Row(row...)
	if relaunched := func() bool {
		for _, m := range meds {
			if m.Launches > 1 {
				return true
			}
		}
		return false
	}(); relaunched {
		row = []string{"job launches (most in one run)"}
		for _, m := range meds {
			row = append(row, fmt.Sprint(m.Launches), "")
		}
		t.Row(row...)
	}
	row = []string{"job-API calls (status polls)"}
	for _, m := range meds {
		row = append(row, fmt.Sprintf("%d (%d)", m.Calls, m.Polls), "")
	}
	t.Row(row...)
	t.Flush()
	for i, m := range meds {
		if !m.Split {
			fmt.Fprintf(out, "(%d groups: the driver process exited before a status poll saw it, so 'job start' includes python start-up and driver exit)\n", results[i].Groups)
		}
	}
	fmt.Fprintln(out)
}
