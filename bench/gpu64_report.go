package bench

import (
	"fmt"
	"io"
	"time"
)

// PrintGPU64 prints the 64-bundle rows against NeMo-RL's cold path with
// their target, their phase trace, and the apply of FloorBundles against its
// floor, phase group by phase group.
func PrintGPU64(out io.Writer, res *GPU64Result, cli, nemoSkipped string) {
	if res == nil {
		return
	}
	if nemoSkipped != "" {
		fmt.Fprintf(out, "NeMo-RL's own code: not measured (%s).\n\n", nemoSkipped)
	}
	if len(res.Rows) > 0 {
		printGPU64Summary(out, res.Rows, cli)
	}
	var traced []TraceResult
	for _, r := range res.Rows {
		t := TraceResult{Bundles: r.Bundles, Nodes: r.Nodes, Label: fmt.Sprintf("%d %s", r.Bundles, r.Layout)}
		for _, s := range r.Samples {
			t.Samples = append(t.Samples, TraceSample{Apply: s.Apply, Destroy: s.Destroy})
		}
		if len(t.Samples) > 0 {
			traced = append(traced, t)
		}
	}
	if len(traced) > 0 {
		fmt.Fprintln(out, "Phase trace of the 64-bundle applies and destroys (medians, seconds; the phases of part 1c's trace).")
		fmt.Fprintln(out)
		tracePhaseTable(out, traced)
	}
	printApplyFloor(out, res.Floor)
}

// printGPU64Summary prints apply+destroy against NeMo-RL's cold path per
// layout, and where NeMo-RL's time goes.
func printGPU64Summary(out io.Writer, rows []GPU64Row, cli string) {
	fmt.Fprintf(out, "`%s apply` + `destroy` of one cluster of logical nodes of %d GPU bundles, `segment_size = %d`, "+
		"`select_nodes = true`, `pinning = \"domain\"` (unified: one PACK group; per-node: one PACK group per logical node) "+
		"with the locally built provider through the recording proxy, against NeMo-RL's own cold path on the same shape "+
		"(bench/nemo_baseline.py: prepare_segment_topology(%d, nodes), RayVirtualCluster(segment_size=%d, "+
		"node_resource_constraints=...), _init_placement_groups, master address, address/port batch, shutdown, exit), "+
		"paired and alternating in order. Medians; ratio = median of the per-repetition ratios (min-max).\n\n",
		cli, WideGPUsPerNode, WideSegmentSize, WideSegmentSize, WideSegmentSize)
	t := NewTable(out, "layout", "bundles", "logical nodes", "reps", "apply", "destroy", "apply+destroy", "NeMo-RL cold", "ratio",
		"target", "", "NeMo: _init_placement_groups", "of which segment topology", "NeMo: master", "NeMo: port batch",
		"NeMo: shutdown+exit")
	for _, r := range rows {
		var ap, de, tot, nc, ig, st, ms, pb, td []time.Duration
		for _, s := range r.Samples {
			ap, de, tot = append(ap, s.Apply.Wall), append(de, s.Destroy.Wall), append(tot, s.Apply.Wall+s.Destroy.Wall)
			if n := s.NeMo; n.OK {
				nc, ig, st = append(nc, n.Wall), append(ig, secs(n.InitGroups)), append(st, secs(n.SegmentTopology))
				ms, pb, td = append(ms, secs(n.Master)), append(pb, secs(n.PortBatch)), append(td, n.Teardown)
			}
		}
		ratio, met := "-", "not measured (no NeMo-RL baseline)"
		if len(nc) == len(tot) && len(nc) > 0 {
			ratio = RatioStats(tot, nc)
			met = metText(medianRatio(tot, nc) <= GPU64Ratio)
		}
		t.Row(string(r.Layout), fmt.Sprint(r.Bundles), fmt.Sprint(r.Nodes), fmt.Sprint(len(r.Samples)), medianOr(ap), medianOr(de),
			medianOr(tot), medianOr(nc), ratio, fmt.Sprintf("<= %.2fx NeMo-RL", GPU64Ratio), met,
			medianOr(ig), medianOr(st), medianOr(ms), medianOr(pb), medianOr(td))
	}
	t.Flush()
	fmt.Fprintln(out)
}

// medianRatio is the median of the per-pair ratios a/b.
func medianRatio(a, b []time.Duration) float64 {
	var rs []time.Duration
	for i := range a {
		if i < len(b) && b[i] > 0 {
			rs = append(rs, time.Duration(float64(a[i])/float64(b[i])*1e6))
		}
	}
	if len(rs) == 0 {
		return 0
	}
	return float64(Median(rs)) / 1e6
}

// medianOr is the median in seconds, "-" for none.
func medianOr(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return Sec(Median(ds))
}

