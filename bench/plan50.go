package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/devprovider"
)

// Part plan50: the steady plan of 1 and 50 clusters with
// the provider, with a provider of the same schemas and no logic
// (bench/cmd/minprovider), and with the CLI alone (terraform_data), paired
// and alternating in order within each repetition, against the stand-in
// dashboard. What the provider adds per instance over the minimal one is its
// own work; what the minimal one adds over the CLI is the framework's.

// MinimalProviderPkg is the minimal provider's main package.
const MinimalProviderPkg = "./bench/cmd/minprovider"

// Plan50Config says what RunPlan50 measures.
type Plan50Config struct {
	CLI              string // terraform or tofu
	Dir              string // work directory (absolute)
	Counts           []int  // cluster counts, the first the baseline (1)
	GroupsPerCluster int
	Reps             int
	// Profile asks for CPU profiles of each plugin (RAY_TF_CPUPROFILE)
	// during profiledPlans more, untimed plans of the last count.
	Profile bool
	Log     io.Writer
}

// PlanTimes is the wall and CPU time (CLI + plugin) of one plan, or the
// medians of several.
type PlanTimes struct{ Wall, CPU time.Duration }

// Plan50Row is one cluster count: the medians of each contender.
type Plan50Row struct {
	Clusters, Reps       int
	Ours, Minimal, Floor PlanTimes
	Summary              string
}

// Plan50Result is the part's outcome; Profiles are the CPU profiles of the
// last count's plugins by contender ("ours", "minimal"), with the binaries
// pprof needs beside them.
type Plan50Result struct {
	CLIVersion string
	Rows       []Plan50Row
	Profiles   map[string]Profile
}

// Profile is one plugin's CPU profiles (one per profiled plan, merged by
// pprof) and the binary that wrote them.
type Profile struct {
	Files  []string
	Binary string
}

// profiledPlans is how many plans each plugin is profiled in: one plan of
// 50 clusters is under a second of CPU, 100 samples a second.
const profiledPlans = 5

