package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/devprovider"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// proxyOps maps the job routes the CountingProxy sees to TracedJobs' ops.
var proxyOps = map[string]string{
	"GET /api/jobs/":               "list",
	"POST /api/jobs/":              "submit",
	"GET /api/jobs/{id}":           "get",
	"GET /api/jobs/{id}/logs":      "logs",
	"POST /api/jobs/{id}/stop":     "stop",
	"DELETE /api/jobs/{id}":        "delete",
	"GET /api/jobs/{id}/logs/tail": "logs",
}

// Observe records one job-API call that the provider binary made through
// the CountingProxy (its OnResponse hook, called while the driver process
// may still be alive, so its start time can be read from /proc), the way
// TracedJobs' own methods record driver.Run's calls in process.
func (t *TracedJobs) Observe(ev ProxyEvent, body []byte) {
	op, ok := proxyOps[ev.Route]
	if !ok {
		return
	}
	failed := ev.Status >= 400
	status := ""
	t.mu.Lock()
	defer t.mu.Unlock()
	switch op {
	case "submit":
		if !failed {
			t.procStart, t.supStart, t.resultAt, t.lastJob = time.Time{}, time.Time{}, time.Time{}, nil
		}
	case "get":
		var j rayclient.JobDetails
		if !failed && json.Unmarshal(body, &j) == nil {
			status = j.Status
			t.lastJob = &j
			if j.DriverInfo != nil && t.procStart.IsZero() {
				if pid, err := strconv.Atoi(j.DriverInfo.PID); err == nil && pid > 0 {
					if ps, ok := processStart(pid); ok {
						t.procStart = ps
						t.supStart, _ = supervisorStart(pid)
					}
				}
			}
		}
	case "logs":
		if !failed {
			var l struct {
				Logs string `json:"logs"`
			}
			if json.Unmarshal(body, &l) == nil {
				t.lastLogs = l.Logs
				if _, err := driver.ParseResult(l.Logs, ""); err == nil && t.resultAt.IsZero() {
					t.resultAt = ev.End
				}
			}
		}
	}
	t.calls = append(t.calls, Call{Op: op, Start: ev.Start, End: ev.End, Status: status, Err: failed})
}

// supervisorStart walks up from the driver's process (the entrypoint's shell
// is its parent) to Ray's job supervisor worker and returns when it started.
func supervisorStart(pid int) (time.Time, bool) {
	for i := 0; i < 4; i++ {
		ppid, ok := parentPID(pid)
		if !ok || ppid <= 1 {
			return time.Time{}, false
		}
		pid = ppid
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmd, []byte("JobSupervisor")) || bytes.Contains(cmd, []byte("default_worker")) {
			return processStart(pid)
		}
	}
	return time.Time{}, false
}

func parentPID(pid int) (int, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	p, err := strconv.Atoi(f[1])
	return p, err == nil
}

// decodeBody returns a response body, gunzipped when the dashboard
// compressed it.
func decodeBody(enc string, body []byte) []byte {
	if !strings.EqualFold(enc, "gzip") {
		return body
	}
	r, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return body
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return body
	}
	return out
}

// CLIPhases is one traced CLI command (apply or destroy): the CLI's own
// time around the provider, the provider's HTTP before and after the driver
// job, and the job split as Phases (the same split as the in-process
// benchmark), with the job supervisor's start split from the driver's.
type CLIPhases struct {
	Command string
	Wall    time.Duration
	// CLIStart is from exec until the provider's first HTTP request (CLI
	// and plugin start, configuration, state); ProviderPre from there until
	// the job submission (version, live view, checks); CLIEnd from the
	// driver's result until the CLI exited (state write, exit).
	CLIStart, ProviderPre, CLIEnd time.Duration
	Job                           Phases
	// SupervisorStart splits Job.JobStart: from the submission's answer
	// until Ray's job supervisor worker started; DriverSpawn is the rest
	// (supervisor set-up until the driver process started). Zero when the
	// processes could not be read.
	SupervisorStart, DriverSpawn time.Duration
	// Cleanup is from the result until the job record's DELETE ended
	// (driver.Run's background clean-up; the CLI waits for the plugin).
	Cleanup time.Duration
	// Calls are the provider's HTTP requests, Jobs its job submissions: the
	// split is of the last job, so it holds the whole command only for one.
	Calls, Jobs int
}

// splitError is a command that ran but whose job could not be split into
// phases; its CLIPhases still hold the wall time, calls and jobs.
type splitError struct{ error }

