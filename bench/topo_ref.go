package bench

import (
	"fmt"
	"io"
	"sort"
	"syscall"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology/topologyref"
)

// RefTiming is one function's time per call in Go and in Python.
type RefTiming struct {
	Function   string
	Nodes      int
	Go, Python time.Duration
	// GoCPU and PythonCPU are the process CPU time per call (Go's includes
	// its garbage collector's other threads): on a shared machine they move
	// less with the load than wall time does.
	GoCPU, PythonCPU time.Duration
	GoCalls          int
	PyCalls          int
	// Match says whether both sides produced the same output.
	Match bool
}

// processCPU is the CPU time used by this process so far (all threads).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeGo runs fn until minTime has passed (at least 3 times) and returns
// the median wall and CPU time per call. Nothing but fn runs in between.
func timeGo(minTime time.Duration, fn func()) (wall, cpu time.Duration, calls int) {
	var walls, cpus []time.Duration
	deadline := time.Now().Add(minTime)
	for len(walls) < 3 || (time.Now().Before(deadline) && len(walls) < 1000) {
		c, t := processCPU(), time.Now()
		fn()
		walls = append(walls, time.Since(t))
		cpus = append(cpus, processCPU()-c)
	}
	return Median(walls), Median(cpus), len(walls)
}

// RunTopologyRef times the Go topology functions and their Python
// reference versions (internal/topology/topologyref) on the same inputs for
// each size, and compares their outputs.
func RunTopologyRef(python, dir string, sizes []int, minTime time.Duration, log io.Writer) ([]RefTiming, error) {
	var out []RefTiming
	for _, n := range sizes {
		in, err := topologyref.NewInputs(n)
		if err != nil {
			return out, err
		}
		var got topologyref.Outputs
		type goTiming struct {
			wall, cpu time.Duration
			calls     int
		}
		var timings []goTiming
		for _, f := range []func(*topologyref.Outputs) error{in.SelectSegmentNodes, in.PrepareSegmentTopology, in.SortBundles, in.CheckPlacement} {
			wall, cpu, calls := timeGo(minTime, func() { err = f(&got) })
			if err != nil {
				return out, err
			}
			timings = append(timings, goTiming{wall, cpu, calls})
		}
		py, err := topologyref.RunPython(python, dir, in, minTime)
		if err != nil {
			return out, err
		}
		match, pyT := topologyref.Match(got, py), py.Timings()
		for i, function := range topologyref.Functions {
			r := RefTiming{Function: function, Nodes: n, Go: timings[i].wall, GoCPU: timings[i].cpu, GoCalls: timings[i].calls,
				Python: secs(pyT[i].S), PythonCPU: secs(pyT[i].CPU), PyCalls: pyT[i].Calls, Match: match[i]}
			out = append(out, r)
			if log != nil {
				fmt.Fprintf(log, "   %6d nodes %-38s go %s python %s (%s), cpu go %s python %s (%s)\n", n, r.Function,
					Ms(r.Go), Ms(r.Python), Ratio(r.Python, r.Go), Ms(r.GoCPU), Ms(r.PythonCPU), Ratio(r.PythonCPU, r.GoCPU))
			}
		}
	}
	return out, nil
}

// PrintTopologyRef prints Go next to Python per function and size.
func PrintTopologyRef(out io.Writer, rows []RefTiming) {
	fmt.Fprintf(out, "Synthetic clusters: NVLink domains of %d nodes listed in shuffled order, %d GPUs per node, segments of %d, half the nodes selected. "+
		"sort = %d probed bundles per node; feasibility = the provider's plan-time request for a per-node cluster on the selected half "+
		"(PACK groups of %d {CPU, GPU, domain} bundles) against every node's capacity. Median time per call, ms, wall and process CPU "+
		"(Go's CPU includes its garbage collector's threads); both sides read the same inputs, only the calls are timed, and their outputs "+
		"are compared (same selection and remainder, same constraints and message, same order, same verdict).\n\n",
		topologyref.DomainNodes, topologyref.GPUsPerNode, topologyref.Segment, topologyref.GPUsPerNode, topologyref.GPUsPerNode)
	t := NewTable(out, "function", "nodes", "Go ms", "Python ms", "Python/Go", "Go CPU ms", "Python CPU ms", "CPU Python/Go",
		"same output", "calls (Go/Py)")
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Function < rows[b].Function })
	for _, r := range rows {
		t.Row(r.Function, fmt.Sprint(r.Nodes), Ms(r.Go), Ms(r.Python), Ratio(r.Python, r.Go),
			Ms(r.GoCPU), Ms(r.PythonCPU), Ratio(r.PythonCPU, r.GoCPU), fmt.Sprint(r.Match),
			fmt.Sprintf("%d/%d", r.GoCalls, r.PyCalls))
	}
	t.Flush()
	fmt.Fprintln(out)
	fmt.Fprintln(out, "The Go feasibility check does more than the Python one: besides totals, per-bundle fit and a greedy first fit it proves "+
		"necessary conditions (STRICT_SPREAD matching, per-resource node subsets) and words errors with the closest node.")
	fmt.Fprintln(out)
}
