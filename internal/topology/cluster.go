package topology

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// Resources is a Ray resource map (name -> amount).
type Resources map[string]float64

// ClusterSpec is the static shape of a RayVirtualCluster.
type ClusterSpec struct {
	Name                     string
	BundleCtPerNode          []int
	UseGPUs                  bool
	NumGPUsPerNode           int
	MaxColocatedWorkerGroups int
	// Strategy applies to the unified group only; "" means DefaultStrategy.
	Strategy     string
	UseUnifiedPG bool
	SegmentSize  *int
	// NodeResourceConstraints is nil for none; an empty entry means no
	// constraint for that node.
	NodeResourceConstraints []Resources
	// Ports is the master port range; a zero Low or High means the
	// reference default for that bound (like passing None).
	Ports PortRange
}

// Issue is one validation finding tied to an attribute path.
type Issue struct {
	Path    string
	Summary string
	Detail  string
	Warning bool
}

var clusterNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// LinuxEphemeralPortLow is the stock Linux ephemeral range floor.
const LinuxEphemeralPortLow = 32768

// EffectivePorts resolves zero bounds to the default master range.
func (s ClusterSpec) EffectivePorts() PortRange {
	r := s.Ports
	if r.Low == 0 {
		r.Low = DefaultMasterPortRangeLow
	}
	if r.High == 0 {
		r.High = DefaultMasterPortRangeHigh
	}
	return r
}

// EffectiveStrategy resolves "" to DefaultStrategy.
func (s ClusterSpec) EffectiveStrategy() string {
	if s.Strategy == "" {
		return DefaultStrategy
	}
	return s.Strategy
}

// WorldSize is the total bundle count (sum of counts).
func (s ClusterSpec) WorldSize() int {
	n := 0
	for _, c := range s.BundleCtPerNode {
		n += c
	}
	return n
}

// NodeCount is the number of logical nodes with a positive count.
func (s ClusterSpec) NodeCount() int {
	n := 0
	for _, c := range s.BundleCtPerNode {
		if c > 0 {
			n++
		}
	}
	return n
}

// Validate returns every static problem; entries with Warning set do not
// prevent creation.
func (s ClusterSpec) Validate() []Issue {
	var out []Issue
	bad := func(path, summary, format string, args ...any) {
		out = append(out, Issue{Path: path, Summary: summary, Detail: fmt.Sprintf(format, args...)})
	}
	warn := func(path, summary, format string, args ...any) {
		out = append(out, Issue{Path: path, Summary: summary, Detail: fmt.Sprintf(format, args...), Warning: true})
	}

	if !clusterNameRE.MatchString(s.Name) {
		bad("name", "Invalid cluster name",
			"name %q must be 1-100 characters of letters, digits, '_', '.' or '-', starting with a letter or digit", s.Name)
	}

	counts := s.BundleCtPerNode
	const listPath = "bundle_ct_per_node_list"
	switch {
	case len(counts) == 0:
		bad(listPath, "Empty bundle_ct_per_node_list", "bundle_ct_per_node_list must contain at least one node")
	case len(counts) > MaxLogicalNodes:
		bad(listPath, "Too many logical nodes",
			"bundle_ct_per_node_list has %d entries; at most %d logical nodes are supported", len(counts), MaxLogicalNodes)
	}
	positive, world := 0, 0
	for i, c := range counts {
		p := fmt.Sprintf("%s[%d]", listPath, i)
		if c < 0 {
			bad(p, "Negative bundle count", "node %d asks for %d bundles; counts must be >= 0", i, c)
			continue
		}
		if c > 0 {
			positive++
		}
		world += min(c, MaxWorldSize+1)
		if s.UseGPUs && s.NumGPUsPerNode >= 1 && c > s.NumGPUsPerNode {
			bad(p, "Too many bundles for one node",
				"node %d asks for %d bundles but num_gpus_per_node is %d", i, c, s.NumGPUsPerNode)
		}
	}
	if len(counts) > 0 && positive == 0 {
		bad(listPath, "No bundles requested", "every node asks for 0 bundles; at least one count must be > 0")
	}
	if world > MaxWorldSize {
		bad(listPath, "World size too large",
			"the counts add up to more than %d bundles", MaxWorldSize)
	}

	if s.UseGPUs && s.NumGPUsPerNode < 1 {
		bad("num_gpus_per_node", "Invalid num_gpus_per_node",
			"num_gpus_per_node must be greater than 0 if using GPUs (got %d)", s.NumGPUsPerNode)
	} else if s.NumGPUsPerNode < 0 {
		bad("num_gpus_per_node", "Invalid num_gpus_per_node", "num_gpus_per_node (%d) must be >= 0", s.NumGPUsPerNode)
	}
	if s.MaxColocatedWorkerGroups < 1 {
		bad("max_colocated_worker_groups", "Invalid max_colocated_worker_groups",
			"max_colocated_worker_groups (%d) must be >= 1", s.MaxColocatedWorkerGroups)
	}
	if st := s.EffectiveStrategy(); !validStrategy(st) {
		bad("placement_group_strategy", "Invalid placement group strategy",
			"placement_group_strategy %q must be one of %s", st, strings.Join(Strategies, ", "))
	}

	if s.NodeResourceConstraints != nil && len(s.NodeResourceConstraints) != len(counts) {
		bad("node_resource_constraints", "Constraint count mismatch",
			"node_resource_constraints length (%d) must match bundle_ct_per_node_list length (%d)",
			len(s.NodeResourceConstraints), len(counts))
	}
	for i, c := range s.NodeResourceConstraints {
		p := fmt.Sprintf("node_resource_constraints[%d]", i)
		for _, k := range sortedKeys(c) {
			v := c[k]
			switch {
			case strings.TrimSpace(k) == "":
				bad(p, "Invalid constraint resource", "node %d has a constraint with an empty resource name", i)
			case k == "CPU" || k == "GPU":
				bad(p, "Invalid constraint resource",
					"node %d constrains %q; CPU and GPU are set by the cluster and cannot be overridden", i, k)
			case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
				bad(p, "Invalid constraint amount",
					"node %d constraint %q = %v must be a finite number > 0", i, k, v)
			}
		}
	}

	if s.SegmentSize != nil {
		seg := *s.SegmentSize
		if seg < 1 {
			bad("segment_size", "Invalid segment_size", "segment_size (%d) must be >= 1", seg)
		} else if len(counts)%seg != 0 {
			bad("segment_size", "segment_size does not divide the node count",
				"the number of logical nodes (%d, the length of bundle_ct_per_node_list) must be divisible by segment_size (%d)",
				len(counts), seg)
		}
		if !s.UseUnifiedPG || !s.UseGPUs {
			warn("segment_size", "segment_size has no effect",
				"segment_size only reorders and trims bundles of a unified GPU placement group (use_unified_pg and use_gpus both true); it is ignored here")
		}
	}

	ports := s.EffectivePorts()
	probs := ports.problems()
	for _, p := range probs {
		bad(p.field, "Invalid port range", "%s", p.msg)
	}
	if len(probs) == 0 {
		if ports.High > LinuxEphemeralPortLow {
			warn("port_range_high", "Port range reaches the ephemeral range",
				"master port range %s reaches the Linux ephemeral port range (from %d); kernel-assigned source ports may collide with it",
				ports, LinuxEphemeralPortLow)
		}
	}
	return out
}

