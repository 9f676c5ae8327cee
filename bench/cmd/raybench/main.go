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
//	raybench [flags] all       reference, tofu, trace and refresh
//	raybench topo < go-test-bench-output   growth table of the topology benchmarks
//	raybench [flags] topo-ref  Go topology functions next to their Python reference versions
//	raybench [flags] topoplan  the topology data source at 10,000 nodes against the stand-in dashboard
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
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
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
	address := flag.String("address", envOr("RAY_ADDRESS", "http://127.0.0.1:8265"), "Ray dashboard URL")
	gcs := flag.String("gcs", "127.0.0."+envOr("RAY_TF_IP_BASE", "10")+":"+envOr("RAY_TF_GCS_PORT", "6379"), "GCS address the Python baseline passes to ray.init")
	python := flag.String("python", filepath.Join(envOr("RAY_BIN", ""), "python"), "python with ray installed (for the baseline)")
	jobPython := flag.String("job-python", vcluster.DefaultPythonExecutable, "python_executable of the driver jobs (the provider's default)")
	reps := flag.Int("reps", 5, "reference and tofu: repetitions per size")
	clusters := flag.String("clusters", "1,10,50", "refresh: cluster counts")
	groupsPer := flag.Int("groups-per-cluster", 3, "refresh: placement groups per cluster")
	refreshReps := flag.Int("refresh-reps", 3, "refresh: in-process repetitions")
	tofuBin := flag.String("tofu", envOr("TOFU", envOr("TF_ACC_TERRAFORM_PATH", "")), "OpenTofu binary (tofu and refresh parts)")
	outDir := flag.String("out", "bench/out", "work directory (tofu workspaces, provider build, baseline script)")
	wait := flag.Duration("wait", 5*time.Minute, "how long to wait for GPUs held by other users of the cluster")
	refBundles := flag.String("bundles", "1,4,16", "reference: GPU bundles per cluster (64 needs 64 free GPUs)")
	refLayouts := flag.String("layouts", "per-node,unified", "reference: group layouts")
	refSizes := flag.String("ref-sizes", "100,1000,10000", "topo-ref: synthetic cluster sizes (nodes)")
	refTime := flag.Duration("ref-time", time.Second, "topo-ref: minimum time per function and size, per language")
	planNodes := flag.String("plan-nodes", "1000,10000", "topoplan: alive nodes served by the stand-in dashboard")
	todayRef := flag.String("today-ref", bench.DefaultTodayRef, "trace: git ref whose provider the 'no slower than today' rows run beside (empty: skip)")
	traceReps := flag.Int("trace-reps", 3, "trace: repetitions of each apply+destroy")
	planReps := flag.Int("plan-reps", 3, "topoplan: repetitions")
	terraform := flag.String("terraform", envOr("TERRAFORM", "/usr/local/bin/terraform"), "topoplan, trace and waves: terraform (or tofu) binary")
	waveSizes := flag.String("waves", "1,4,12,50", "waves: cluster counts (the first is the baseline)")
	waveParallel := flag.String("waves-parallel", "50", "waves: counts also applied with -parallelism equal to the count")
	waveReps := flag.Int("waves-reps", 3, "waves: repetitions")
	raceSeconds, err := strconv.Atoi(envOr("BENCH_RACE_SECONDS", "300"))
	if err != nil || raceSeconds < 1 {
		fmt.Fprintf(os.Stderr, "raybench: BENCH_RACE_SECONDS=%q is not a number of seconds\n", os.Getenv("BENCH_RACE_SECONDS"))
		return 2
	}
	raceFor := flag.Duration("race-for", time.Duration(raceSeconds)*time.Second, "race: how long the states loop (default BENCH_RACE_SECONDS, 300)")
	raceStates := flag.Int("race-states", 8, "race: working directories (states) applying at once")
	raceHold := flag.Duration("race-hold", 5*time.Second, "race: how long a state holds its cluster before destroying it")
	raceMax := flag.Int("race-max-applies", 100, "race: most applies per state")
	raceReady := flag.Duration("race-ready-timeout", 20*time.Second, "race: ready_timeout of the capacity_check = \"total\" states (how long they queue)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: raybench [flags] reference|refresh|tofu|trace|waves|race|all|topo|topo-ref|topoplan\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		return 2
	}
	part := flag.Arg(0)
	if part == "topo" {
		if err := bench.PrintTopology(os.Stdout, bufio.NewReader(os.Stdin)); err != nil {
			fmt.Fprintln(os.Stderr, "raybench topo:", err)
			return 1
		}
		return 0
	}
	if part == "topo-ref" || part == "topoplan" {
		return runOffline(part, *python, *outDir, *refSizes, *refTime, *planNodes, *planReps, *terraform)
	}
	wantRefresh, wantTofu := part == "refresh" || part == "all", part == "tofu" || part == "all"
	wantReference := part == "reference" || part == "all"
	wantTrace := part == "trace" || part == "all"
	wantWaves, wantRace := part == "waves", part == "race"
	if !wantRefresh && !wantTofu && !wantReference && !wantTrace && !wantWaves && !wantRace {
		flag.Usage()
		return 2
	}

	client, err := bench.NewClient(*address)
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
		fmt.Fprintf(os.Stderr, "raybench: no Ray dashboard at %s: %v\n", *address, err)
		return 1
	}
	var id [3]byte
	_, _ = rand.Read(id[:])
	prefix := "bench-" + hex.EncodeToString(id[:])
	abs, _ := filepath.Abs(*outDir)
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

	fmt.Printf("# terraform-provider-ray benchmarks, %s\n\n", time.Now().Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %d cores (%s/%s, %s), %s; Ray %s at %s; source %s; load average at start %s; groups named %s-*\n\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), runtime.Version(), v.RayVersion, *address, gitState(),
		loadAvg(), prefix)

	base := &bench.Baseline{Python: *python, Address: *gcs, Dir: abs}
	ref := bench.NewReferenceBaseline(*python, *gcs, abs)
	if wantReference {
		log(">> starting the reference baseline driver (ray.init(address=%q))", *gcs)
		if err := ref.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 1
		}
		defer ref.Stop()
	}
	var nemo *bench.Baseline
	nemoSkipped := ""
	if wantReference || wantTrace {
		if nemo, nemoSkipped = bench.NewNeMoBaseline(*python, *gcs, abs); nemo == nil {
			log(">> NeMo-RL baseline skipped: %s", nemoSkipped)
		}
	}
	if wantRefresh || wantReference || wantTrace {
		log(">> starting the Python baseline driver (ray.init(address=%q))", *gcs)
		if err := base.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 1
		}
	}
	status := 0
	defer func() {
		left, err := bench.Sweep(client.Client, base, *jobPython, vcluster.DefaultNamespace, prefix)
		base.Stop()
		if len(left) > 0 {
			log(">> swept leftover groups: %s", strings.Join(left, ", "))
		}
		if err != nil {
			log("!! sweep: %v", err)
		}
	}()
	fail := func(what string, err error) {
		log("!! %s: %v", what, err)
		status = 1
		if left, serr := bench.Sweep(client.Client, base, *jobPython, vcluster.DefaultNamespace, prefix); len(left) > 0 || serr != nil {
			log(">> swept %v (%v)", left, serr)
		}
	}

	if wantReference && ctx.Err() == nil {
		sz, err := intList(*refBundles)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		var layouts []bench.Layout
		for _, l := range strings.Split(*refLayouts, ",") {
			layouts = append(layouts, bench.Layout(strings.TrimSpace(l)))
		}
		log(">> reference: %v bundles, %v, x %d repetitions", sz, layouts, *reps)
		start := time.Now()
		res, err := bench.RunReference(ctx, bench.ReferenceConfig{Apply: &bench.ApplyConfig{Client: client,
			JobPython: *jobPython, Namespace: vcluster.DefaultNamespace, Prefix: prefix, Wait: *wait, Log: os.Stderr},
			Ref: ref, Floor: base, NeMo: nemo, Sizes: sz, Layouts: layouts, Reps: *reps})
		if err != nil {
			fail("reference", err)
		}
		fmt.Printf("## 1. Create and delete against the reference's own work (%s)\n\n", time.Since(start).Round(time.Second))
		bench.PrintReference(os.Stdout, res)
		fmt.Printf("#### Against NeMo-RL's own code\n\n")
		bench.PrintNeMo(os.Stdout, res, nemoSkipped)
	}
	if wantTofu && ctx.Err() == nil {
		log(">> tofu apply + destroy of a 4-group cluster")
		start := time.Now()
		res, err := bench.RunTofu(ctx, bench.TofuConfig{Tofu: *tofuBin, Dir: abs, Address: *address, Client: client.Client,
			Name: prefix + "-tofu", Groups: 4, Wait: *wait, Log: os.Stderr})
		fmt.Printf("## 1b. tofu apply + destroy (%s)\n\n", time.Since(start).Round(time.Second))
		if err != nil {
			fail("tofu", err)
		} else {
			bench.PrintTofu(os.Stdout, res)
		}
	}
	if wantTrace && ctx.Err() == nil {
		sz, err := intList(*refBundles)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		log(">> trace: %s apply + destroy of %v unified bundles x %d", *terraform, sz, *traceReps)
		start := time.Now()
		res, err := bench.RunTrace(ctx, bench.TraceConfig{CLI: *terraform, Dir: abs, Address: *address, Client: client.Client,
			Floor: base, NeMo: nemo, Prefix: prefix, TodayRef: *todayRef, Sizes: sz, Reps: *traceReps, Wait: *wait, Log: os.Stderr})
		if err != nil {
			fail("trace", err)
		}
		fmt.Printf("## 1c. Phase trace of a real apply and destroy, against NeMo-RL's cold path (%s)\n\n", time.Since(start).Round(time.Second))
		bench.PrintTrace(os.Stdout, res, filepath.Base(*terraform), nemoSkipped, *todayRef)
	}
	if wantWaves && ctx.Err() == nil {
		sizes, err := intList(*waveSizes)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		parallel, err := intList(*waveParallel)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		log(">> waves: %v clusters (and %v at full parallelism) x %d repetitions", sizes, parallel, *waveReps)
		start := time.Now()
		rows, err := bench.RunWaves(ctx, bench.WavesConfig{CLI: *terraform, Dir: abs, Address: *address, Client: client.Client,
			Sizes: sizes, Parallel: parallel, Reps: *waveReps, Prefix: prefix, Log: os.Stderr})
		fmt.Printf("## 5. Many clusters in one apply (%s)\n\n", time.Since(start).Round(time.Second))
		if err != nil {
			fail("waves", err)
		}
		bench.PrintWaves(os.Stdout, rows)
	}
	if wantRace && ctx.Err() == nil {
		log(">> race: %d states x %s on the cluster at %s", *raceStates, *raceFor, *address)
		start := time.Now()
		res, err := bench.RunRace(ctx, bench.RaceConfig{CLI: *terraform, Dir: abs, Address: *address, GCS: *gcs,
			Python: *python, Client: client.Client, States: *raceStates, Duration: *raceFor, MaxApplies: *raceMax,
			Hold: *raceHold, ReadyTimeout: *raceReady, Prefix: prefix, Log: os.Stderr})
		fmt.Printf("## 6. Teams applying at the same moment, a soak (%s)\n\n", time.Since(start).Round(time.Second))
		if err != nil {
			fail("race", err)
		}
		bench.PrintRace(os.Stdout, res, *raceReady)
		if res != nil && !res.Left.Clean() {
			log("!! race: Ray still holds what the soak made (see the row)")
			status = 1
		}
	}
	if wantRefresh && ctx.Err() == nil {
		cl, err := intList(*clusters)
		if err != nil {
			fmt.Fprintln(os.Stderr, "raybench:", err)
			return 2
		}
		log(">> refresh/plan: %v clusters x %d groups", cl, *groupsPer)
		start := time.Now()
		res, err := bench.RunRefresh(ctx, bench.RefreshConfig{Client: client, Baseline: base, Address: *address,
			Tofu: *tofuBin, Dir: abs, Clusters: cl, GroupsPerCluster: *groupsPer, Reps: *refreshReps,
			Prefix: prefix, Log: os.Stderr})
		fmt.Printf("## 2. Refresh / plan (%s)\n\n", time.Since(start).Round(time.Second))
		if err != nil {
			fail("refresh", err)
		}
		bench.PrintRefresh(os.Stdout, res)
	}
	fmt.Printf("load average at the end: %s\n\n", loadAvg())
	if ctx.Err() != nil {
		status = 1
	}
	return status
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
