// Package topologyref runs the topology maths of internal/topology and a
// plain-Python version of the reference's (topology_ref.py) on the same
// synthetic clusters and compares their outputs: the parity test beside
// internal/topology uses it, and bench/ times both sides with it.
package topologyref

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

//go:embed topology_ref.py
var script []byte

// Synthetic topology inputs: NVL72-sized domains, 8 GPUs per node, segments
// of 4 nodes, half the cluster selected.
const (
	DomainNodes = 72
	GPUsPerNode = 8
	Segment     = 4
)

// Functions names the compared functions, in Match's order.
var Functions = []string{"select_segment_nodes", "prepare_segment_topology (selection)", "_sort_bundle_indices_by_topology", "feasibility"}

// Inputs is one synthetic cluster: the JSON topology_ref.py reads, and the
// same data as the Go functions take it.
type Inputs struct {
	Topology []Node   `json:"topology"`
	Bundles  []Bundle `json:"bundles"`
	Groups   []Group  `json:"groups"`
	Nodes    []Cap    `json:"nodes"`
	Segment  int      `json:"segment_size"`
	NumNodes int      `json:"num_nodes"`
	GPUs     int      `json:"gpus_per_node"`

	GoTopology []topology.Node         `json:"-"`
	GoBundles  []topology.Bundle       `json:"-"`
	GoRequests []topology.GroupRequest `json:"-"`
	GoCapacity []topology.NodeCapacity `json:"-"`
}

// Node is one topology entry.
type Node struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	Rank   int    `json:"rank"`
}

// Bundle is one probed bundle (gpu_id, nvlink_domain, topo_rank, node_id).
type Bundle struct {
	GPU    int    `json:"gpu"`
	Domain string `json:"domain"`
	Rank   int    `json:"rank"`
	Node   string `json:"node"`
}

// Group is one placement-group request.
type Group struct {
	Name     string               `json:"name"`
	Strategy string               `json:"strategy"`
	Bundles  []topology.Resources `json:"bundles"`
}

// Cap is one node's free resources.
type Cap struct {
	ID        string             `json:"id"`
	Available topology.Resources `json:"available"`
}

// NewInputs builds the cluster of n nodes: nodes listed in shuffled order,
// topo_rank = position in the racks; 8 probed bundles per node with GPU ids
// in reverse; and the provider's own plan-time request for a per-node
// cluster on the selected half, pinned to its domains.
func NewInputs(n int) (*Inputs, error) {
	in := &Inputs{Segment: Segment, NumNodes: n / 2 / Segment * Segment, GPUs: GPUsPerNode}
	r := rand.New(rand.NewSource(int64(n)))
	for _, i := range r.Perm(n) {
		domain := fmt.Sprintf("%srack%04d", topology.NVLinkDomainPrefix, i/DomainNodes)
		id := fmt.Sprintf("%056x", i*7919+1)
		in.GoTopology = append(in.GoTopology, topology.Node{ID: id, Domain: domain, TopoRank: i + 1})
		in.Topology = append(in.Topology, Node{ID: id, Domain: domain, Rank: i + 1})
		in.GoCapacity = append(in.GoCapacity, topology.NodeCapacity{ID: id, Total: topology.Resources{
			"CPU": 64, "GPU": GPUsPerNode, "memory": 1 << 40, domain: 1, topology.TopoRankKey: float64(i + 1),
			fmt.Sprintf("node:10.%d.%d.%d", i>>16&255, i>>8&255, i&255): 1,
		}})
		for g := GPUsPerNode - 1; g >= 0; g-- {
			in.GoBundles = append(in.GoBundles, topology.Bundle{GPUID: g, Domain: domain, TopoRank: i + 1, NodeID: id})
			in.Bundles = append(in.Bundles, Bundle{GPU: g, Domain: domain, Rank: i + 1, Node: id})
		}
	}
	seg := Segment
	plan, err := topology.PrepareSegmentTopology(&seg, in.NumNodes, in.GoTopology, "")
	if err != nil {
		return nil, err
	}
	in.GoRequests = Requests(plan.Constraints[:in.NumNodes])
	for _, g := range in.GoRequests {
		in.Groups = append(in.Groups, Group{Name: g.Name, Strategy: g.Strategy, Bundles: g.Bundles})
	}
	for _, c := range in.GoCapacity {
		in.Nodes = append(in.Nodes, Cap{ID: c.ID, Available: c.Total})
	}
	return in, nil
}