// GroupRequest is one placement group to create.
type GroupRequest struct {
	Name     string
	Strategy string
	// NodeIndex is the logical node of a per-node group, -1 for unified.
	NodeIndex int
	Bundles   []Resources
}

// Groups mirrors _create_placement_groups_internal: one "<name>-unified"
// group (EffectiveStrategy) with every bundle in node order, or one PACK
// group "<name>-node<i>" per node with a positive count. Zero-valued
// resources are omitted.
func (s ClusterSpec) Groups() []GroupRequest {
	if s.UseUnifiedPG {
		g := GroupRequest{Name: s.Name + "-unified", Strategy: s.EffectiveStrategy(), NodeIndex: -1}
		for i, c := range s.BundleCtPerNode {
			for j := 0; j < c; j++ {
				g.Bundles = append(g.Bundles, s.bundle(i))
			}
		}
		return []GroupRequest{g}
	}
	var out []GroupRequest
	for i, c := range s.BundleCtPerNode {
		if c <= 0 {
			continue
		}
		g := GroupRequest{Name: fmt.Sprintf("%s-node%d", s.Name, i), Strategy: StrategyPack, NodeIndex: i}
		for j := 0; j < c; j++ {
			g.Bundles = append(g.Bundles, s.bundle(i))
		}
		out = append(out, g)
	}
	return out
}

func (s ClusterSpec) bundle(node int) Resources {
	b := Resources{"CPU": float64(s.MaxColocatedWorkerGroups)}
	if s.UseGPUs {
		b["GPU"] = 1
	}
	if node < len(s.NodeResourceConstraints) {
		for k, v := range s.NodeResourceConstraints[node] {
			b[k] = v
		}
	}
	for k, v := range b {
		if v == 0 {
			delete(b, k)
		}
	}
	return b
}

// CheckSegments reports whether the live topology can supply the spec's
// segments (SelectSegmentNodes over len(BundleCtPerNode) nodes). It returns
// nil when SegmentSize is nil or the topology has no NVLink info.
func CheckSegments(spec ClusterSpec, topo []Node) error {
	if spec.SegmentSize == nil || !HasTopology(topo) {
		return nil
	}
	_, _, err := SelectSegmentNodes(topo, *spec.SegmentSize, len(spec.BundleCtPerNode))
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
