package acctest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The HCL builder: every configuration an acceptance test (or the bench)
// hands the CLI is HCL(blocks...) of the blocks below, so a test reads as
// the attributes it sets and every configuration is written the same way.
// Typed blocks (VirtualCluster, Provider, Topology) leave zero fields out, so
// the provider's defaults apply; Block writes any other block (data sources,
// outputs, import and list blocks); Attr.Expr is an HCL expression written as
// is (Quote, Ints, Bool and NumberMaps write the usual values). RawBlock is
// the one way to hand the CLI a hand-written body, for tests of deliberately
// invalid input.

// HCL joins blocks into one configuration.
func HCL(blocks ...fmt.Stringer) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.String()
	}
	return strings.Join(parts, "\n")
}

// Attr is one attribute: Key = Expr, Expr an HCL expression written as is.
type Attr struct{ Key, Expr string }

// Block is one HCL block: Type "Labels" { Attrs, then Blocks }.
type Block struct {
	Type   string
	Labels []string
	Attrs  []Attr
	Blocks []Block
	raw    string // RawBlock's body
}

// RawBlock is a block whose body is written by hand and passed to the CLI
// unchanged. It is only for configurations that test deliberately invalid
// input (values of the wrong type, unknown arguments, strings the schema
// rejects), which the typed blocks cannot or should not write.
func RawBlock(typ string, labels []string, body string) Block {
	return Block{Type: typ, Labels: labels, raw: body}
}

func (b Block) String() string {
	var s strings.Builder
	b.write(&s, "")
	return s.String()
}

func (b Block) write(s *strings.Builder, indent string) {
	s.WriteString(indent + b.Type)
	for _, l := range b.Labels {
		s.WriteString(" " + strconv.Quote(l))
	}
	s.WriteString(" {\n")
	if b.raw != "" {
		s.WriteString(strings.TrimSuffix(b.raw, "\n") + "\n")
	}
	width := 0
	for _, a := range b.Attrs {
		width = max(width, len(a.Key))
	}
	for _, a := range b.Attrs {
		fmt.Fprintf(s, "%s  %-*s = %s\n", indent, width, a.Key, a.Expr)
	}
	for _, nested := range b.Blocks {
		nested.write(s, indent+"  ")
	}
	s.WriteString(indent + "}\n")
}

// Quote is an HCL string.
func Quote(s string) string { return strconv.Quote(s) }