// Requests is the provider's plan-time request for a per-node GPU cluster
// named "ref" of GPUsPerNode bundles per node (one CPU, one GPU), node i
// pinned by constraints[i]: one PACK group "ref-node<i>" per node. It is
// spelled out here so that this package imports only internal/topology;
// clusterspec's TestTopologyRefRequestsAreTheProvidersOwn checks it against
// clusterspec.Spec.Groups.
func Requests(constraints []map[string]float64) []topology.GroupRequest {
	out := make([]topology.GroupRequest, 0, len(constraints))
	for i, c := range constraints {
		g := topology.GroupRequest{Name: fmt.Sprintf("ref-node%d", i), Strategy: topology.StrategyPack, NodeIndex: i}
		for j := 0; j < GPUsPerNode; j++ {
			b := topology.Resources{"CPU": 1, "GPU": 1}
			for k, v := range c {
				b[k] = v
			}
			for k, v := range b {
				if v == 0 {
					delete(b, k)
				}
			}
			g.Bundles = append(g.Bundles, b)
		}
		out = append(out, g)
	}
	return out
}

// Outputs are the Go functions' results on one Inputs.
type Outputs struct {
	Selected, Remaining []string
	Plan                topology.SegmentPlan
	Order               []int
	Feasible            topology.Feasibility
}

// SelectSegmentNodes, PrepareSegmentTopology, SortBundles and CheckPlacement
// run one Go function on in into out (bench times each call).
func (in *Inputs) SelectSegmentNodes(out *Outputs) (err error) {
	out.Selected, out.Remaining, err = topology.SelectSegmentNodes(in.GoTopology, in.Segment, in.NumNodes)
	return err
}

func (in *Inputs) PrepareSegmentTopology(out *Outputs) (err error) {
	seg := in.Segment
	out.Plan, err = topology.PrepareSegmentTopology(&seg, in.NumNodes, in.GoTopology, "")
	return err
}

func (in *Inputs) SortBundles(out *Outputs) (err error) {
	seg, gpus := in.Segment, in.GPUs
	out.Order, _, err = topology.SortBundleIndicesByTopology(in.GoBundles, &seg, &gpus)
	return err
}

func (in *Inputs) CheckPlacement(out *Outputs) error {
	out.Feasible = topology.CheckPlacement(in.GoRequests, in.GoCapacity)
	return nil
}

// Run runs every Go function once.
func (in *Inputs) Run() (Outputs, error) {
	var out Outputs
	for _, f := range []func(*Outputs) error{in.SelectSegmentNodes, in.PrepareSegmentTopology, in.SortBundles, in.CheckPlacement} {
		if err := f(&out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Timing is one Python function's median wall and CPU seconds per call.
type Timing struct {
	S     float64 `json:"s"`
	CPU   float64 `json:"cpu"`
	Calls int     `json:"calls"`
}

// PythonResult is what topology_ref.py prints: each function's output and
// its timing.
type PythonResult struct {
	Select struct {
		Timing
		Selected  []string `json:"selected"`
		Remaining []string `json:"remaining"`
	} `json:"select"`
	Prepare struct {
		Timing
		Constraints []map[string]float64 `json:"constraints"`
		Remaining   int                  `json:"remaining"`
		Message     string               `json:"message"`
	} `json:"prepare"`
	Sort struct {
		Timing
		Order []int `json:"order"`
	} `json:"sort"`
	Feasibility struct {
		Timing
		Errors []string `json:"errors"`
	} `json:"feasibility"`
}

// Timings are the Python timings in Functions' order.
func (p *PythonResult) Timings() []Timing {
	return []Timing{p.Select.Timing, p.Prepare.Timing, p.Sort.Timing, p.Feasibility.Timing}
}

// RunPython runs topology_ref.py on in (written under dir), each function
// repeated for at least minTime.
func RunPython(python, dir string, in *Inputs, minTime time.Duration) (*PythonResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "topology_ref.py")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	inputs := filepath.Join(dir, fmt.Sprintf("topology_ref_%d.json", len(in.Topology)))
	if err := os.WriteFile(inputs, raw, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, path, inputs, fmt.Sprint(minTime.Seconds()))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python topology reference at %d nodes: %w", len(in.Topology), err)
	}
	var py PythonResult
	if err := json.Unmarshal(out, &py); err != nil {
		return nil, fmt.Errorf("python topology reference: %w", err)
	}
	return &py, nil
}

// Match says, in Functions' order, whether Go and Python produced the same
// output: same selection and remainder, same constraints and message, same
// order, same verdict.
func Match(g Outputs, py *PythonResult) []bool {
	return []bool{
		slices.Equal(g.Selected, py.Select.Selected) && slices.Equal(g.Remaining, py.Select.Remaining),
		slices.EqualFunc(g.Plan.Constraints, py.Prepare.Constraints, maps.Equal) &&
			len(g.Plan.Remaining) == py.Prepare.Remaining && g.Plan.Message == py.Prepare.Message,
		slices.Equal(g.Order, py.Sort.Order),
		(len(g.Feasible.Errors) == 0) == (len(py.Feasibility.Errors) == 0),
	}
}
