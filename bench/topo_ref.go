package bench

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

//go:embed topology_ref.py
var topologyRefSource []byte

// Synthetic topology inputs: NVL72-sized domains, 8 GPUs per node, segments
// of 4 nodes, half the cluster selected.
const (
	refDomainNodes = 72
	refGPUsPerNode = 8
	refSegment     = 4
)

// RefInputs is one synthetic cluster, in the JSON shape topology_ref.py reads.
type RefInputs struct {
	Topology []RefNode   `json:"topology"`
	Bundles  []RefBundle `json:"bundles"`
	Groups   []RefGroup  `json:"groups"`
	Nodes    []RefCap    `json:"nodes"`
	Segment  int         `json:"segment_size"`
	NumNodes int         `json:"num_nodes"`
	GPUs     int         `json:"gpus_per_node"`

	topo     []topology.Node
	bundles  []topology.Bundle
	requests []topology.GroupRequest
	capacity []topology.NodeCapacity
}

// RefNode is one topology entry.
type RefNode struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	Rank   int    `json:"rank"`
}

// RefBundle is one probed bundle (gpu_id, nvlink_domain, topo_rank, node_id).
type RefBundle struct {
	GPU    int    `json:"gpu"`
	Domain string `json:"domain"`
	Rank   int    `json:"rank"`
	Node   string `json:"node"`
}

// RefGroup is one placement-group request.
type RefGroup struct {
	Name     string               `json:"name"`
	Strategy string               `json:"strategy"`
	Bundles  []topology.Resources `json:"bundles"`
}

// RefCap is one node's free resources.
type RefCap struct {
	ID        string             `json:"id"`
	Available topology.Resources `json:"available"`
}

// NewRefInputs builds the cluster of n nodes: nodes listed in shuffled
// order, topo_rank = position in the racks; 8 probed bundles per node with
// GPU ids in reverse; and the provider's own plan-time request for a
// per-node cluster on the selected half, pinned to its domains.
func NewRefInputs(n int) (*RefInputs, error) {
	in := &RefInputs{Segment: refSegment, NumNodes: n / 2 / refSegment * refSegment, GPUs: refGPUsPerNode}
	r := rand.New(rand.NewSource(int64(n)))
	perm := r.Perm(n)
	for _, i := range perm {
		domain := fmt.Sprintf("%srack%04d", topology.NVLinkDomainPrefix, i/refDomainNodes)
		id := fmt.Sprintf("%056x", i*7919+1)
		in.topo = append(in.topo, topology.Node{ID: id, Domain: domain, TopoRank: i + 1})
		in.Topology = append(in.Topology, RefNode{ID: id, Domain: domain, Rank: i + 1})
		in.capacity = append(in.capacity, topology.NodeCapacity{ID: id, Total: topology.Resources{
			"CPU": 64, "GPU": refGPUsPerNode, "memory": 1 << 40, domain: 1, topology.TopoRankKey: float64(i + 1),
			fmt.Sprintf("node:10.%d.%d.%d", i>>16&255, i>>8&255, i&255): 1,
		}})
		for g := refGPUsPerNode - 1; g >= 0; g-- {
			b := topology.Bundle{GPUID: g, Domain: domain, TopoRank: i + 1, NodeID: id}
			in.bundles = append(in.bundles, b)
			in.Bundles = append(in.Bundles, RefBundle{GPU: g, Domain: domain, Rank: i + 1, Node: id})
		}
	}
	seg := refSegment
	plan, err := topology.PrepareSegmentTopology(&seg, in.NumNodes, in.topo, "")
	if err != nil {
		return nil, err
	}
	counts := make([]int, in.NumNodes)
	constraints := make([]topology.Resources, in.NumNodes)
	for i := range counts {
		counts[i] = refGPUsPerNode
		constraints[i] = plan.Constraints[i]
	}
	spec := vcluster.Spec{Name: "ref", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: refGPUsPerNode,
		MaxColocatedWorkerGroups: 1, Strategy: vcluster.DefaultStrategy, NodeResourceConstraints: constraints}
	in.requests = spec.Groups()
	for _, g := range in.requests {
		in.Groups = append(in.Groups, RefGroup{Name: g.Name, Strategy: g.Strategy, Bundles: g.Bundles})
	}
	for _, c := range in.capacity {
		in.Nodes = append(in.Nodes, RefCap{ID: c.ID, Available: c.Total})
	}
	return in, nil
}

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