// Ints is an HCL list of numbers.
func Ints(values []int) string {
	items := make([]string, len(values))
	for i, v := range values {
		items[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// Strings is an HCL list of strings.
func Strings(values []string) string {
	items := make([]string, len(values))
	for i, v := range values {
		items[i] = Quote(v)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// NumberMaps is an HCL list of maps of numbers, keys sorted and quoted.
func NumberMaps(maps []map[string]float64) string {
	items := make([]string, len(maps))
	for i, m := range maps {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, len(keys))
		for j, k := range keys {
			pairs[j] = Quote(k) + " = " + strconv.FormatFloat(m[k], 'g', -1, 64)
		}
		items[i] = "{ " + strings.Join(pairs, ", ") + " }"
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// Output is output "name" { value = expr }.
func Output(name, expr string) Block {
	return Block{Type: "output", Labels: []string{name}, Attrs: []Attr{{"value", expr}}}
}

// RequiredTestProvider names the in-process test provider by its full
// address: OpenTofu reads a bare "ray" as registry.opentofu.org's.
var RequiredTestProvider = Block{Type: "terraform", Blocks: []Block{{Type: "required_providers",
	Attrs: []Attr{{"ray", `{ source = "registry.terraform.io/hashicorp/ray" }`}}}}}

// List is a list "ray_virtual_cluster" block of terraform query (a
// .tfquery.hcl file) with config's filters.
func List(label string, includeResource bool, config ...Attr) Block {
	return Block{Type: "list", Labels: []string{"ray_virtual_cluster", label},
		Attrs:  []Attr{{"provider", "ray"}, {"include_resource", strconv.FormatBool(includeResource)}},
		Blocks: []Block{{Type: "config", Attrs: config}}}
}

// add appends key = expr when expr is not empty (a zero field).
func add(attrs []Attr, key, expr string) []Attr {
	if expr == "" {
		return attrs
	}
	return append(attrs, Attr{key, expr})
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return Quote(s)
}

func number(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func flag(b bool, expr string) string {
	if !b {
		return ""
	}
	return expr
}

// VirtualCluster is resource "ray_virtual_cluster" Label ("t" when empty).
// Expression fields (ExcludeNodeIDs, TopologyLabels) are HCL written as is;
// Extra holds any other attribute (count, node_label_selectors, ...).
type VirtualCluster struct {
	Label          string
	Name           string
	Counts         []int // bundle_ct_per_node_list, always written
	GPUsPerNode    int
	NoGPUs         bool // use_gpus = false
	Colocated      int  // max_colocated_worker_groups
	Unified        bool // use_unified_pg
	Strategy       string
	SegmentSize    int
	SelectNodes    bool
	ExcludeNodeIDs string // an HCL expression
	Pinning        string
	CapacityCheck  string
	ReadyTimeout   string
	Constraints    []map[string]float64 // node_resource_constraints
	PortLow        int
	PortHigh       int
	TopologyLabels string // an HCL expression
	Extra          []Attr
}

// Block is the cluster's block.
func (c VirtualCluster) Block() Block {
	label := c.Label
	if label == "" {
		label = "t"
	}
	a := []Attr{{"name", Quote(c.Name)}, {"bundle_ct_per_node_list", Ints(c.Counts)}}
	a = add(a, "num_gpus_per_node", number(c.GPUsPerNode))
	a = add(a, "use_gpus", flag(c.NoGPUs, "false"))
	a = add(a, "max_colocated_worker_groups", number(c.Colocated))
	a = add(a, "use_unified_pg", flag(c.Unified, "true"))
	a = add(a, "placement_group_strategy", quoted(c.Strategy))
	a = add(a, "segment_size", number(c.SegmentSize))
	a = add(a, "select_nodes", flag(c.SelectNodes, "true"))
	a = add(a, "exclude_node_ids", c.ExcludeNodeIDs)
	a = add(a, "pinning", quoted(c.Pinning))
	a = add(a, "capacity_check", quoted(c.CapacityCheck))
	a = add(a, "ready_timeout", quoted(c.ReadyTimeout))
	if c.Constraints != nil {
		a = add(a, "node_resource_constraints", NumberMaps(c.Constraints))
	}
	a = add(a, "port_range_low", number(c.PortLow))
	a = add(a, "port_range_high", number(c.PortHigh))
	a = add(a, "topology_labels", c.TopologyLabels)
	return Block{Type: "resource", Labels: []string{"ray_virtual_cluster", label}, Attrs: append(a, c.Extra...)}
}

func (c VirtualCluster) String() string { return c.Block().String() }

// Provider is the provider "ray" block. Token, RuntimeEnvJSON and
// TopologyLabels are HCL expressions; Extra holds any other attribute.
type Provider struct {
	Address          string
	MaxRetries       *int
	RetryWaitMin     string
	RetryWaitMax     string
	PythonExecutable string
	RuntimeEnvJSON   string // an HCL expression
	Token            string // an HCL expression
	CapacityCheck    string
	TopologyLabels   string // an HCL expression
	Extra            []Attr
}

// Retries is a Provider.MaxRetries value.
func Retries(n int) *int { return &n }

func (p Provider) String() string {
	a := add(nil, "address", quoted(p.Address))
	if p.MaxRetries != nil {
		a = append(a, Attr{"max_retries", strconv.Itoa(*p.MaxRetries)})
	}
	a = add(a, "retry_wait_min", quoted(p.RetryWaitMin))
	a = add(a, "retry_wait_max", quoted(p.RetryWaitMax))
	a = add(a, "python_executable", quoted(p.PythonExecutable))
	a = add(a, "runtime_env_json", p.RuntimeEnvJSON)
	a = add(a, "token", p.Token)
	a = add(a, "capacity_check", quoted(p.CapacityCheck))
	a = add(a, "topology_labels", p.TopologyLabels)
	return Block{Type: "provider", Labels: []string{"ray"}, Attrs: append(a, p.Extra...)}.String()
}

// Topology is data "ray_cluster_topology" Label ("t" when empty), with
// include_nodes = true unless NoNodes (most tests read the nodes, which are
// opt-in).
type Topology struct {
	Label          string
	NoNodes        bool
	SegmentSize    int
	NumNodes       int
	ExcludeNodeIDs string // an HCL expression
	Role           string
	TopologyLabels string // an HCL expression
}

func (d Topology) String() string {
	label := d.Label
	if label == "" {
		label = "t"
	}
	a := add(nil, "include_nodes", flag(!d.NoNodes, "true"))
	a = add(a, "segment_size", number(d.SegmentSize))
	a = add(a, "num_nodes", number(d.NumNodes))
	a = add(a, "exclude_node_ids", d.ExcludeNodeIDs)
	a = add(a, "role", quoted(d.Role))
	a = add(a, "topology_labels", d.TopologyLabels)
	return Block{Type: "data", Labels: []string{"ray_cluster_topology", label}, Attrs: a}.String()
}