// traceCLI runs one CLI command through the proxy, with extra arguments
// after the usual ones, and splits it.
func traceCLI(ctx context.Context, ws *Workspace, proxy *CountingProxy, dir, command string, interp time.Duration,
	extra ...string) (CLIPhases, string, error) {
	tr := &TracedJobs{}
	proxy.SetOnResponse(tr.Observe)
	defer proxy.SetOnResponse(nil)
	proxy.Take()
	start := time.Now()
	wall, code, out, err := ws.Run(ctx, dir, append([]string{command, "-auto-approve", "-no-color"}, extra...)...)
	end := start.Add(wall)
	ev := proxy.Take()
	c := CLIPhases{Command: command, Wall: wall, Calls: len(ev), Jobs: CountRoute(ev, jobSubmitRoute)}
	if err == nil && code != 0 {
		err = fmt.Errorf("%s exited %d:\n%s", command, code, tail(out, 30))
	}
	if err != nil {
		return c, out, err
	}
	var submit, result time.Time
	for _, e := range ev {
		if e.Route == "POST /api/jobs/" && submit.IsZero() {
			submit = e.Start
		}
	}
	if len(ev) == 0 || submit.IsZero() {
		return c, out, splitError{errors.New("no driver job was submitted")}
	}
	c.CLIStart = ev[0].Start.Sub(start)
	c.ProviderPre = submit.Sub(ev[0].Start)
	progress := driver.ParseProgress(tr.lastLogs)
	// driver.Run returns on the first logs fetch that holds the result line.
	result = tr.resultAt
	if result.IsZero() {
		return c, out, splitError{errors.New("no logs fetch held the driver's result")}
	}
	p, err := tr.ComputePhases(submit, result, 0, progress, interp)
	if err != nil {
		return c, out, splitError{err}
	}
	c.Job = p
	c.CLIEnd = end.Sub(result)
	for _, e := range ev {
		if e.Route == "DELETE /api/jobs/{id}" && e.End.After(result) {
			c.Cleanup = e.End.Sub(result)
		}
	}
	if p.Split && !tr.supStart.IsZero() {
		var submitEnd time.Time
		for _, e := range ev {
			if e.Route == "POST /api/jobs/" {
				submitEnd = e.End
			}
		}
		if tr.supStart.After(submitEnd) && tr.supStart.Before(tr.procStart) {
			c.SupervisorStart = tr.supStart.Sub(submitEnd)
			c.DriverSpawn = p.JobStart - c.SupervisorStart
		}
	}
	return c, out, nil
}

// TraceConfig configures the phase trace of a real apply and destroy.
type TraceConfig struct {
	CLI, Dir, Address string
	Client            *rayclient.Client
	// Floor is the bare-creation baseline (baseline.py); NeMo runs NeMo-RL's
	// own cold path beside each apply+destroy (nil: skipped).
	Floor, NeMo *Baseline
	Prefix      string
	// TodayRef is the source the "no slower than today" targets compare
	// with: its provider is built from `git archive TodayRef` and applied
	// and destroyed beside the current one ("" skips it).
	TodayRef string
	Sizes    []int // GPU bundles of one unified PACK cluster
	Reps     int
	Wait     time.Duration
	Log      io.Writer
}

// TraceSample is one apply+destroy with its floors and NeMo-RL's cold path.
type TraceSample struct {
	Apply, Destroy CLIPhases
	// Today is the apply+destroy wall of the TodayRef provider (0: not run).
	Today time.Duration
	NeMo  NeMoCycle
	// Floors: EmptyJob (submit until SUCCEEDED), Bare (placement_group() +
	// ready in a warm driver), Worker (a fresh python: start-up, import ray,
	// ray.init; the probes start one worker per node in parallel), Schema
	// (the CLI with the plugin: `providers schema -json`).
	EmptyJob, Bare, Worker, Schema time.Duration
}

// TraceResult is every sample of one size.
type TraceResult struct {
	Bundles, Nodes int
	// Label names the column in the phase tables (default: the bundles).
	Label   string
	Samples []TraceSample
}

func (r TraceResult) label() string {
	if r.Label != "" {
		return r.Label
	}
	return fmt.Sprint(r.Bundles)
}

// unifiedHCL is the resource block of a unified PACK GPU cluster.
func unifiedHCL(spec clusterspec.Spec) string {
	return strings.Replace(PerNodeHCL("bench", spec), "  use_gpus", "  use_unified_pg           = true\n  placement_group_strategy = \"PACK\"\n  use_gpus", 1)
}