// RunPlan50 builds both providers and plans each count with each.
func RunPlan50(ctx context.Context, cfg Plan50Config) (*Plan50Result, error) {
	log := logTo(cfg.Log)
	ours, _, err := NewWorkspace(ctx, cfg.CLI, filepath.Join(cfg.Dir, "plan50"))
	if err != nil {
		return nil, err
	}
	minRC, err := devprovider.InstallPackage(ctx, ".", filepath.Join(cfg.Dir, "plan50-minimal"), MinimalProviderPkg)
	if err != nil {
		return nil, fmt.Errorf("building the minimal provider: %w", err)
	}
	minimal := &Workspace{Tofu: cfg.CLI, Root: ours.Root, RCFile: minRC}
	res := &Plan50Result{CLIVersion: cliVersion(ctx, cfg.CLI), Profiles: map[string]Profile{}}
	for i, n := range cfg.Counts {
		log(">> plan50: %d clusters, %d repetitions (ours, minimal, CLI floor, alternating)", n, cfg.Reps)
		row, err := plan50Row(ctx, cfg, ours, minimal, n, cfg.Profile && i == len(cfg.Counts)-1, res.Profiles)
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// plan50Row plans n steady clusters with ours, the minimal provider and the
// CLI floor, cfg.Reps times each, the order reversed every other repetition;
// with profile, it then profiles both plugins into profiles.
func plan50Row(ctx context.Context, cfg Plan50Config, ours, minimal *Workspace, n int, profile bool, profiles map[string]Profile) (Plan50Row, error) {
	st, clusters := steadyStandIn(n, cfg.GroupsPerCluster, "plan50")
	url, stop, err := serveLoopback(st)
	if err != nil {
		return Plan50Row{}, err
	}
	defer stop()
	dir, floorDir, err := steadyDirs(ctx, ours, url, clusters, "plan50", fmt.Sprintf("plan50-%d", n))
	if err != nil {
		return Plan50Row{}, err
	}
	var samples [3][]PlanTimes
	contenders := []struct {
		name string
		ws   *Workspace
		dir  string
	}{{"ours", ours, dir}, {"minimal", minimal, dir}, {"CLI floor", ours, floorDir}}
	row := Plan50Row{Clusters: n, Reps: cfg.Reps}
	for rep := range cfg.Reps {
		for k := range contenders {
			if rep%2 == 1 {
				k = len(contenders) - 1 - k
			}
			c := contenders[k]
			wall, cpu, out, err := noChangesPlan(ctx, c.ws, c.dir)
			if err != nil {
				return row, fmt.Errorf("%s: %w", c.name, err)
			}
			samples[k] = append(samples[k], PlanTimes{wall, cpu})
			if k == 0 {
				row.Summary = Summary(out)
			}
		}
	}
	row.Ours, row.Minimal, row.Floor = medianTimes(samples[0]), medianTimes(samples[1]), medianTimes(samples[2])
	if profile {
		return row, profilePlugins(ctx, cfg.Dir, dir, map[string]*Workspace{"ours": ours, "minimal": minimal}, profiles)
	}
	return row, nil
}

// profilePlugins runs one more plan in dir with each workspace's plugin
// writing a CPU profile (RAY_TF_CPUPROFILE) under work, into profiles.
func profilePlugins(ctx context.Context, work, dir string, plugins map[string]*Workspace, profiles map[string]Profile) error {
	for name, ws := range plugins {
		p := Profile{Binary: filepath.Join(filepath.Dir(ws.RCFile), "bin", "terraform-provider-ray")}
		for i := range profiledPlans {
			file := filepath.Join(work, fmt.Sprintf("plan50-%s-%d.pprof", name, i))
			if r := ws.RunEnv(ctx, dir, []string{"RAY_TF_CPUPROFILE=" + file}, "plan", "-no-color", "-lock=false",
				"-detailed-exitcode"); r.Err != nil || r.Code != 0 {
				return fmt.Errorf("profiled plan (%s) exited %d (%v):\n%s", name, r.Code, r.Err, tail(r.Out, 40))
			}
			p.Files = append(p.Files, file)
		}
		profiles[name] = p
	}
	return nil
}

func medianTimes(ts []PlanTimes) PlanTimes {
	var wall, cpu []time.Duration
	for _, t := range ts {
		wall, cpu = append(wall, t.Wall), append(cpu, t.CPU)
	}
	return PlanTimes{Median(wall), Median(cpu)}
}

// cliVersion is the CLI's name and version, from `cli version`.
func cliVersion(ctx context.Context, cli string) string {
	out, err := exec.CommandContext(ctx, cli, "version").CombinedOutput()
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "OpenTofu v") || strings.HasPrefix(l, "Terraform v") {
			return strings.TrimSpace(l)
		}
	}
	return "?"
}

// PerInstance is what each cluster past the first adds to a plan: the
// difference between the plans of many and of one, over the extra instances.
func PerInstance(one, many time.Duration, n int) time.Duration {
	if n <= 1 {
		return 0
	}
	return (many - one) / time.Duration(n-1)
}

// PerInstanceTarget is the most the provider's per-instance plan cost may be,
// as a multiple of the minimal provider's (the same schemas, no logic).
const PerInstanceTarget = 1.1

// PrintPlan50 prints the part's table, the per-instance costs and the
// target lines.
func PrintPlan50(out io.Writer, res *Plan50Result) {
	if res == nil || len(res.Rows) == 0 {
		return
	}
	fmt.Fprintf(out, "Steady `plan` (\"%s\") with %s against the stand-in dashboard (%d nodes): the provider, the minimal provider "+
		"(`bench/cmd/minprovider`: the same schemas, no logic) and the CLI alone (`terraform_data` holding the same values), "+
		"paired in each repetition, the order reversed every other one. Medians; CPU = CLI + plugin.\n\n",
		res.Rows[len(res.Rows)-1].Summary, res.CLIVersion, steadyNodes)
	t := NewTable(out, "clusters", "reps", "ours s", "minimal s", "CLI floor s", "ours cpu s", "minimal cpu s", "floor cpu s",
		"ours vs 1st", "minimal vs 1st", "floor vs 1st")
	first := res.Rows[0]
	x := func(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(max(1, b))) }
	for _, r := range res.Rows {
		t.Row(fmt.Sprint(r.Clusters), fmt.Sprint(r.Reps), Sec(r.Ours.Wall), Sec(r.Minimal.Wall), Sec(r.Floor.Wall),
			Sec(r.Ours.CPU), Sec(r.Minimal.CPU), Sec(r.Floor.CPU),
			x(r.Ours.Wall, first.Ours.Wall), x(r.Minimal.Wall, first.Minimal.Wall), x(r.Floor.Wall, first.Floor.Wall))
	}
	t.Flush()
	fmt.Fprintln(out)
	printPerInstance(out, first, res.Rows[len(res.Rows)-1])
}

