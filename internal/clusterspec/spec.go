package clusterspec

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Spec is the static shape of a virtual cluster (a RayVirtualCluster) and
// where it lives.
type Spec struct {
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
	NodeResourceConstraints []topology.Resources
	// Ports is the probed port range; a zero bound means DefaultPorts'.
	Ports topology.PortRange
	// Namespace is the Ray namespace; "" means DefaultNamespace.
	Namespace string
	// ReadyTimeout bounds the wait for placement; 0 means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// ReadyTimeoutText is ready_timeout as declared ("" when unset), kept
	// in the record so that import restores it verbatim.
	ReadyTimeoutText string
	// ExcludeNodeIDs are the nodes select_nodes may not choose (nil when
	// unset); only the choice at create reads them.
	ExcludeNodeIDs []string
	// SelectNodes makes the cluster choose its nodes (ChooseNodes) at
	// create; SelectedNodeIDs and SelectedNodeDomains then hold the choice,
	// one per logical node, and Pinning how bundles are held to it.
	SelectNodes bool
	Pinning     string
	// ExclusiveNodes makes the reservation of each selected node whole: no
	// other cluster shares the node, and it takes no node another holds.
	ExclusiveNodes      bool
	SelectedNodeIDs     []string
	SelectedNodeDomains []string
	// NodeLabelSelectors is nil for none, else one selector per logical
	// node (an empty map selects any node), merged into each of its bundles.
	NodeLabelSelectors []map[string]string
	// TopologyStrategy maps a node label key to the strategy Ray keeps the
	// unified group's bundles within one value of it; nil for none.
	TopologyStrategy map[string]string
	// Topology says where node domains and ranks come from (selection,
	// feasibility, domain pinning and the driver's probe).
	Topology TopologySource
	// CapacityCheck is one of CapacityChecks; "" means DefaultCapacityCheck.
	CapacityCheck string
}

// Issue is one validation finding tied to an attribute path.
type Issue struct {
	Path    string
	Summary string
	Detail  string
	Warning bool
}

// HasError reports whether any issue is an error.
func HasError(issues []Issue) bool {
	return slices.ContainsFunc(issues, func(is Issue) bool { return !is.Warning })
}

// Attribute names of the resource, used as issue paths.
const (
	AttrName                     = "name"
	AttrBundleCtPerNodeList      = "bundle_ct_per_node_list"
	AttrNumGPUsPerNode           = "num_gpus_per_node"
	AttrMaxColocatedWorkerGroups = "max_colocated_worker_groups"
	AttrPlacementGroupStrategy   = "placement_group_strategy"
	AttrSegmentSize              = "segment_size"
	AttrNodeResourceConstraints  = "node_resource_constraints"
	AttrPortRangeLow             = "port_range_low"
	AttrPortRangeHigh            = "port_range_high"
	AttrSelectNodes              = "select_nodes"
	AttrExclusiveNodes           = "exclusive_nodes"
	// SummaryExclusiveNodes is the error of exclusive_nodes without
	// select_nodes, or with domain pinning.
	SummaryExclusiveNodes  = "exclusive_nodes needs select_nodes with node pinning"
	AttrPinning            = "pinning"
	AttrSelectedNodeIDs    = "selected_node_ids"
	AttrNodeLabelSelectors = "node_label_selectors"
	AttrTopologyStrategy   = "topology_strategy"
	AttrExcludeNodeIDs     = "exclude_node_ids"
	AttrReadyTimeout       = "ready_timeout"
	AttrRecoveryTimeout    = "recovery_timeout"
)

// InvalidStrategySummary is the summary of a placement_group_strategy
// error, the same from the schema's validator and from Validate so that
// Terraform shows it once.
const InvalidStrategySummary = "Invalid placement group strategy"

