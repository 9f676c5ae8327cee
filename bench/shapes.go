package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Part 7: many clusters in one configuration, by shape. Each
// shape is what a user would write for a dozen clusters, applied, planned
// and destroyed against its single cluster (count = 1) in the same run, on
// the node table of scripts/ray-cluster.sh it names: shapes (three nodes of
// ShapesNodeGPUs logical GPUs, each its own NVLink domain) or gpu2x7 (seven
// 2-GPU nodes, where Ray spreads twelve one-GPU clusters itself).

// The node tables the shapes run on; scripts/bench.sh starts one cluster
// per table, one after the other.
const (
	ShapesTable      = "shapes"
	ShapesSmallTable = "gpu2x7"
)

// ShapesDomains are the shapes node table's GPU nodes, one NVLink domain
// each: node_resource_constraints on a domain's resource pin a cluster to
// that node, as NeMo-RL pins its segments.
var ShapesDomains = []string{"rackA", "rackB", "rackC"}

// ShapesNodeGPUs is the GPUs (and CPUs) of each node of the shapes table.
const ShapesNodeGPUs = 12

// The shapes' port ranges: each cluster its own shapesPortSpan ports, the
// first from shapesPortLow, as a user gives each cluster its own range.
const (
	shapesPortLow  = 3000
	shapesPortSpan = 10
)

// terraformParallelism is Terraform's default -parallelism.
const terraformParallelism = 10

// ShapeBlock is one resource block of a shape: Count clusters alike
// (count = Count; 0: no count, one cluster) of Counts bundles per logical
// node, one unified PACK group when Unified, pinned to the NVLink domains
// Domains in turn by count.index (none: Ray places them).
type ShapeBlock struct {
	Role    string // resource label and cluster name suffix
	Count   int
	Counts  []int
	Unified bool
	Domains []string
}

// Shape is one configuration of many clusters.
type Shape struct {
	Key    string // names its clusters and directories
	Name   string // its row in the tables
	Table  string // the node table it runs on
	Blocks []ShapeBlock
}

// The shapes: 12 one-bundle clusters on distinct nodes (each
// pinned to another node than the clusters beside it: spread over all
// three, four a node) and on a shared node (all twelve on one), 4
// clusters of 4 bundles, a NeMo-RL-style set of roles, and (issue 53)
// twelve one-GPU clusters that Ray places over seven 2-GPU nodes, no pin
// and no select_nodes.
var Shapes = []Shape{
	{Key: "distinct", Name: "12 x 1, distinct nodes", Table: ShapesTable, Blocks: []ShapeBlock{
		{Role: "spread", Count: 12, Counts: []int{1}, Domains: ShapesDomains}}},
	{Key: "shared", Name: "12 x 1, shared node", Table: ShapesTable, Blocks: []ShapeBlock{
		{Role: "packed", Count: 12, Counts: []int{1}, Domains: ShapesDomains[:1]}}},
	{Key: "four", Name: "4 x 4 bundles", Table: ShapesTable, Blocks: []ShapeBlock{{Role: "four", Count: 4, Counts: []int{4}}}},
	{Key: "nemo", Name: "NeMo-RL set", Table: ShapesTable, Blocks: []ShapeBlock{
		{Role: "policy", Counts: []int{4, 4}, Unified: true},
		{Role: "inference", Counts: []int{2, 2}},
		{Role: "teacher", Counts: []int{4}},
		{Role: "reward", Counts: []int{1}}}},
	{Key: "placed", Name: "12 x 1, placed by Ray on 2-GPU nodes", Table: ShapesSmallTable, Blocks: []ShapeBlock{
		{Role: "placed", Count: 12, Counts: []int{1}}}},
}

// ShapesAll names every shape, the -shapes flag's default.
var ShapesAll = func() string {
	keys := make([]string, len(Shapes))
	for i, s := range Shapes {
		keys[i] = s.Key
	}
	return strings.Join(keys, ",")
}()

// clusters is how many clusters b declares.
func (b ShapeBlock) clusters() int { return max(b.Count, 1) }

// Clusters is how many clusters s declares.
func (s Shape) Clusters() int {
	n := 0
	for _, b := range s.Blocks {
		n += b.clusters()
	}
	return n
}

// Bundles is how many bundles (GPUs) s holds.
func (s Shape) Bundles() int {
	n := 0
	for _, b := range s.Blocks {
		for _, c := range b.Counts {
			n += b.clusters() * c
		}
	}
	return n
}