// pyTiming is one function's median wall and CPU seconds per call.
type pyTiming struct {
	S     float64 `json:"s"`
	CPU   float64 `json:"cpu"`
	Calls int     `json:"calls"`
}

type pyRefResult struct {
	Select struct {
		pyTiming
		Selected  []string `json:"selected"`
		Remaining []string `json:"remaining"`
	} `json:"select"`
	Prepare struct {
		pyTiming
		Constraints []map[string]float64 `json:"constraints"`
		Remaining   int                  `json:"remaining"`
		Message     string               `json:"message"`
	} `json:"prepare"`
	Sort struct {
		pyTiming
		Order []int `json:"order"`
	} `json:"sort"`
	Feasibility struct {
		pyTiming
		Errors []string `json:"errors"`
	} `json:"feasibility"`
}

// RunTopologyRef times the Go topology functions and their Python
// reference versions on the same inputs for each size.
func RunTopologyRef(python, dir string, sizes []int, minTime time.Duration, log io.Writer) ([]RefTiming, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "topology_ref.py")
	if err := os.WriteFile(script, topologyRefSource, 0o644); err != nil {
		return nil, err
	}
	var out []RefTiming
	for _, n := range sizes {
		in, err := NewRefInputs(n)
		if err != nil {
			return out, err
		}
		seg, gpus := in.Segment, in.GPUs
		var selected, remaining []string
		var order []int
		var feasible topology.Feasibility
		goSel, goSelCPU, selCalls := timeGo(minTime, func() { selected, remaining, err = topology.SelectSegmentNodes(in.topo, seg, in.NumNodes) })
		if err != nil {
			return out, err
		}
		var plan topology.SegmentPlan
		goPrep, goPrepCPU, prepCalls := timeGo(minTime, func() { plan, err = topology.PrepareSegmentTopology(&seg, in.NumNodes, in.topo, "") })
		if err != nil {
			return out, err
		}
		goSort, goSortCPU, sortCalls := timeGo(minTime, func() { order, _, err = topology.SortBundleIndicesByTopology(in.bundles, &seg, &gpus) })
		if err != nil {
			return out, err
		}
		goFeas, goFeasCPU, feasCalls := timeGo(minTime, func() { feasible = topology.CheckPlacement(in.requests, in.capacity) })

		raw, err := json.Marshal(in)
		if err != nil {
			return out, err
		}
		inputs := filepath.Join(dir, fmt.Sprintf("topology_ref_%d.json", n))
		if err := os.WriteFile(inputs, raw, 0o644); err != nil {
			return out, err
		}
		cmd := exec.Command(python, script, inputs, fmt.Sprint(minTime.Seconds()))
		cmd.Stderr = os.Stderr
		pyOut, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("python topology reference at %d nodes: %w", n, err)
		}
		var py pyRefResult
		if err := json.Unmarshal(pyOut, &py); err != nil {
			return out, fmt.Errorf("python topology reference: %w", err)
		}
		row := func(function string, wall, cpu time.Duration, calls int, py pyTiming, match bool) RefTiming {
			return RefTiming{Function: function, Nodes: n, Go: wall, GoCPU: cpu, GoCalls: calls,
				Python: secs(py.S), PythonCPU: secs(py.CPU), PyCalls: py.Calls, Match: match}
		}
		rows := []RefTiming{
			row("select_segment_nodes", goSel, goSelCPU, selCalls, py.Select.pyTiming,
				slices.Equal(selected, py.Select.Selected) && slices.Equal(remaining, py.Select.Remaining)),
			row("prepare_segment_topology (selection)", goPrep, goPrepCPU, prepCalls, py.Prepare.pyTiming,
				slices.EqualFunc(plan.Constraints, py.Prepare.Constraints, maps.Equal) &&
					len(plan.Remaining) == py.Prepare.Remaining && plan.Message == py.Prepare.Message),
			row("_sort_bundle_indices_by_topology", goSort, goSortCPU, sortCalls, py.Sort.pyTiming, slices.Equal(order, py.Sort.Order)),
			row("feasibility", goFeas, goFeasCPU, feasCalls, py.Feasibility.pyTiming, feasible.OK() == (len(py.Feasibility.Errors) == 0)),
		}
		for _, r := range rows {
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
		refDomainNodes, refGPUsPerNode, refSegment, refGPUsPerNode, refGPUsPerNode)
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
