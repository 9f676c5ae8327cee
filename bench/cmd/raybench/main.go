// Command raybench runs the terraform-provider-ray benchmarks against a live
// Ray cluster and prints the results as Markdown tables. scripts/bench.sh runs
// every part; bench/README.md has the numbers and how to read them.
//
//	raybench [flags] refresh   HTTP calls and time of refresh/plan for 1, 10, 50 clusters
//	raybench [flags] tofu      one tofu apply + destroy of a 4-group cluster (CLI share)
//	raybench [flags] reference provider create/delete vs the reference's own work (probes, ports), per layout and size
//	raybench [flags] trace     real apply + destroy of a unified cluster, phase by phase, against NeMo-RL's cold path
//	raybench [flags] waves     apply + destroy of 1, 4, 12 and 50 clusters in one configuration
//	raybench [flags] race      soak: 8 states applying and destroying clusters that want the same nodes
//	raybench [flags] gpu64     64-bundle apply + destroy against NeMo-RL, and a 16-bundle apply against its floor (8 x 8 GPU cluster)
//	raybench [flags] shapes    apply, steady plan and destroy of many clusters by shape, each against its single cluster
//	raybench [flags] shapes-tables  the node tables of the -shapes named (scripts/bench.sh starts a cluster of each)
//	raybench [flags] all       reference, tofu, trace and refresh
//	raybench topo < go-test-bench-output   growth table of the topology benchmarks
//	raybench [flags] topo-ref  Go topology functions next to their Python reference versions
//	raybench [flags] topoplan  the topology data source at 10,000 nodes against the stand-in dashboard
//	raybench [flags] plan50    steady plans of 1 and 50 clusters: the provider, a minimal provider, the CLI alone; CPU profiles
//
// Every placement group it creates is named bench-<run id>-..., is removed
// after each repetition, and is swept up on failure or interrupt.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ray-infra/terraform-provider-ray/bench"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

