package clusterspec

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// TopologySource says where a node's NVLink domain and topo rank come from.
// An empty field keeps the reference's custom resource for it
// (nvlink_domain_<X>, topo_rank); a label key reads the node label instead.
// The zero value is the reference's behaviour. It travels to the driver in
// Request.Probe, so the per-bundle probe reads the same source.
type TopologySource struct {
	// DomainLabel is the node label whose value names the NVLink domain.
	DomainLabel string `json:"domain_label,omitempty"`
	// RankLabel is the node label holding the topo rank (decimal digits).
	RankLabel string `json:"rank_label,omitempty"`
}

// Attribute names of a topology_labels object (provider, data source and
// resource), used as issue paths and schema keys.
const (
	AttrTopologyLabels      = "topology_labels"
	AttrTopologyLabelDomain = "nvlink_domain"
	AttrTopologyLabelRank   = "topo_rank"
)

// MaxRankLabelDigits keeps a parsed rank label within int64 (the driver
// gets it in Contract.RankLabelDigits).
const MaxRankLabelDigits = 18

// Label keys as Ray accepts them (`ray start --labels`): an optional prefix of
// dot-separated parts, a slash, and a name of at most 63 characters.
var (
	labelNamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$`)
	labelPartPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`)
)

// maxLabelPrefixLength bounds a label key's prefix (a DNS subdomain).
const maxLabelPrefixLength = 253

// ValidateLabelKey explains why key is not a Ray node label key, or returns nil.
func ValidateLabelKey(key string) error {
	name := key
	if prefix, rest, ok := strings.Cut(key, "/"); ok {
		name = rest
		if prefix == "" || len(prefix) > maxLabelPrefixLength {
			return fmt.Errorf("label key %q: the prefix before '/' must be 1-%d characters", key, maxLabelPrefixLength)
		}
		for _, part := range strings.Split(prefix, ".") {
			if !labelPartPattern.MatchString(part) {
				return fmt.Errorf("label key %q: the prefix must be dot-separated parts of letters, digits, '-' and '_' "+
					"that start and end with a letter or digit", key)
			}
		}
	}
	if !labelNamePattern.MatchString(name) {
		return fmt.Errorf("label key %q: the name must be 1-63 letters, digits, '-', '_' or '.', starting and ending "+
			"with a letter or digit", key)
	}
	return nil
}

// Validate checks both label keys; issue paths are under attr (the
// attribute holding the object, e.g. AttrTopologyLabels).
func (s TopologySource) Validate(attr string) []Issue {
	var out []Issue
	for field, key := range map[string]string{AttrTopologyLabelDomain: s.DomainLabel, AttrTopologyLabelRank: s.RankLabel} {
		if key == "" {
			continue
		}
		if err := ValidateLabelKey(key); err != nil {
			out = append(out, Issue{Path: attr + "." + field, Summary: "Invalid node label key",
				Detail: fmt.Sprintf("%s.%s: %v", attr, field, err)})
		}
	}
	return out
}

// SourceOrDefault is *src, or the resources' source (the zero value) for nil.
func SourceOrDefault(src *TopologySource) TopologySource {
	if src == nil {
		return TopologySource{}
	}
	return *src
}

// UsesLabels reports whether either field comes from a label.
func (s TopologySource) UsesLabels() bool { return s.DomainLabel != "" || s.RankLabel != "" }

// Node is one node's (domain, rank) from this source. A label domain is
// named by the label's value; a missing or empty label (or a value equal to
// the unknown sentinel) is the unknown domain. A rank label that is not
// plain decimal digits is TopoRankUnknown, as is a missing one.
func (s TopologySource) Node(resources map[string]float64, labels map[string]string) (domain string, rank int) {
	domain, rank = topology.ParseNodeTopology(resources)
	if s.DomainLabel != "" {
		domain = topology.NVLinkDomainUnknown
		if v := labels[s.DomainLabel]; v != "" {
			domain = v
		}
	}
	if s.RankLabel != "" {
		rank = ParseRankLabel(labels[s.RankLabel])
	}
	return domain, rank
}

// ParseRankLabel reads a rank label value: 1-18 ASCII digits, anything else
// (including "", signs and spaces) is TopoRankUnknown. driver.py applies
// the same rule.
func ParseRankLabel(v string) int {
	if v == "" || len(v) > MaxRankLabelDigits {
		return topology.TopoRankUnknown
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return topology.TopoRankUnknown
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return topology.TopoRankUnknown
	}
	return n
}

// NodeTopology is the (domain, topo_rank) view of nodes from this source, in
// their order.
func (s TopologySource) NodeTopology(nodes []raystate.Node) []topology.Node {
	out := make([]topology.Node, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		domain, rank := s.Node(n.ResourcesTotal, n.Labels)
		out = append(out, topology.Node{ID: n.NodeID, Domain: domain, TopoRank: rank})
	}
	return out
}

// MissingLabelSupport returns an error when the source reads labels but Ray
// reports none at all: every Ray that reports labels gives each node at
// least NodeIDLabel, so a node without any label means the connected Ray
// (older than 2.55.1, or with labels turned off) does not report them, and
// every node would silently get the sentinels.
func (s TopologySource) MissingLabelSupport(nodes []raystate.Node, rayVersion string) error {
	if !s.UsesLabels() {
		return nil
	}
	for _, n := range nodes {
		if len(n.Labels) == 0 {
			return fmt.Errorf("%s reads node labels (%s), but Ray %s reports no labels for node %s (not even %s): "+
				"this Ray version's state API does not report node labels. Use Ray %s or later, or remove %s "+
				"to read the nvlink_domain_<X> / topo_rank resources", AttrTopologyLabels, s.describe(), rayVersion,
				n.NodeID, NodeIDLabel, MinRayVersion, AttrTopologyLabels)
		}
	}
	return nil
}

func (s TopologySource) describe() string {
	var parts []string
	if s.DomainLabel != "" {
		parts = append(parts, AttrTopologyLabelDomain+" = "+strconv.Quote(s.DomainLabel))
	}
	if s.RankLabel != "" {
		parts = append(parts, AttrTopologyLabelRank+" = "+strconv.Quote(s.RankLabel))
	}
	return strings.Join(parts, ", ")
}

// DomainSelector is the bundle label selector that holds a bundle to domain
// when domains come from a label; ok is false for the resource source or the
// unknown domain (then the caller pins with the domain resource, or not at all).
func (s TopologySource) DomainSelector(domain string) (selector map[string]string, ok bool) {
	if s.DomainLabel == "" || domain == "" || domain == topology.NVLinkDomainUnknown {
		return nil, false
	}
	return map[string]string{s.DomainLabel: domain}, true
}
