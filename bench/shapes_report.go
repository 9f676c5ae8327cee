package bench

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// shapeWalls are one column of a row's samples: the shape's and the single
// cluster's values, pair by pair.
func (r *ShapeRow) shapeWalls(get func(ShapeRun) time.Duration) (shape, single []time.Duration) {
	for _, s := range r.Samples {
		shape, single = append(shape, get(s.Shape)), append(single, get(s.Single))
	}
	return shape, single
}

// applyWall, destroyWall, planWall and planCPU are the columns shapeWalls
// reads.
func applyWall(r ShapeRun) time.Duration   { return r.Apply.Wall }
func destroyWall(r ShapeRun) time.Duration { return r.Destroy.Wall }
func planWall(r ShapeRun) time.Duration    { return r.Plan.Wall }
func planCPU(r ShapeRun) time.Duration     { return r.Plan.CPU }

// worstLeft is the most Ray held after any repetition, count by count, and
// the first count that could not be read.
func worstLeft(samples []ShapeSample) RaceLeft {
	var w RaceLeft
	for _, s := range samples {
		l := s.Left
		w.Groups, w.Records, w.Claims = max(w.Groups, l.Groups), max(w.Records, l.Records), max(w.Claims, l.Claims)
		w.ActiveJobs, w.JobRecords = max(w.ActiveJobs, l.ActiveJobs), max(w.JobRecords, l.JobRecords)
		if w.Err == nil {
			w.Err = l.Err
		}
	}
	return w
}

// namedRatio is one command's median paired ratio and its target.
type namedRatio struct {
	name          string
	ratio, target float64
}

// shapesMet says whether every ratio meets its target, else which do not.
func shapesMet(ratios ...namedRatio) string {
	var over []string
	for _, r := range ratios {
		if r.ratio > r.target {
			over = append(over, r.name)
		}
	}
	if len(over) == 0 {
		return "met"
	}
	return "not met (" + strings.Join(over, ", ") + ")"
}