func main() {
	os.Exit(run())
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run() int {
	o, code := parseFlags()
	if code != 0 {
		return code
	}
	part := flag.Arg(0)
	if part == "topo" {
		if err := bench.PrintTopology(os.Stdout, bufio.NewReader(os.Stdin)); err != nil {
			fmt.Fprintln(os.Stderr, "raybench topo:", err)
			return 1
		}
		return 0
	}
	if part == "plan50" {
		return runPlan50(o)
	}
	if part == "shapes-tables" {
		shapes, err := bench.ShapesNamed(o.shapes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		fmt.Println(strings.Join(bench.ShapesTables(shapes), " "))
		return 0
	}
	if part == "topo-ref" || part == "topoplan" {
		return runOffline(part, o.python, o.outDir, o.refSizes, o.refTime, o.planNodes, o.planReps, o.terraform)
	}
	w := parts{
		refresh: part == "refresh" || part == "all", tofu: part == "tofu" || part == "all",
		reference: part == "reference" || part == "all",
		trace:     part == "trace" || part == "all",
		waves:     part == "waves", race: part == "race", gpu64: part == "gpu64", shapes: part == "shapes",
		resize: part == "resize",
	}
	if !w.refresh && !w.tofu && !w.reference && !w.trace && !w.waves && !w.race && !w.gpu64 && !w.shapes && !w.resize {
		flag.Usage()
		return 2
	}
	return runLive(o, w)
}

// options are raybench's flags.
type options struct {
	address, gcs, python, jobPython, clusters, tofuBin, outDir  string
	refBundles, refLayouts, refSizes, planNodes, todayRef       string
	terraform, waveSizes, waveParallel, shapes, shapesTable     string
	contention                                                  string
	reps, groupsPer, refreshReps, traceReps, planReps, waveReps int
	plan50Counts                                                string
	plan50Reps                                                  int
	gpu64Reps, gpu64Bundles                                     int
	raceStates, raceMax                                         int
	shapesReps, shapesParallelism                               int
	shapesDefault, raceSoak                                     bool
	wait, refTime, raceFor, raceHold, raceReady                 time.Duration
}

// parseFlags defines and parses the flags; a code other than 0 is the exit
// status of a command line that names no single part or a bad
// BENCH_RACE_SECONDS.
func parseFlags() (o *options, code int) {
	o = &options{}
	flag.StringVar(&o.address, "address", envOr("RAY_ADDRESS", "http://127.0.0.1:8265"), "Ray dashboard URL")
	flag.StringVar(&o.gcs, "gcs", "127.0.0."+envOr("RAY_TF_IP_BASE", "10")+":"+envOr("RAY_TF_GCS_PORT", "6379"), "GCS address the Python baseline passes to ray.init")
	flag.StringVar(&o.python, "python", filepath.Join(envOr("RAY_BIN", ""), "python"), "python with ray installed (for the baseline)")
	flag.StringVar(&o.jobPython, "job-python", clusterspec.DefaultPythonExecutable, "python_executable of the driver jobs (the provider's default)")
	flag.IntVar(&o.reps, "reps", 5, "reference and tofu: repetitions per size")
	flag.StringVar(&o.clusters, "clusters", "1,10,50", "refresh: cluster counts")
	flag.IntVar(&o.groupsPer, "groups-per-cluster", 3, "refresh: placement groups per cluster")
	flag.IntVar(&o.refreshReps, "refresh-reps", 3, "refresh: in-process repetitions")
	flag.StringVar(&o.tofuBin, "tofu", envOr("TOFU", envOr("TF_ACC_TERRAFORM_PATH", "")), "OpenTofu binary (tofu and refresh parts)")
	flag.StringVar(&o.outDir, "out", "bench/out", "work directory (tofu workspaces, provider build, baseline script)")
	flag.DurationVar(&o.wait, "wait", 5*time.Minute, "how long to wait for GPUs held by other users of the cluster")
	flag.StringVar(&o.refBundles, "bundles", "1,4,16", "reference: GPU bundles per cluster (64 needs 64 free GPUs)")
	flag.StringVar(&o.refLayouts, "layouts", "per-node,unified", "reference: group layouts")
	flag.StringVar(&o.refSizes, "ref-sizes", "100,1000,10000", "topo-ref: synthetic cluster sizes (nodes)")
	flag.DurationVar(&o.refTime, "ref-time", time.Second, "topo-ref: minimum time per function and size, per language")
	flag.StringVar(&o.planNodes, "plan-nodes", "1000,10000", "topoplan: alive nodes served by the stand-in dashboard")
	flag.StringVar(&o.todayRef, "today-ref", bench.DefaultTodayRef, "trace: git ref whose provider the 'no slower than today' rows run beside (empty: skip)")
	flag.IntVar(&o.traceReps, "trace-reps", 3, "trace: repetitions of each apply+destroy")
	flag.IntVar(&o.planReps, "plan-reps", 3, "topoplan: repetitions")
	flag.StringVar(&o.plan50Counts, "plan50-clusters", "1,50", "plan50: cluster counts (the first is the baseline)")
	flag.IntVar(&o.plan50Reps, "plan50-reps", 5, "plan50: repetitions of each plan")
	flag.IntVar(&o.gpu64Reps, "gpu64-reps", 3, "gpu64: repetitions (each: both layouts beside NeMo-RL, and the apply against its floor)")
	flag.IntVar(&o.gpu64Bundles, "gpu64-bundles", bench.NeMoFullSize, "gpu64: GPU bundles of the NeMo-RL rows (logical nodes of 8)")
	flag.StringVar(&o.terraform, "terraform", envOr("TERRAFORM", "/usr/local/bin/terraform"), "topoplan, trace, waves, shapes, race and gpu64: terraform (or tofu) binary")
	flag.StringVar(&o.waveSizes, "waves", "1,4,12,50", "waves: cluster counts (the first is the baseline)")
	flag.StringVar(&o.waveParallel, "waves-parallel", "50", "waves: counts also applied with -parallelism equal to the count")
	flag.IntVar(&o.waveReps, "waves-reps", 3, "waves: repetitions")
	flag.StringVar(&o.shapes, "shapes", bench.ShapesAll, "shapes: the shapes measured")
	flag.IntVar(&o.shapesReps, "shapes-reps", 3, "shapes: paired repetitions (each shape and its single cluster)")
	flag.IntVar(&o.shapesParallelism, "shapes-parallelism", 0, "shapes: -parallelism of every command (0: all of a shape's clusters at once, at least 10)")
	flag.BoolVar(&o.shapesDefault, "shapes-default", true, "shapes: also run the shapes of more than 10 clusters at Terraform's default -parallelism (reported)")
	flag.StringVar(&o.shapesTable, "shapes-table", "", "shapes: only the shapes of this node table (the cluster scripts/bench.sh started; empty: all)")
	flag.StringVar(&o.contention, "contention", bench.ContentionSizes, "race: N of the contention rows (states applying at once)")
	flag.BoolVar(&o.raceSoak, "race-soak", true, "race: the soak after the contention rows (BENCH_RACE_SECONDS=0 skips it too)")
	raceSeconds, err := strconv.Atoi(envOr("BENCH_RACE_SECONDS", "300"))
	if err != nil || raceSeconds < 0 {
		fmt.Fprintf(os.Stderr, "raybench: BENCH_RACE_SECONDS=%q is not a number of seconds\n", os.Getenv("BENCH_RACE_SECONDS"))
		return nil, 2
	}
	flag.DurationVar(&o.raceFor, "race-for", time.Duration(raceSeconds)*time.Second, "race: how long the states loop (default BENCH_RACE_SECONDS, 300)")
	flag.IntVar(&o.raceStates, "race-states", 8, "race: working directories (states) applying at once")
	flag.DurationVar(&o.raceHold, "race-hold", 5*time.Second, "race: how long a state holds its cluster before destroying it")
	flag.IntVar(&o.raceMax, "race-max-applies", 100, "race: most applies per state")
	flag.DurationVar(&o.raceReady, "race-ready-timeout", 20*time.Second, "race: ready_timeout of the capacity_check = \"total\" states (how long they queue)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: raybench [flags] reference|refresh|tofu|trace|waves|race|gpu64|shapes|all|topo|topo-ref|topoplan|plan50\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		return nil, 2
	}
	return o, 0
}

// parts are the live parts a run measures.
type parts struct {
	refresh, tofu, reference, trace, waves, race, gpu64, shapes, resize bool
}

// live is a run against a Ray cluster: what every part shares.
type live struct {
	o           *options
	ctx         context.Context
	client      *bench.Client
	prefix      string // every placement group's name starts with it
	abs         string // the work directory
	base, ref   *bench.Baseline
	nemo        *bench.Baseline // nil when skipped, for nemoSkipped
	nemoSkipped string
	status      int
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// fail reports a failed part, marks the run failed and sweeps up what the
// part left.
func (l *live) fail(what string, err error) {
	logf("!! %s: %v", what, err)
	l.status = 1
	if left, serr := bench.Sweep(l.client.Client, l.base, l.o.jobPython, clusterspec.DefaultNamespace, l.prefix); len(left) > 0 || serr != nil {
		logf(">> swept %v (%v)", left, serr)
	}
}

// runLive runs the parts w names against the Ray dashboard at o.address,
// with the baselines they need, sweeping up every group named for the run
// at the end; it returns the exit status.
func runLive(o *options, w parts) int {
	client, err := bench.NewClient(o.address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	vctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	v, err := client.Version(vctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "raybench: no Ray dashboard at %s: %v\n", o.address, err)
		return 1
	}
	var id [3]byte
	_, _ = rand.Read(id[:])
	l := &live{o: o, ctx: ctx, client: client, prefix: "bench-" + hex.EncodeToString(id[:])}
	l.abs, _ = filepath.Abs(o.outDir)

	fmt.Printf("# terraform-provider-ray benchmarks, %s\n\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d cores (%s/%s, %s), %s; Ray %s at %s; source %s; load average at start %s; groups named %s-*\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), runtime.Version(), v.RayVersion, o.address, gitState(),
		loadAvg(), l.prefix)

	l.base = &bench.Baseline{Python: o.python, Address: o.gcs, Dir: l.abs}
	l.ref = bench.NewReferenceBaseline(o.python, o.gcs, l.abs)
	if w.reference {
		logf(">> starting the reference baseline driver (ray.init(address=%q))", o.gcs)
		if err := l.ref.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 1
		}
		defer l.ref.Stop()
	}
	if w.reference || w.trace || w.gpu64 {
		if l.nemo, l.nemoSkipped = bench.NewNeMoBaseline(o.python, o.gcs, l.abs); l.nemo == nil {
			logf(">> NeMo-RL baseline skipped: %s", l.nemoSkipped)
		}
	}
	if w.refresh || w.reference || w.trace || w.gpu64 {
		logf(">> starting the Python baseline driver (ray.init(address=%q))", o.gcs)
		if err := l.base.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 1
		}
	}
	defer func() {
		left, err := bench.Sweep(client.Client, l.base, o.jobPython, clusterspec.DefaultNamespace, l.prefix)
		l.base.Stop()
		if len(left) > 0 {
			logf(">> swept leftover groups: %s", strings.Join(left, ", "))
		}
		if err != nil {
			logf("!! sweep: %v", err)
		}
	}()
	return l.runParts(w)
}

// runParts runs each part w names, in the order of the report, until the
// run is interrupted; it returns the exit status.
func (l *live) runParts(w parts) int {
	steps := []struct {
		want bool
		run  func() int
	}{
		{w.reference, l.reference}, {w.tofu, l.tofu}, {w.trace, l.trace},
		{w.waves, l.waves}, {w.shapes, l.shapes}, {w.race, l.race}, {w.gpu64, l.gpu64}, {w.refresh, l.refresh},
		{w.resize, l.resize},
	}
	for _, s := range steps {
		if s.want && l.ctx.Err() == nil {
			if code := s.run(); code != 0 {
				return code
			}
		}
	}
	fmt.Printf("load average at the end: %s\n\n", loadAvg())
	if l.ctx.Err() != nil {
		l.status = 1
	}
	return l.status
}

// sizes parses a flag's list of sizes; a code other than 0 is the exit
// status for a bad one.
func sizes(list string) ([]int, int) {
	sz, err := intList(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench:", err)
		return nil, 2
	}
	return sz, 0
}

// reference is part 1: create and delete against the reference's own work.
func (l *live) reference() int {
	sz, code := sizes(l.o.refBundles)
	if code != 0 {
		return code
	}
	var layouts []bench.Layout
	for _, s := range strings.Split(l.o.refLayouts, ",") {
		layouts = append(layouts, bench.Layout(strings.TrimSpace(s)))
	}
	logf(">> reference: %v bundles, %v, x %d repetitions", sz, layouts, l.o.reps)
	start := time.Now()
	res, err := bench.RunReference(l.ctx, bench.ReferenceConfig{Apply: &bench.ApplyConfig{Client: l.client,
		JobPython: l.o.jobPython, Namespace: clusterspec.DefaultNamespace, Prefix: l.prefix, Wait: l.o.wait, Log: os.Stderr},
		Ref: l.ref, Floor: l.base, NeMo: l.nemo, Sizes: sz, Layouts: layouts, Reps: l.o.reps})
	if err != nil {
		l.fail("reference", err)
	}
	fmt.Printf("## 1. Create and delete against the reference's own work (%s)\n\n", time.Since(start).Round(time.Second))
	bench.PrintReference(os.Stdout, res)
	fmt.Printf("#### Against NeMo-RL's own code\n\n")
	bench.PrintNeMo(os.Stdout, res, l.nemoSkipped)
	return 0
}

// tofu is part 1b: one tofu apply and destroy of a 4-group cluster.
func (l *live) tofu() int {
	logf(">> tofu apply + destroy of a 4-group cluster")
	start := time.Now()
	res, err := bench.RunTofu(l.ctx, bench.TofuConfig{Tofu: l.o.tofuBin, Dir: l.abs, Address: l.o.address, Client: l.client.Client,
		Name: l.prefix + "-tofu", Groups: 4, Wait: l.o.wait, Log: os.Stderr})
	fmt.Printf("## 1b. tofu apply + destroy (%s)\n\n", time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("tofu", err)
	} else {
		bench.PrintTofu(os.Stdout, res)
	}
	return 0
}

// resize is part 8: a per-node cluster grown by one node in place, against
// the creates of the same shapes (issue #55).
func (l *live) resize() int {
	const nodes = 4
	logf(">> resize: %d one-GPU nodes grown to %d in place, x %d repetitions", nodes, nodes+1, l.o.reps)
	start := time.Now()
	res, err := bench.RunResize(l.ctx, bench.ResizeConfig{Tofu: l.o.tofuBin, Dir: l.abs, Address: l.o.address,
		Name: l.prefix + "-resize", Nodes: nodes, Reps: l.o.reps, Log: os.Stderr})
	fmt.Printf("## 8. Growing a per-node cluster in place (%s)\n\n", time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("resize", err)
	}
	bench.PrintResize(os.Stdout, res)
	return 0
}

// trace is part 1c: a real apply and destroy, phase by phase, against
// NeMo-RL's cold path.
func (l *live) trace() int {
	sz, code := sizes(l.o.refBundles)
	if code != 0 {
		return code
	}
	logf(">> trace: %s apply + destroy of %v unified bundles x %d", l.o.terraform, sz, l.o.traceReps)
	start := time.Now()
	res, err := bench.RunTrace(l.ctx, bench.TraceConfig{CLI: l.o.terraform, Dir: l.abs, Address: l.o.address, Client: l.client.Client,
		Floor: l.base, NeMo: l.nemo, Prefix: l.prefix, TodayRef: l.o.todayRef, Sizes: sz, Reps: l.o.traceReps, Wait: l.o.wait, Log: os.Stderr})
	if err != nil {
		l.fail("trace", err)
	}
	fmt.Printf("## 1c. Phase trace of a real apply and destroy, against NeMo-RL's cold path (%s)\n\n", time.Since(start).Round(time.Second))
	bench.PrintTrace(os.Stdout, res, filepath.Base(l.o.terraform), l.nemoSkipped, l.o.todayRef)
	return 0
}

// waves is part 5: many clusters in one apply.
func (l *live) waves() int {
	counts, code := sizes(l.o.waveSizes)
	if code != 0 {
		return code
	}
	parallel, code := sizes(l.o.waveParallel)
	if code != 0 {
		return code
	}
	logf(">> waves: %v clusters (and %v at full parallelism) x %d repetitions", counts, parallel, l.o.waveReps)
	start := time.Now()
	rows, err := bench.RunWaves(l.ctx, bench.WavesConfig{CLI: l.o.terraform, Dir: l.abs, Address: l.o.address, Client: l.client.Client,
		Sizes: counts, Parallel: parallel, Reps: l.o.waveReps, Prefix: l.prefix, Log: os.Stderr})
	fmt.Printf("## 5. Many clusters in one apply (%s)\n\n", time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("waves", err)
	}
	bench.PrintWaves(os.Stdout, rows)
	return 0
}

// race is part 6: N states applying at once, apart and racing (the
// contention rows), then states applying and destroying clusters that want
// the same nodes, a soak; what either leaves behind fails the run.
func (l *live) race() int {
	o := l.o
	cfg := bench.RaceConfig{CLI: o.terraform, Dir: l.abs, Address: o.address, GCS: o.gcs,
		Python: o.python, Client: l.client.Client, States: o.raceStates, Duration: o.raceFor, MaxApplies: o.raceMax,
		Hold: o.raceHold, ReadyTimeout: o.raceReady, Prefix: l.prefix, Log: os.Stderr}
	start := time.Now()
	sizes, err := intList(o.contention)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raybench: -contention:", err)
		return 2
	}
	var rows []bench.ContentionRow
	for _, n := range sizes {
		logf(">> race: %d states at once, apart, racing, then half select_nodes and half placed by Ray", n)
		got, err := bench.RunContention(l.ctx, cfg, n)
		if err != nil {
			l.fail("race contention", err)
		}
		for _, r := range got {
			if len(r.Failed) > 0 || !r.Left.Clean() {
				logf("!! race: %d states %s: %d failed or Ray still holds what they made", r.N, r.Mode, len(r.Failed))
				l.status = 1
			}
		}
		rows = append(rows, got...)
	}
	fmt.Printf("## 6. Teams applying at the same moment: N states at once, apart and contending (%s)\n\n", time.Since(start).Round(time.Second))
	bench.PrintContention(os.Stdout, rows)
	if !o.raceSoak || o.raceFor <= 0 {
		logf(">> race: soak skipped")
		return 0
	}
	logf(">> race: %d states x %s on the cluster at %s", o.raceStates, o.raceFor, o.address)
	start = time.Now()
	res, err := bench.RunRace(l.ctx, cfg)
	fmt.Printf("## 6b. Teams applying at the same moment, a soak (%s)\n\n", time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("race", err)
	}
	bench.PrintRace(os.Stdout, res, o.raceReady)
	if res != nil && !res.Left.Clean() {
		logf("!! race: Ray still holds what the soak made (see the row)")
		l.status = 1
	}
	return 0
}