// printApplyFloor prints the apply of FloorBundles against its floor (the
// empty job plus one cold python process placing the same groups), and
// each phase group of the apply against the part of the floor it matches.
func printApplyFloor(out io.Writer, fs []FloorSample) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(out, "Apply of one unified PACK cluster of %d bundles (%d logical nodes x %d) with the CLI, against its floor measured "+
		"in the same repetitions: an empty Ray job (`true`, submit until SUCCEEDED, 50 ms polls) plus one fresh python process that "+
		"places the same groups with plain ray.util.placement_group (exec, import ray, ray.init, create + ready; baseline.py "+
		"cold-create). Paired and alternating in order; ratio = median of the per-repetition ratios (min-max). "+
		"Floor + probe adds the same process's plain probe after ready (each bundle's GPU id and a free port, one task per "+
		"bundle, one worker start per node, the nodes in parallel): job + placement + probe, what any apply that reports GPU ids "+
		"and ports after placing pays, and the target's baseline since issue 53 (<= %.1fx it; the ratio to the floor alone is "+
		"reported).\n\n",
		FloorBundles, FloorBundles/WideGPUsPerNode, WideGPUsPerNode, FloorRatio)
	var ap, fl, fp []time.Duration
	for _, f := range fs {
		ap, fl, fp = append(ap, f.Apply.Wall), append(fl, f.Floor()), append(fp, f.FloorWithProbe())
	}
	t := NewTable(out, "bundles", "reps", "apply", "floor", "ratio to the floor", "floor + probe", "ratio to it", "target", "")
	t.Row(fmt.Sprint(FloorBundles), fmt.Sprint(len(fs)), Sec(Median(ap)), Sec(Median(fl)), RatioStats(ap, fl),
		Sec(Median(fp)), RatioStats(ap, fp), fmt.Sprintf("<= %.1fx floor + probe", FloorRatio), metText(medianRatio(ap, fp) <= FloorRatio))
	t.Flush()
	fmt.Fprintln(out)
	printFloorGroups(out, fs)
}

// printFloorGroups prints the apply's phase groups beside the floor's part
// each matches, and what each adds over it (medians, seconds).
func printFloorGroups(out io.Writer, fs []FloorSample) {
	type group struct {
		name, floorIs string
		apply         func(c CLIPhases) time.Duration
		floor         func(f FloorSample) time.Duration
		probed        bool // the plain probe belongs to this row's floor + probe
	}
	zero := func(FloorSample) time.Duration { return 0 }
	groups := []group{
		{"CLI + provider around the job", "nothing (no CLI)", func(c CLIPhases) time.Duration { return c.CLIStart + c.ProviderPre + c.CLIEnd }, zero, false},
		{"submit .. driver process start", "empty job", func(c CLIPhases) time.Duration { return c.Job.Submit + c.Job.JobStart },
			func(f FloorSample) time.Duration { return f.EmptyJob }, false},
		{"driver python, import, connect", "cold process: start-up, import ray, ray.init",
			func(c CLIPhases) time.Duration { return c.Job.Interpreter + c.Job.RayInit },
			func(f FloorSample) time.Duration { return f.Cold.Startup + secs(f.Cold.Import) + secs(f.Cold.Init) }, false},
		{"group creation + ready wait", "cold process: create + ready",
			func(c CLIPhases) time.Duration { return c.Job.CreateCalls + c.Job.PlacementWait },
			func(f FloorSample) time.Duration { return secs(f.Cold.Ready) }, false},
		{"probes", "nothing (the plain probe: last column)", func(c CLIPhases) time.Duration { return c.Job.Probe }, zero, true},
		{"record write, exit, polling, result", "nothing (in the empty job)", func(c CLIPhases) time.Duration {
			return c.Job.DriverExit + c.Job.PollLag + c.Job.ResultFetch
		}, zero, false},
		{"other (provider gaps)", "nothing", func(c CLIPhases) time.Duration { return c.Job.Other + c.Job.DeleteRecord }, zero, false},
		{"total", "the floor", func(c CLIPhases) time.Duration { return c.Wall }, FloorSample.Floor, true},
	}
	t := NewTable(out, "apply phase group", "floor part", "apply", "floor", "over the floor", "over floor + probe")
	for _, g := range groups {
		var a, f, p []time.Duration
		for _, s := range fs {
			withProbe := g.floor(s)
			if g.probed {
				withProbe += s.PlainProbe()
			}
			a, f, p = append(a, g.apply(s.Apply)), append(f, g.floor(s)), append(p, withProbe)
		}
		t.Row(g.name, g.floorIs, Sec(Median(a)), Sec(Median(f)), Sec(Median(a)-Median(f)), Sec(Median(a)-Median(p)))
	}
	t.Flush()
	fmt.Fprintln(out)
}