// Single is s's single cluster: its first block, count = 1 when counted.
func (s Shape) Single() Shape {
	b := s.Blocks[0]
	b.Count = min(b.Count, 1)
	return Shape{Key: s.Key + "1", Name: s.Name + ", single", Table: s.Table, Blocks: []ShapeBlock{b}}
}

// describe is b as the tables name it, e.g. "policy [4, 4] unified".
func (b ShapeBlock) describe() string {
	d := b.Role + " " + acctest.Ints(b.Counts)
	if b.Unified {
		d += " unified"
	}
	return d
}

// shapeHCL is s's configuration against the dashboard at address: one
// resource block per ShapeBlock, its clusters named name-<role>[-<index>]
// on port ranges of their own.
func shapeHCL(address, name string, s Shape) string {
	blocks := make([]fmt.Stringer, len(s.Blocks))
	port := shapesPortLow
	for i, b := range s.Blocks {
		blocks[i] = b.cluster(name+"-"+b.Role, port)
		port += b.clusters() * shapesPortSpan
	}
	return ProviderHCL(address) + "\n" + acctest.HCL(blocks...)
}

// cluster is b's resource block, its ports from port; with a count, each
// cluster's name, ports and node follow count.index.
func (b ShapeBlock) cluster(name string, port int) acctest.VirtualCluster {
	c := acctest.VirtualCluster{Label: b.Role, Name: name, Counts: b.Counts, Unified: b.Unified}
	if b.Unified {
		c.Strategy = topology.StrategyPack
	}
	if pin := b.pin(); pin != "" {
		c.Extra = append(c.Extra, acctest.Attr{Key: "node_resource_constraints", Expr: pin})
	}
	if b.Count == 0 {
		c.PortLow, c.PortHigh = port, port+shapesPortSpan
		return c
	}
	c.Name += "-${count.index}"
	perIndex := func(low int) string { return fmt.Sprintf("%d + count.index * %d", low, shapesPortSpan) }
	c.Extra = append(c.Extra, acctest.Attr{Key: "count", Expr: strconv.Itoa(b.Count)},
		acctest.Attr{Key: "port_range_low", Expr: perIndex(port)},
		acctest.Attr{Key: "port_range_high", Expr: perIndex(port + shapesPortSpan)})
	return c
}

// pin is b's node_resource_constraints: its one domain's resource, or the
// domain count.index picks in turn (element wraps around); "" for none.
func (b ShapeBlock) pin() string {
	switch len(b.Domains) {
	case 0:
		return ""
	case 1:
		return acctest.NumberMaps([]map[string]float64{{topology.NVLinkDomainPrefix + b.Domains[0]: topology.DomainConstraintAmount}})
	}
	// The key is a template; the list's quotes inside it are HCL's own.
	return fmt.Sprintf(`[{ "%s${element(%s, count.index)}" = %s }]`, topology.NVLinkDomainPrefix, acctest.Strings(b.Domains),
		strconv.FormatFloat(topology.DomainConstraintAmount, 'g', -1, 64))
}

// ShapesNamed returns the Shapes whose keys the comma-separated list names,
// in Shapes' order.
func ShapesNamed(list string) ([]Shape, error) {
	want := map[string]bool{}
	for _, k := range strings.Split(list, ",") {
		want[strings.TrimSpace(k)] = true
	}
	var out []Shape
	for _, s := range Shapes {
		if want[s.Key] {
			out = append(out, s)
			delete(want, s.Key)
		}
	}
	if len(want) > 0 || len(out) == 0 {
		return nil, fmt.Errorf("unknown shapes in %q (known: %s)", list, ShapesAll)
	}
	return out, nil
}

// ShapesTables are the node tables the shapes run on, each once, in
// Shapes' order.
func ShapesTables(shapes []Shape) []string {
	var out []string
	for _, s := range shapes {
		if !slices.Contains(out, s.Table) {
			out = append(out, s.Table)
		}
	}
	return out
}

// ShapesOn keeps the shapes that run on table ("": every shape).
func ShapesOn(shapes []Shape, table string) []Shape {
	if table == "" {
		return shapes
	}
	var out []Shape
	for _, s := range shapes {
		if s.Table == table {
			out = append(out, s)
		}
	}
	return out
}