// RunTrace applies and destroys one unified PACK GPU cluster per size with
// the real CLI and the locally built provider (dev_overrides), through the
// CountingProxy, and splits both commands into phases; beside each, paired
// and alternating in order, NeMo-RL's own cold path on the same shape and
// the floors.
func RunTrace(ctx context.Context, cfg TraceConfig) ([]TraceResult, error) {
	logf := logTo(cfg.Log)
	ws, proxy, _, err := proxiedWorkspace(ctx, cfg.CLI, cfg.Dir, cfg.Address)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	tr := &traceRun{ctx: ctx, cfg: cfg, ws: ws, proxy: proxy, logf: logf}
	if cfg.TodayRef != "" {
		if tr.today, err = todayWorkspace(ctx, cfg.CLI, cfg.Dir, cfg.TodayRef); err != nil {
			return nil, err
		}
	}
	results := make([]TraceResult, len(cfg.Sizes))
	for rep := 0; rep < cfg.Reps; rep++ {
		for i, n := range cfg.Sizes {
			r := &results[i]
			r.Bundles = n
			name := fmt.Sprintf("%s-t%02d-r%d", cfg.Prefix, n, rep)
			spec := ReferenceSpec(name, n, LayoutUnified)
			r.Nodes = len(spec.BundleCtPerNode)
			if err := WaitUntilPlaceable(ctx, cfg.Client, spec, cfg.Wait, logf); err != nil {
				return results, err
			}
			var s TraceSample
			// The worker floor first: traceCLI splits the driver's
			// lifetime with its python start-up.
			cold, err := cfg.Floor.ColdRemove([]string{})
			if err != nil {
				return results, err
			}
			interp := cold.Startup
			s.Worker = cold.Startup + secs(cold.Import) + secs(cold.Init)
			schemaDir, err := ws.Dir("trace-schema", map[string]string{"main.tf": ProviderHCL(proxy.URL)})
			if err != nil {
				return results, err
			}
			if s.Schema, _, _, err = ws.Run(ctx, schemaDir, "providers", "schema", "-json"); err != nil {
				return results, err
			}
			provider := func() error { return tr.provider(&s, n, spec, interp) }
			other := func() error { return tr.floors(&s, name, spec) }
			first, second := provider, other
			if rep%2 == 1 {
				first, second = other, provider
			}
			if err := first(); err != nil {
				return results, err
			}
			if err := second(); err != nil {
				return results, err
			}
			r.Samples = append(r.Samples, s)
			logf("   trace %2d bundles rep %d: apply %ss destroy %ss | NeMo-RL cold %ss | empty job %ss",
				n, rep+1, Sec(s.Apply.Wall), Sec(s.Destroy.Wall), Sec(s.NeMo.Wall), Sec(s.EmptyJob))
		}
	}
	return results, nil
}

// traceRun is what every sample of RunTrace shares.
type traceRun struct {
	ctx   context.Context
	cfg   TraceConfig
	ws    *Workspace
	today *Workspace // TodayRef's provider; nil when not run
	proxy *CountingProxy
	logf  func(format string, args ...any)
}

// provider traces the apply and destroy of the cluster spec (n bundles)
// into s, and the TodayRef provider's beside them for a size whose target
// is today's time.
func (tr *traceRun) provider(s *TraceSample, n int, spec clusterspec.Spec, interp time.Duration) error {
	ctx, ws, proxy := tr.ctx, tr.ws, tr.proxy
	dir, err := ws.Dir("trace", map[string]string{"main.tf": ProviderHCL(proxy.URL) + "\n" + unifiedHCL(spec)})
	if err != nil {
		return err
	}
	var out string
	s.Apply, out, err = traceCLI(ctx, ws, proxy, dir, "apply", interp)
	tr.logf("   apply %ss (%v)", Sec(s.Apply.Wall), err)
	var derr error
	s.Destroy, _, derr = traceCLI(context.WithoutCancel(ctx), ws, proxy, dir, "destroy", interp)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, tail(out, 20))
	}
	if derr != nil {
		return derr
	}
	if tg, ok := TraceTargets[n]; ok && tg.Ratio == 0 && tr.today != nil {
		a, _, err := traceCLI(ctx, tr.today, proxy, dir, "apply", interp)
		d, _, derr := traceCLI(context.WithoutCancel(ctx), tr.today, proxy, dir, "destroy", interp)
		if err = errors.Join(err, derr); err != nil {
			return fmt.Errorf("%s's provider: %w", tr.cfg.TodayRef, err)
		}
		s.Today = a.Wall + d.Wall
	}
	return nil
}