// PrintShapes prints the apply and destroy of each shape against its single
// cluster with what Ray held afterwards, the steady plans, and the phase
// split of every command.
func PrintShapes(out io.Writer, all []*ShapeRow, cli string) {
	var rows []*ShapeRow
	for _, r := range all {
		if len(r.Samples) > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	printShapesApply(out, rows, cli)
	printShapesPlan(out, rows)
	printShapesPhases(out, rows)
}

// printShapesApply prints apply and destroy against the single cluster.
func printShapesApply(out io.Writer, rows []*ShapeRow, cli string) {
	fmt.Fprintf(out, "`%s apply` and `destroy` of each shape with the locally built provider through the recording proxy, against its "+
		"single cluster (`count = 1`, or the set's first cluster) in the same repetition, paired and alternating in order; seconds, "+
		"min / median / max; ratio = median of the per-pair ratios (min-max), target apply <= %.1fx, destroy <= %.1fx where every "+
		"cluster runs at once (-parallelism at least the shape's clusters); rows at Terraform's default -parallelism are reported. Nodes = the nodes holding the "+
		"applied clusters' bundles; jobs = the shape's Ray jobs per command (medians). Left = the most Ray held after any pair was destroyed: live groups, cluster records, reservations, "+
		"driver jobs still running.\n\n", cli, ShapesApplyTarget, ShapesDestroyTarget)
	t := NewTable(out, "shape", "clusters", "bundles", "single cluster", "reps", "apply", "single apply", "apply ratio",
		"destroy", "single destroy", "destroy ratio", "target", "met", "nodes (shape, single)", "jobs (apply, destroy)",
		"left: groups, records, reservations, jobs", "job records left")
	for _, r := range rows {
		ap, ap1 := r.shapeWalls(applyWall)
		de, de1 := r.shapeWalls(destroyWall)
		var nodes, nodes1, aj, dj []int
		for _, s := range r.Samples {
			nodes, nodes1 = append(nodes, s.Shape.Nodes), append(nodes1, s.Single.Nodes)
			aj, dj = append(aj, s.Shape.Apply.Jobs), append(dj, s.Shape.Destroy.Jobs)
		}
		left := worstLeft(r.Samples)
		target, met := "-", "reported"
		if r.Judged() {
			target = fmt.Sprintf("<= %.1fx, %.1fx", ShapesApplyTarget, ShapesDestroyTarget)
			met = shapesMet(namedRatio{"apply", medianRatio(ap, ap1), ShapesApplyTarget},
				namedRatio{"destroy", medianRatio(de, de1), ShapesDestroyTarget})
		}
		t.Row(r.Name(), fmt.Sprint(r.Shape.Clusters()), fmt.Sprint(r.Shape.Bundles()), r.Shape.Single().Blocks[0].describe(),
			fmt.Sprint(len(r.Samples)), MinMedianMax(ap), MinMedianMax(ap1), RatioStats(ap, ap1),
			MinMedianMax(de), MinMedianMax(de1), RatioStats(de, de1), target, met,
			fmt.Sprintf("%d, %d", medianInt(nodes), medianInt(nodes1)), fmt.Sprintf("%d, %d", medianInt(aj), medianInt(dj)),
			left.cell(), fmt.Sprint(left.JobRecords))
	}
	t.Flush()
	fmt.Fprintln(out)
}

// printShapesPlan prints the steady plans against the single cluster's.
func printShapesPlan(out io.Writer, rows []*ShapeRow) {
	fmt.Fprintf(out, "Steady `plan` (\"No changes\", `-detailed-exitcode` 0) of each applied shape and of its single cluster, in the "+
		"same repetitions; seconds, min / median / max; ratio = median of the per-pair ratios (min-max), reported (the plan's "+
		"target is per cluster, part 2b). CPU = CLI + plugin (medians); HTTP = the plan's requests to Ray (medians).\n\n")
	t := NewTable(out, "shape", "plan", "single plan", "plan ratio", "CPU (shape, single)", "HTTP (shape, single)")
	for _, r := range rows {
		pl, pl1 := r.shapeWalls(planWall)
		cpu, cpu1 := r.shapeWalls(planCPU)
		var calls, calls1 []int
		for _, s := range r.Samples {
			calls, calls1 = append(calls, s.Shape.PlanCalls), append(calls1, s.Single.PlanCalls)
		}
		t.Row(r.Name(), MinMedianMax(pl), MinMedianMax(pl1), RatioStats(pl, pl1), Sec(Median(cpu))+", "+Sec(Median(cpu1)),
			fmt.Sprintf("%d, %d", medianInt(calls), medianInt(calls1)))
	}
	t.Flush()
	fmt.Fprintln(out)
}

// shapePhases are the phase groups of the split, from part 1c's
// trace: they add up to the command's wall time.
var shapePhases = []struct {
	name string
	get  func(c CLIPhases) time.Duration
}{
	{"CLI and plugin", func(c CLIPhases) time.Duration { return c.CLIStart + c.ProviderPre + c.CLIEnd }},
	{"job start", func(c CLIPhases) time.Duration {
		return c.Job.Submit + c.Job.JobStart + c.Job.Interpreter + c.Job.RayInit
	}},
	{"placement", func(c CLIPhases) time.Duration { return c.Job.CreateCalls + c.Job.PlacementWait + c.Job.Remove }},
	{"probes", func(c CLIPhases) time.Duration { return c.Job.Probe }},
	{"result", func(c CLIPhases) time.Duration {
		return c.Job.DriverExit + c.Job.PollLag + c.Job.ResultFetch + c.Job.ResultParse
	}},
	{"other", func(c CLIPhases) time.Duration { return c.Job.Other + c.Job.DeleteRecord }},
	{"total (wall)", func(c CLIPhases) time.Duration { return c.Wall }},
}

// splitWhole reports whether c's phase split covers the whole command: one
// Ray job, traced to its result.
func splitWhole(c CLIPhases) bool { return c.Jobs == 1 && c.Job.Total > 0 }

// printShapesPhases prints each command of each shape and of its single
// cluster phase group by phase group, and what the shape adds to each.
func printShapesPhases(out io.Writer, rows []*ShapeRow) {
	fmt.Fprintln(out, "Phase split (medians of the repetitions whose command was one Ray job, traced to its result; seconds). "+
		"CLI and plugin = exec until the provider's first request, the provider until the job submission, and the CLI after the "+
		"result; job start = submission until the driver connected to Ray; placement = group creation and ready wait (destroy: "+
		"removal); probes = GPU ids and ports; result = the driver's exit until the provider read its result; other = provider "+
		"gaps. In a batch the driver runs the clusters side by side, so each phase ends at the last cluster's progress line. "+
		"Added = the shape's median minus the single cluster's.")
	fmt.Fprintln(out)
	header := []string{"shape", "command", "run", "split reps"}
	for _, p := range shapePhases {
		header = append(header, p.name)
	}
	t := NewTable(out, header...)
	for _, r := range rows {
		for _, cmd := range shapeCommands {
			shape, single := phaseMedians(r.Samples, func(s ShapeSample) CLIPhases { return cmd.get(s.Shape) }),
				phaseMedians(r.Samples, func(s ShapeSample) CLIPhases { return cmd.get(s.Single) })
			t.Row(append([]string{r.Name(), cmd.name, fmt.Sprintf("%d clusters", r.Shape.Clusters())}, shape.cells()...)...)
			t.Row(append([]string{r.Name(), cmd.name, "single"}, single.cells()...)...)
			t.Row(append([]string{r.Name(), cmd.name, "added"}, shape.minus(single).cells()...)...)
		}
	}
	t.Flush()
	fmt.Fprintln(out)
}

// shapeCommands are the traced commands of a ShapeRun.
var shapeCommands = []struct {
	name string
	get  func(ShapeRun) CLIPhases
}{
	{"apply", func(r ShapeRun) CLIPhases { return r.Apply }},
	{"destroy", func(r ShapeRun) CLIPhases { return r.Destroy }},
}

// phaseRow is one row of the phase split: how many repetitions were split,
// and each phase group's median over them.
type phaseRow struct {
	split   int
	medians []time.Duration
}

// phaseMedians is the phase row of the commands get picks from samples.
func phaseMedians(samples []ShapeSample, get func(ShapeSample) CLIPhases) phaseRow {
	cols := make([][]time.Duration, len(shapePhases))
	r := phaseRow{}
	for _, s := range samples {
		c := get(s)
		if !splitWhole(c) {
			continue
		}
		r.split++
		for i, p := range shapePhases {
			cols[i] = append(cols[i], p.get(c))
		}
	}
	for _, col := range cols {
		r.medians = append(r.medians, Median(col))
	}
	return r
}

// minus is r's medians less o's; unsplit (all "-") when either is.
func (r phaseRow) minus(o phaseRow) phaseRow {
	d := phaseRow{split: min(r.split, o.split)}
	for i := range r.medians {
		d.medians = append(d.medians, r.medians[i]-o.medians[i])
	}
	return d
}

// cells are the row's split count and medians, "-" where none was split.
func (r phaseRow) cells() []string {
	out := []string{fmt.Sprint(r.split)}
	for _, m := range r.medians {
		if r.split == 0 {
			out = append(out, "-")
		} else {
			out = append(out, Sec(m))
		}
	}
	return out
}