// printPerInstance prints what each instance past the first costs each
// contender, and the two target lines, from the first and last rows.
func printPerInstance(out io.Writer, one, many Plan50Row) {
	n := many.Clusters
	if one.Clusters != 1 || n <= 1 {
		return
	}
	per := func(f func(Plan50Row) time.Duration) time.Duration { return PerInstance(f(one), f(many), n) }
	ow, oc := per(func(r Plan50Row) time.Duration { return r.Ours.Wall }), per(func(r Plan50Row) time.Duration { return r.Ours.CPU })
	mw, mc := per(func(r Plan50Row) time.Duration { return r.Minimal.Wall }), per(func(r Plan50Row) time.Duration { return r.Minimal.CPU })
	fw, fc := per(func(r Plan50Row) time.Duration { return r.Floor.Wall }), per(func(r Plan50Row) time.Duration { return r.Floor.CPU })
	t := NewTable(out, "per instance (plan of "+fmt.Sprint(n)+" - plan of 1) / "+fmt.Sprint(n-1), "ours ms", "minimal ms", "CLI floor ms",
		"ours / minimal")
	t.Row("wall", Ms(ow), Ms(mw), Ms(fw), fmt.Sprintf("%.2fx", float64(ow)/float64(max(1, mw))))
	t.Row("CPU", Ms(oc), Ms(mc), Ms(fc), fmt.Sprintf("%.2fx", float64(oc)/float64(max(1, mc))))
	t.Flush()
	fmt.Fprintln(out)
	ratio := float64(ow) / float64(max(1, mw))
	fmt.Fprintf(out, "**per instance, ours vs minimal**: %s ms vs %s ms wall = %.2fx (CPU %s vs %s ms) (target <= %.1fx): **%s**\n\n",
		Ms(ow), Ms(mw), ratio, Ms(oc), Ms(mc), PerInstanceTarget, Verdict(ratio <= PerInstanceTarget))
	PrintPlanScaleTarget(out, "steady state, \"No changes\"", map[int]time.Duration{1: one.Ours.Wall, n: many.Ours.Wall},
		map[int]time.Duration{1: one.Ours.CPU, n: many.Ours.CPU})
	minRatio := float64(many.Minimal.Wall) / float64(max(1, one.Minimal.Wall))
	fmt.Fprintf(out, "**the minimal provider's own plan of %d vs 1** (the floor of any framework provider with this schema): %.2fx wall "+
		"(%ss vs %ss)\n\n", n, minRatio, Sec(many.Minimal.Wall), Sec(one.Minimal.Wall))
}

// PrintProfiles prints `go tool pprof -top -cum` of each plugin's profiles
// (the nodes heaviest functions, by cumulative time).
func PrintProfiles(ctx context.Context, out io.Writer, res *Plan50Result, nodes int) {
	if res == nil {
		return
	}
	for _, name := range []string{"ours", "minimal"} {
		p, ok := res.Profiles[name]
		if !ok {
			continue
		}
		args := append([]string{"tool", "pprof", "-top", "-cum", fmt.Sprintf("-nodecount=%d", nodes), p.Binary}, p.Files...)
		cmd := exec.CommandContext(ctx, "go", args...)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		fmt.Fprintf(out, "CPU profile of the %s plugin during %d more plans of the last count, merged (`go %s`):\n\n```\n%s```\n\n",
			name, len(p.Files), strings.Join(args, " "), strings.TrimLeft(buf.String(), "\n"))
		if err != nil {
			fmt.Fprintf(out, "(pprof: %v)\n\n", err)
		}
	}
}