// floors measures into s what the provider's times are read against:
// NeMo-RL's cold path (when it runs), the creation floor and the empty job.
func (tr *traceRun) floors(s *TraceSample, name string, spec clusterspec.Spec) error {
	cfg := tr.cfg
	var err error
	if cfg.NeMo != nil {
		if s.NeMo, err = cfg.NeMo.NeMoCold(name+"-nemo", spec.BundleCtPerNode, GPUsPerNode, true, 0); err != nil {
			return err
		}
		tr.logf("   NeMo-RL cold %ss", Sec(s.NeMo.Wall))
	}
	groups := DriverSpec(contract.ActionCreate, BaselineNamespace, spec, ReadyTimeout).Groups
	bare, err := cfg.Floor.Cycle(renamed(groups, name, name+"-floor"))
	if err != nil {
		return fmt.Errorf("creation floor: %w", err)
	}
	s.Bare = secs(bare.Ready)
	if s.EmptyJob, err = EmptyJob(tr.ctx, cfg.Client, name+"-emptyjob"); err != nil {
		return fmt.Errorf("empty job: %w", err)
	}
	return nil
}

// TraceTargets are the targets for apply+destroy of a unified GPU
// cluster, by bundles: a ratio to NeMo-RL's cold path (Ratio), or, Ratio 0,
// no slower than the provider built from TraceConfig.TodayRef, applied and
// destroyed beside it (met within TodayNoise).
var TraceTargets = map[int]struct{ Ratio float64 }{
	1:  {},
	4:  {},
	16: {Ratio: 0.35},
}

// DefaultTodayRef is the source before the apply-floor work.
const DefaultTodayRef = "0acd3a6"

// todayWorkspace builds the provider of git ref into dir/today (from git
// archive, so no worktree is registered) with its own CLI configuration.
func todayWorkspace(ctx context.Context, cli, dir, ref string) (*Workspace, error) {
	src := filepath.Join(dir, "today-src")
	if err := os.RemoveAll(src); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", ref, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git archive %s: %w\n%s", ref, err, out)
	}
	rc, err := devprovider.Install(ctx, src, filepath.Join(dir, "today"))
	if err != nil {
		return nil, fmt.Errorf("building the provider of %s: %w", ref, err)
	}
	return &Workspace{Tofu: cli, Root: filepath.Join(dir, "today"), RCFile: rc}, nil
}

// TodayNoise is the run-to-run spread allowed for "no slower than today".
const TodayNoise = 1.10

// traceTarget returns the target text and whether it is met.
func traceTarget(bundles int, total, nemo, today []time.Duration, todayRef string) (string, string) {
	tg, ok := TraceTargets[bundles]
	switch {
	case !ok:
		return "-", "-"
	case tg.Ratio > 0:
		if len(nemo) != len(total) || len(nemo) == 0 {
			return fmt.Sprintf("<= %.2fx NeMo-RL", tg.Ratio), "not measured (no NeMo-RL baseline)"
		}
		return fmt.Sprintf("<= %.2fx NeMo-RL", tg.Ratio), metText(float64(Median(total))/float64(Median(nemo)) <= tg.Ratio)
	case len(today) == 0:
		return "<= today", "not measured (no -today-ref)"
	default:
		return fmt.Sprintf("<= today (%s: %ss) x %.2f", todayRef, Sec(Median(today)), TodayNoise),
			metText(float64(Median(total)) <= float64(Median(today))*TodayNoise)
	}
}