// NamePattern is what a cluster name may look like.
var NamePattern = regexp.MustCompile(fmt.Sprintf(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,%d}$`, MaxNameLength-1))

// NamespacePattern is what a Ray namespace the provider works in may look
// like: the provider's `namespace` and every resource's that names one.
var NamespacePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// NamespaceRule says NamespacePattern in words, for messages.
const NamespaceRule = "must be 1 to 63 letters, digits, '.', '_' and '-', beginning with a letter or digit"

// Defaults is the Spec of a configuration that sets nothing: every default
// of the resource, in one place. The schema's Default values and the
// resource model start from it; WithDefaults fills zero fields from it.
func Defaults() Spec {
	return Spec{
		UseGPUs:                  DefaultUseGPUs,
		NumGPUsPerNode:           DefaultNumGPUsPerNode,
		MaxColocatedWorkerGroups: DefaultMaxColocatedWorkerGroups,
		Strategy:                 DefaultStrategy,
		UseUnifiedPG:             DefaultUseUnifiedPG,
		Ports:                    DefaultPorts,
		Namespace:                DefaultNamespace,
		ReadyTimeout:             DefaultReadyTimeout,
		Pinning:                  DefaultPinning,
	}
}

// WithDefaults fills every unset field whose zero value is not a valid
// setting (strategy, ports, namespace, ready timeout, pinning) from
// Defaults. Fields whose zero value is valid (use_gpus = false, 0 GPUs)
// cannot be told unset here: a Spec built from a configuration starts from
// Defaults instead.
func (s Spec) WithDefaults() Spec {
	d := Defaults()
	if s.Strategy == "" {
		s.Strategy = d.Strategy
	}
	if s.Ports.Low == 0 {
		s.Ports.Low = d.Ports.Low
	}
	if s.Ports.High == 0 {
		s.Ports.High = d.Ports.High
	}
	if s.Namespace == "" {
		s.Namespace = d.Namespace
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = d.ReadyTimeout
	}
	if s.Pinning == "" {
		s.Pinning = d.Pinning
	}
	return s
}

// WorldSize is the total bundle count (sum of counts).
func (s Spec) WorldSize() int {
	n := 0
	for _, c := range s.BundleCtPerNode {
		n += c
	}
	return n
}

// NodeCount is the number of logical nodes with a positive count.
func (s Spec) NodeCount() int {
	n := 0
	for _, c := range s.BundleCtPerNode {
		if c > 0 {
			n++
		}
	}
	return n
}

// Validate returns every static problem; entries with Warning set do not
// prevent creation. It is the one place the rules live: the schema's
// validators only read their bounds from this package.
func (s Spec) Validate() []Issue {
	s = s.WithDefaults()
	var out []Issue
	bad := func(path, summary, format string, args ...any) {
		out = append(out, Issue{Path: path, Summary: summary, Detail: fmt.Sprintf(format, args...)})
	}
	warn := func(path, summary, format string, args ...any) {
		out = append(out, Issue{Path: path, Summary: summary, Detail: fmt.Sprintf(format, args...), Warning: true})
	}

	if !NamePattern.MatchString(s.Name) {
		bad(AttrName, "Invalid cluster name",
			"name %q must be 1-%d characters of letters, digits, '_', '.' or '-', starting with a letter or digit", s.Name, MaxNameLength)
	}
	s.validateCounts(bad)
	s.validateLimits(bad)
	s.validateConstraints(bad)
	s.validatePinning(bad)

	if s.CapacityCheck != "" && !slices.Contains(CapacityChecks, s.CapacityCheck) {
		bad(AttrCapacityCheck, "Invalid capacity_check", "capacity_check %q must be one of %s",
			s.CapacityCheck, strings.Join(CapacityChecks, ", "))
	}

	s.validateSelectors(bad)
	s.validateTopologyStrategy(bad)
	s.validateSegmentSize(bad, warn)

	out = append(out, s.Topology.Validate(AttrTopologyLabels)...)

	s.validatePorts(bad, warn)
	return out
}

// issueFunc records one Issue at path; Validate's helpers report through it.
type issueFunc func(path, summary, format string, args ...any)

// validateCounts checks bundle_ct_per_node_list: its length, each count, and
// the world size they add up to.
func (s Spec) validateCounts(bad issueFunc) {
	counts := s.BundleCtPerNode
	switch {
	case len(counts) == 0:
		bad(AttrBundleCtPerNodeList, "Empty bundle_ct_per_node_list", "bundle_ct_per_node_list must contain at least one node")
	case len(counts) > MaxLogicalNodes:
		bad(AttrBundleCtPerNodeList, "Too many logical nodes",
			"bundle_ct_per_node_list has %d entries; at most %d logical nodes are supported", len(counts), MaxLogicalNodes)
	}
	positive, world := 0, 0
	for i, c := range counts {
		p := fmt.Sprintf("%s[%d]", AttrBundleCtPerNodeList, i)
		switch {
		case c < 0:
			bad(p, "Negative bundle count", "node %d asks for %d bundles; counts must be >= 0", i, c)
			continue
		case c > MaxBundlesPerNode:
			bad(p, "Too many bundles for one node", "node %d asks for %d bundles; at most %d are supported", i, c, MaxBundlesPerNode)
		case s.UseGPUs && s.NumGPUsPerNode >= 1 && c > s.NumGPUsPerNode:
			bad(p, "Too many bundles for one node",
				"node %d asks for %d bundles but num_gpus_per_node is %d", i, c, s.NumGPUsPerNode)
		}
		if c > 0 {
			positive++
		}
		world += min(c, MaxWorldSize+1)
	}
	if len(counts) > 0 && positive == 0 {
		bad(AttrBundleCtPerNodeList, "No bundles requested", "every node asks for 0 bundles; at least one count must be > 0")
	}
	if world > MaxWorldSize {
		bad(AttrBundleCtPerNodeList, "World size too large", "the counts add up to more than %d bundles", MaxWorldSize)
	}
}

// validateLimits checks the per-node GPU count, the colocated group limit and
// the placement group strategy.
func (s Spec) validateLimits(bad issueFunc) {
	switch {
	case s.UseGPUs && s.NumGPUsPerNode < 1:
		bad(AttrNumGPUsPerNode, "Invalid num_gpus_per_node",
			"num_gpus_per_node must be greater than 0 if using GPUs (got %d)", s.NumGPUsPerNode)
	case s.NumGPUsPerNode < 0:
		bad(AttrNumGPUsPerNode, "Invalid num_gpus_per_node", "num_gpus_per_node (%d) must be >= 0", s.NumGPUsPerNode)
	case s.NumGPUsPerNode > MaxGPUsPerNode:
		bad(AttrNumGPUsPerNode, "Invalid num_gpus_per_node", "num_gpus_per_node (%d) must be <= %d", s.NumGPUsPerNode, MaxGPUsPerNode)
	}
	switch {
	case s.MaxColocatedWorkerGroups < 1:
		bad(AttrMaxColocatedWorkerGroups, "Invalid max_colocated_worker_groups",
			"max_colocated_worker_groups (%d) must be >= 1", s.MaxColocatedWorkerGroups)
	case s.MaxColocatedWorkerGroups > MaxColocatedGroups:
		bad(AttrMaxColocatedWorkerGroups, "Invalid max_colocated_worker_groups",
			"max_colocated_worker_groups (%d) must be <= %d", s.MaxColocatedWorkerGroups, MaxColocatedGroups)
	}
	if err := topology.CheckStrategy(s.Strategy); err != nil {
		bad(AttrPlacementGroupStrategy, InvalidStrategySummary, "placement_group_strategy %v", err)
	}
}

// validateConstraints checks node_resource_constraints: one map per logical
// node, each naming a custom resource with a finite positive amount.
func (s Spec) validateConstraints(bad issueFunc) {
	if s.NodeResourceConstraints != nil && len(s.NodeResourceConstraints) != len(s.BundleCtPerNode) {
		bad(AttrNodeResourceConstraints, "Constraint count mismatch",
			"node_resource_constraints length (%d) must match bundle_ct_per_node_list length (%d)",
			len(s.NodeResourceConstraints), len(s.BundleCtPerNode))
	}
	for i, c := range s.NodeResourceConstraints {
		p := fmt.Sprintf("%s[%d]", AttrNodeResourceConstraints, i)
		for _, k := range slices.Sorted(maps.Keys(c)) {
			v := c[k]
			switch {
			case strings.TrimSpace(k) == "":
				bad(p, "Invalid constraint resource", "node %d has a constraint with an empty resource name", i)
			case k == "CPU" || k == "GPU":
				bad(p, "Invalid constraint resource",
					"node %d constrains %q; CPU and GPU are set by the cluster and cannot be overridden", i, k)
			case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
				bad(p, "Invalid constraint amount", "node %d constraint %q = %v must be a finite number > 0", i, k, v)
			}
		}
	}
}

// validatePinning checks how the cluster pins its nodes: select_nodes
// against node_resource_constraints, the pinning mode, and the selected IDs.
func (s Spec) validatePinning(bad issueFunc) {
	if s.SelectNodes && s.NodeResourceConstraints != nil {
		bad(AttrNodeResourceConstraints, "Conflicting node pinning",
			"node_resource_constraints cannot be combined with select_nodes: the cluster pins its selected nodes itself")
	}
	if s.ExclusiveNodes && s.SelectNodes && s.Pinning == PinningDomain {
		bad(AttrExclusiveNodes, SummaryExclusiveNodes,
			"exclusive_nodes reserves the selected nodes whole, but pinning = \"domain\" lets Ray place bundles on any "+
				"node of the domain: use pinning = \"node\" (the default) with exclusive_nodes")
	}
	if s.ExclusiveNodes && !s.SelectNodes {
		bad(AttrExclusiveNodes, SummaryExclusiveNodes,
			"exclusive_nodes reserves whole nodes, which only a cluster that selects its own nodes knows before "+
				"Ray places it: set select_nodes = true, or drop exclusive_nodes")
	}
	if !slices.Contains(Pinnings, s.Pinning) {
		bad(AttrPinning, "Invalid pinning", "pinning %q must be one of %s", s.Pinning, strings.Join(Pinnings, ", "))
	}
	if s.SelectNodes && s.SelectedNodeIDs != nil && len(s.SelectedNodeIDs) != len(s.BundleCtPerNode) {
		bad(AttrSelectedNodeIDs, "Selected node count mismatch",
			"%d selected nodes for %d logical nodes", len(s.SelectedNodeIDs), len(s.BundleCtPerNode))
	}
}

// validateSegmentSize checks segment_size. One diagnostic per mistake: an
// invalid segment_size is an error, and only a valid one that has no effect
// here is a warning.
func (s Spec) validateSegmentSize(bad, warn issueFunc) {
	if s.SegmentSize == nil {
		return
	}
	seg, nodes := *s.SegmentSize, len(s.BundleCtPerNode)
	if seg < 1 {
		bad(AttrSegmentSize, "Invalid segment_size", "segment_size (%d) must be >= 1", seg)
	} else if nodes%seg != 0 {
		bad(AttrSegmentSize, "segment_size does not divide the node count",
			"the number of logical nodes (%d, the length of bundle_ct_per_node_list) must be divisible by segment_size (%d)",
			nodes, seg)
	} else if (!s.UseUnifiedPG || !s.UseGPUs) && !s.SelectNodes {
		warn(AttrSegmentSize, "segment_size has no effect",
			"segment_size only reorders and trims bundles of a unified GPU placement group (use_unified_pg and use_gpus both true), "+
				"or sizes the segments select_nodes chooses; it is ignored here")
	}
}

// validatePorts checks the master port range, and warns when a valid one
// reaches the Linux ephemeral port range.
func (s Spec) validatePorts(bad, warn issueFunc) {
	problems := s.Ports.Problems()
	for _, p := range problems {
		bad(p.Field, "Invalid port range", "%s", p.Message)
	}
	if len(problems) == 0 && s.Ports.High > LinuxEphemeralPortLow {
		warn(AttrPortRangeHigh, "Port range reaches the ephemeral range",
			"master port range %s reaches the Linux ephemeral port range (from %d); kernel-assigned source ports may collide with it",
			s.Ports, LinuxEphemeralPortLow)
	}
}

// GroupRequest is one placement group to create.
type GroupRequest = topology.GroupRequest

// Groups mirrors _create_placement_groups_internal: one "<name>-unified"
// group (Strategy) with every bundle in node order, or one PerNodeStrategy
// group "<name>-node<i>" per node with a positive count. Zero-valued
// resources are omitted.
func (s Spec) Groups() []GroupRequest {
	s = s.WithDefaults()
	if s.UseUnifiedPG {
		g := GroupRequest{Name: UnifiedGroupName(s.Name), Strategy: s.Strategy, NodeIndex: -1}
		for i, c := range s.BundleCtPerNode {
			for j := 0; j < c; j++ {
				g.Bundles = append(g.Bundles, s.NodeBundle(i))
			}
		}
		return []GroupRequest{g}
	}
	var out []GroupRequest
	for i, c := range s.BundleCtPerNode {
		if c <= 0 {
			continue
		}
		g := GroupRequest{Name: NodeGroupName(s.Name, i), Strategy: PerNodeStrategy, NodeIndex: i}
		for j := 0; j < c; j++ {
			g.Bundles = append(g.Bundles, s.NodeBundle(i))
		}
		out = append(out, g)
	}
	return out
}

// GroupsAsk is what groups' bundles ask in all, by resource.
func GroupsAsk(groups []GroupRequest) topology.Resources {
	total := topology.Resources{}
	for _, g := range groups {
		for _, b := range g.Bundles {
			total.Add(b)
		}
	}
	return total
}

// NodeAsk is what the bundles ask of each chosen node (select_nodes, once
// chosen); nil for a cluster Ray places, or one whose nodes are not chosen yet.
func (s Spec) NodeAsk() map[string]topology.Resources {
	if !s.SelectNodes || len(s.SelectedNodeIDs) != len(s.BundleCtPerNode) {
		return nil
	}
	out := map[string]topology.Resources{}
	for _, g := range s.Groups() {
		for i, node := range s.BundleNodes(g) {
			id := s.SelectedNodeIDs[node]
			if out[id] == nil {
				out[id] = topology.Resources{}
			}
			out[id].Add(g.Bundles[i])
		}
	}
	return out
}

// GroupNames lists the placement-group names the spec owns.
func (s Spec) GroupNames() map[string]bool {
	names := map[string]bool{}
	for _, g := range s.Groups() {
		names[g.Name] = true
	}
	return names
}

// UnifiedGroupName and NodeGroupName are the reference's group names.
func UnifiedGroupName(cluster string) string { return cluster + "-unified" }

// NodeGroupName is the name of logical node i's group.
func NodeGroupName(cluster string, i int) string { return fmt.Sprintf("%s-node%d", cluster, i) }

// NamedLike reports whether group is named like one of cluster's groups,
// whatever the cluster's shape: "<cluster>-unified" or "<cluster>-node<i>".
func NamedLike(cluster, group string) bool {
	if group == UnifiedGroupName(cluster) {
		return true
	}
	i, ok := strings.CutPrefix(group, cluster+"-node")
	if !ok || i == "" {
		return false
	}
	_, err := strconv.ParseUint(i, 10, 32)
	return err == nil
}

// NodeBundle is one bundle of logical node node: CPU (the colocated group
// count), one GPU when the cluster uses GPUs, the node's constraints and its
// domain pin; zero amounts are left out.
func (s Spec) NodeBundle(node int) topology.Resources {
	b := topology.Resources{"CPU": float64(s.MaxColocatedWorkerGroups)}
	if s.UseGPUs {
		b["GPU"] = 1
	}
	if node < len(s.NodeResourceConstraints) {
		for k, v := range s.NodeResourceConstraints[node] {
			b[k] = v
		}
	}
	if d, ok := s.domainConstraint(node); ok {
		b[d] = topology.DomainConstraintAmount
	}
	for k, v := range b {
		if v == 0 {
			delete(b, k)
		}
	}
	return b
}

// SortsByTopology: as in the reference, only a unified GPU cluster's bundles
// are ranked by topology; other clusters keep the natural order.
func (s Spec) SortsByTopology() bool { return s.UseUnifiedPG && s.UseGPUs }