// refresh is part 2: refresh and plan of 1, 10 and 50 clusters.
func (l *live) refresh() int {
	cl, code := sizes(l.o.clusters)
	if code != 0 {
		return code
	}
	logf(">> refresh/plan: %v clusters x %d groups", cl, l.o.groupsPer)
	start := time.Now()
	res, err := bench.RunRefresh(l.ctx, bench.RefreshConfig{Client: l.client, Baseline: l.base, Address: l.o.address,
		Tofu: l.o.tofuBin, Dir: l.abs, Clusters: cl, GroupsPerCluster: l.o.groupsPer, Reps: l.o.refreshReps,
		Prefix: l.prefix, Log: os.Stderr})
	fmt.Printf("## 2. Refresh / plan (%s)\n\n", time.Since(start).Round(time.Second))
	if err != nil {
		l.fail("refresh", err)
	}
	bench.PrintRefresh(os.Stdout, res)
	return 0
}

// gitState names the commit measured, and whether the driver or resource
// code differed from it.
func gitState() string {
	head, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	st := strings.TrimSpace(string(head))
	dirty, _ := exec.Command("git", "status", "--porcelain", "--", "internal", "main.go", "go.mod").Output()
	if n := len(strings.Fields(string(dirty))) / 2; n > 0 {
		st += fmt.Sprintf(" + uncommitted changes under internal/ (%d paths)", n)
	}
	return st
}

func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