func metText(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// PrintTrace prints the apply+destroy against NeMo-RL with the targets, the
// phase trace of both commands, and each phase group against its floor.
func PrintTrace(out io.Writer, all []TraceResult, cli, nemoSkipped, todayRef string) {
	var results []TraceResult
	for _, r := range all {
		if len(r.Samples) > 0 {
			results = append(results, r)
		}
	}
	printTraceSummary(out, results, cli, nemoSkipped, todayRef)
	printTracePhases(out, results)
	printTraceFloors(out, results)
}

// printTraceSummary prints the table of apply and destroy times against
// NeMo-RL's cold path and the targets.
func printTraceSummary(out io.Writer, results []TraceResult, cli, nemoSkipped, todayRef string) {
	if nemoSkipped != "" {
		fmt.Fprintf(out, "NeMo-RL's own code: not measured (%s).\n\n", nemoSkipped)
	}
	fmt.Fprintf(out, "`%s apply` + `destroy` of one unified PACK GPU cluster (logical nodes of %d bundles) with the locally built provider "+
		"(dev_overrides) through a recording proxy, against NeMo-RL's own RayVirtualCluster cold path on the same shape "+
		"(bench/nemo_baseline.py), paired and alternating in order. Medians; ratio = median of the per-repetition ratios (min-max).\n\n", cli, GPUsPerNode)
	t := NewTable(out, "bundles", "logical nodes", "reps", "apply", "destroy", "apply+destroy", "NeMo-RL cold", "ratio", "target", "")
	for _, r := range results {
		var ap, de, tot, nc, td []time.Duration
		for _, s := range r.Samples {
			ap, de, tot = append(ap, s.Apply.Wall), append(de, s.Destroy.Wall), append(tot, s.Apply.Wall+s.Destroy.Wall)
			if s.Today > 0 {
				td = append(td, s.Today)
			}
			if s.NeMo.OK {
				nc = append(nc, s.NeMo.Wall)
			}
		}
		ratio, nemo := "-", "-"
		if len(nc) == len(tot) && len(nc) > 0 {
			ratio, nemo = RatioStats(tot, nc), Sec(Median(nc))
		}
		target, met := traceTarget(r.Bundles, tot, nc, td, todayRef)
		t.Row(fmt.Sprint(r.Bundles), fmt.Sprint(r.Nodes), fmt.Sprint(len(r.Samples)), Sec(Median(ap)), Sec(Median(de)), Sec(Median(tot)),
			nemo, ratio, target, met)
	}
	t.Flush()
	fmt.Fprintln(out)
}

// printTracePhases prints the phase trace: each phase of apply and destroy,
// and the HTTP calls.
func printTracePhases(out io.Writer, results []TraceResult) {
	fmt.Fprintln(out, "Phase trace (medians, seconds). CLI start = exec until the provider's first request; provider before the job = "+
		"version, live view and checks until the job submission; supervisor process start = the submission's answer until Ray's job "+
		"supervisor worker process started, supervisor boot + driver spawn = until the driver's python process started (the supervisor "+
		"is itself a fresh python worker that imports ray and connects) (both from /proc on the local "+
		"cluster); python+import ray .. probes from the driver's progress lines; record write + driver exit = the last progress "+
		"line until the job's end (the create writes the cluster record there); poll lag = until a status poll saw the end; "+
		"result fetch = the logs call that returned the result; CLI after the result = state write and exit, of which the "+
		"job record's clean-up = until its DELETE ended (driver.Run runs it in the background after the result; the plugin does not "+
		"exit before it).")
	fmt.Fprintln(out)
	tracePhaseTable(out, results)
}

// tracePhaseTable is the phase trace's table: each phase of apply and
// destroy per result, and the HTTP calls.
func tracePhaseTable(out io.Writer, results []TraceResult) {
	header := []string{"phase"}
	for _, r := range results {
		header = append(header, "apply "+r.label(), "destroy "+r.label())
	}
	t := NewTable(out, header...)
	type row struct {
		name string
		get  func(c CLIPhases) time.Duration
	}
	rows := []row{
		{"CLI start", func(c CLIPhases) time.Duration { return c.CLIStart }},
		{"provider before the job", func(c CLIPhases) time.Duration { return c.ProviderPre }},
		{"job submit", func(c CLIPhases) time.Duration { return c.Job.Submit }},
		{"supervisor process start", func(c CLIPhases) time.Duration { return c.SupervisorStart }},
		{"supervisor boot + driver spawn", func(c CLIPhases) time.Duration {
			if c.SupervisorStart == 0 {
				return c.Job.JobStart
			}
			return c.DriverSpawn
		}},
		{"python+import ray", func(c CLIPhases) time.Duration { return c.Job.Interpreter }},
		{"ray.init / GCS connect", func(c CLIPhases) time.Duration { return c.Job.RayInit }},
		{"group creation", func(c CLIPhases) time.Duration { return c.Job.CreateCalls + c.Job.Remove }},
		{"ready wait", func(c CLIPhases) time.Duration { return c.Job.PlacementWait }},
		{"probes", func(c CLIPhases) time.Duration { return c.Job.Probe }},
		{"record write + driver exit", func(c CLIPhases) time.Duration { return c.Job.DriverExit }},
		{"poll lag (job end seen)", func(c CLIPhases) time.Duration { return c.Job.PollLag }},
		{"result fetch", func(c CLIPhases) time.Duration { return c.Job.ResultFetch }},
		{"CLI after the result", func(c CLIPhases) time.Duration { return c.CLIEnd }},
		{"  of which job record clean-up", func(c CLIPhases) time.Duration { return min(c.Cleanup, c.CLIEnd) }},
		{"other (provider gaps)", func(c CLIPhases) time.Duration { return c.Job.Other + c.Job.DeleteRecord }},
		{"total (wall)", func(c CLIPhases) time.Duration { return c.Wall }},
	}
	for _, rw := range rows {
		cells := []string{rw.name}
		for _, r := range results {
			var a, d []time.Duration
			for _, s := range r.Samples {
				a, d = append(a, rw.get(s.Apply)), append(d, rw.get(s.Destroy))
			}
			cells = append(cells, Sec(Median(a)), Sec(Median(d)))
		}
		t.Row(cells...)
	}
	cells := []string{"HTTP calls (status polls)"}
	for _, r := range results {
		var ac, ap, dc, dp []int
		for _, s := range r.Samples {
			ac, ap, dc, dp = append(ac, s.Apply.Calls), append(ap, s.Apply.Job.Polls), append(dc, s.Destroy.Calls), append(dp, s.Destroy.Job.Polls)
		}
		cells = append(cells, fmt.Sprintf("%d (%d)", medianInt(ac), medianInt(ap)), fmt.Sprintf("%d (%d)", medianInt(dc), medianInt(dp)))
	}
	t.Row(cells...)
	t.Flush()
	fmt.Fprintln(out)
}

// printTraceFloors prints each phase group against its floor.
func printTraceFloors(out io.Writer, results []TraceResult) {
	fmt.Fprintln(out, "Each phase group against its floor (medians, seconds; the floors are measured in the same repetitions). "+
		"CLI floor = `providers schema -json` (CLI and plugin start, no state); job floor = an empty job (`true`, submit until "+
		"SUCCEEDED, 50 ms polls); python floor = a fresh python process: start-up, import ray, ray.init; creation floor = "+
		"placement_group() + ready in a warm driver; probe floor = one worker start per node, in parallel (= the python floor).")
	fmt.Fprintln(out)
	header := []string{"phase group", "floor is"}
	for _, r := range results {
		header = append(header, "apply "+r.label(), "destroy "+r.label(), "floor "+r.label())
	}
	t := NewTable(out, header...)
	type group struct {
		name, floorIs string
		get           func(c CLIPhases) time.Duration
		floor         func(s TraceSample) time.Duration
	}
	groups := []group{
		{"CLI + provider around the job", "CLI floor x 1", func(c CLIPhases) time.Duration { return c.CLIStart + c.ProviderPre + c.CLIEnd },
			func(s TraceSample) time.Duration { return s.Schema }},
		{"submit .. driver process start", "empty job", func(c CLIPhases) time.Duration { return c.Job.Submit + c.Job.JobStart },
			func(s TraceSample) time.Duration { return s.EmptyJob }},
		{"driver python, import, connect", "python floor", func(c CLIPhases) time.Duration { return c.Job.Interpreter + c.Job.RayInit },
			func(s TraceSample) time.Duration { return s.Worker }},
		{"group creation + ready wait", "creation floor", func(c CLIPhases) time.Duration {
			return c.Job.CreateCalls + c.Job.PlacementWait + c.Job.Remove
		}, func(s TraceSample) time.Duration { return s.Bare }},
		{"probes (apply)", "probe floor", func(c CLIPhases) time.Duration { return c.Job.Probe },
			func(s TraceSample) time.Duration { return s.Worker }},
		{"record write, exit, polling, result", "0 (one 100 ms poll)", func(c CLIPhases) time.Duration {
			return c.Job.DriverExit + c.Job.PollLag + c.Job.ResultFetch
		}, func(TraceSample) time.Duration { return 0 }},
	}
	for _, g := range groups {
		cells := []string{g.name, g.floorIs}
		for _, r := range results {
			var a, d, f []time.Duration
			for _, s := range r.Samples {
				a, d, f = append(a, g.get(s.Apply)), append(d, g.get(s.Destroy)), append(f, g.floor(s))
			}
			cells = append(cells, Sec(Median(a)), Sec(Median(d)), Sec(Median(f)))
		}
		t.Row(cells...)
	}
	t.Flush()
	fmt.Fprintln(out)
}
