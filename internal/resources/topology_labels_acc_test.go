package resources_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Label topology: scripts/ray-cluster.sh gives every node the labels
// raytf.io/nvlink-domain=<X> (nodes with the nvlink_domain_<X> resource; not
// the head) and raytf.io/topo-rank=<N> (every node, N = its topo_rank).
const (
	domainLabel = "raytf.io/nvlink-domain"
	rankLabel   = "raytf.io/topo-rank"
	// bothLabels is a topology_labels value reading both fields from labels.
	bothLabels = `{ nvlink_domain = "` + domainLabel + `", topo_rank = "` + rankLabel + `" }`
	// resourceDomainPrefix is the reference's domain resource prefix, which
	// the label values of the test cluster leave out.
	resourceDomainPrefix = "nvlink_domain_"
)

const (
	dsLabels    = "data.ray_cluster_topology.labels"
	dsResources = "data.ray_cluster_topology.resources"
)

// rayNodesByID lists the alive nodes as Ray's state API reports them.
func rayNodesByID(t *testing.T) map[string]raystate.Node {
	t.Helper()
	nodes, err := acctest.Client(t).ListNodes(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]raystate.Node{}
	for _, n := range nodes {
		out[n.NodeID] = n
	}
	return out
}

func asInt(v any) int {
	i, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil {
		return -999
	}
	return i
}

// labelNodesMatchRay checks every node of the label data source against Ray:
// its domain is its domain label's value (unknown without one), its rank its
// rank label, and it equals the resource data source's node at the same
// index but for the resource prefix of the domain.
func labelNodesMatchRay(t *testing.T) statecheck.StateCheck {
	return stateCheckFunc(func(res map[string]map[string]any) error {
		ray := rayNodesByID(t)
		byLabel, _ := res[dsLabels]["nodes"].([]any)
		byResource, _ := res[dsResources]["nodes"].([]any)
		if len(byLabel) == 0 || len(byLabel) != len(byResource) {
			return fmt.Errorf("%d nodes by label, %d by resource", len(byLabel), len(byResource))
		}
		unknown := 0
		for i := range byLabel {
			l, _ := byLabel[i].(map[string]any)
			r, _ := byResource[i].(map[string]any)
			id, _ := l["node_id"].(string)
			if r["node_id"] != id {
				return fmt.Errorf("node %d: %v by label, %v by resource", i, id, r["node_id"])
			}
			node, ok := ray[id]
			if !ok {
				return fmt.Errorf("node %s is not alive in Ray", id)
			}
			wantDomain := node.Labels[domainLabel]
			if wantDomain == "" {
				wantDomain = "unknown"
				unknown++
			}
			if l["nvlink_domain"] != wantDomain {
				return fmt.Errorf("node %s: nvlink_domain %v, Ray's label %q", id, l["nvlink_domain"], wantDomain)
			}
			if got, want := asInt(l["topo_rank"]), asInt(node.Labels[rankLabel]); got != want {
				return fmt.Errorf("node %s: topo_rank %d, Ray's label %d", id, got, want)
			}
			if strings.TrimPrefix(fmt.Sprint(r["nvlink_domain"]), resourceDomainPrefix) != wantDomain ||
				asInt(r["topo_rank"]) != asInt(l["topo_rank"]) {
				return fmt.Errorf("node %s: (%v, %v) by label, (%v, %v) by resource", id,
					l["nvlink_domain"], l["topo_rank"], r["nvlink_domain"], r["topo_rank"])
			}
		}
		if unknown == 0 {
			return fmt.Errorf("no node without the %s label (the head has none): the sentinel went untested", domainLabel)
		}
		return nil
	})
}

// The provider-level label source and a data source that overrides it with
// the resources (`topology_labels = {}`) select the same nodes in the same
// order and segments; each label domain is the node's label value in Ray.
func TestAccClusterTopology_labelsSelectLikeResources(t *testing.T) {
	cfg := acctest.HCL(acctest.Provider{TopologyLabels: bothLabels},
		acctest.Topology{Label: "labels", SegmentSize: 2, NumNodes: 4},
		acctest.Topology{Label: "resources", SegmentSize: 2, NumNodes: 4, TopologyLabels: "{}"})
	same := func(attr string) statecheck.StateCheck {
		return statecheck.CompareValuePairs(dsLabels, at(attr), dsResources, at(attr), compare.ValuesSame())
	}
	selector := func(domain string) knownvalue.Check {
		return knownvalue.MapExact(map[string]knownvalue.Check{domainLabel: knownvalue.StringExact(domain)})
	}
	topologyTest(t, resource.TestStep{
		Config: cfg,
		ConfigStateChecks: []statecheck.StateCheck{
			logNodes(t, dsLabels),
			same("selected_node_ids"),
			same("remaining_node_ids"),
			same("message"),
			same("has_topology"),
			same("total_gpus"),
			statecheck.ExpectKnownValue(dsLabels, at("selected_node_ids"), knownvalue.ListSizeExact(4)),
			statecheck.ExpectKnownValue(dsLabels, at("topology_labels"), knownvalue.Null()), // the provider's applies
			labelNodesMatchRay(t),
			// Label domains select with label selectors, not resource constraints.
			statecheck.ExpectKnownValue(dsLabels, at("node_resource_constraints"), knownvalue.Null()),
			statecheck.ExpectKnownValue(dsLabels, at("node_label_selectors"), knownvalue.ListExact([]knownvalue.Check{
				selector("rackA"), selector("rackA"), selector("rackB"), selector("rackB"),
			})),
			statecheck.ExpectKnownValue(dsResources, at("node_label_selectors"), knownvalue.Null()),
			statecheck.ExpectKnownValue(dsResources, at("node_resource_constraints"), knownvalue.ListSizeExact(4)),
		},
	})
}

// A label no node has gives every node the unknown domain (so no topology
// and no selection), and a rank label whose values are not digits (here the
// domain label) gives -1; the field without a label keeps its resource.
func TestAccClusterTopology_labelsSentinels(t *testing.T) {
	cfg := acctest.HCL(
		acctest.Topology{SegmentSize: 1, NumNodes: 1, TopologyLabels: `{ nvlink_domain = "raytf.io/no-such-label" }`},
		acctest.Topology{Label: "rank", TopologyLabels: fmt.Sprintf(`{ topo_rank = %q }`, domainLabel)})
	checkRanks := stateCheckFunc(func(res map[string]map[string]any) error {
		ray := rayNodesByID(t)
		for _, addr := range []string{dsName, "data.ray_cluster_topology.rank"} {
			nodes, _ := res[addr]["nodes"].([]any)
			if len(nodes) == 0 {
				return fmt.Errorf("%s lists no nodes", addr)
			}
			for _, raw := range nodes {
				n, _ := raw.(map[string]any)
				id, _ := n["node_id"].(string)
				resources := ray[id].ResourcesTotal
				domain, rank := fmt.Sprint(n["nvlink_domain"]), asInt(n["topo_rank"])
				if addr == dsName {
					// Domain by the missing label, rank by the resource.
					if domain != "unknown" || rank != int(resources["topo_rank"]) {
						return fmt.Errorf("%s node %s: (%s, %d), want (unknown, %g)", addr, id, domain, rank, resources["topo_rank"])
					}
					continue
				}
				// Rank by a non-numeric label, domain by the resource.
				if rank != -1 || (domain != "unknown" && resources[domain] == 0) {
					return fmt.Errorf("%s node %s: (%s, %d), want (its resource domain, -1)", addr, id, domain, rank)
				}
			}
		}
		return nil
	})
	topologyTest(t, resource.TestStep{
		Config: cfg,
		ConfigStateChecks: []statecheck.StateCheck{
			expectDS(at("has_topology"), knownvalue.Bool(false)),
			expectDS(at("selected_node_ids"), knownvalue.ListSizeExact(0)),
			expectDS(at("node_label_selectors"), knownvalue.Null()),
			statecheck.ExpectKnownValue("data.ray_cluster_topology.rank", at("has_topology"), knownvalue.Bool(true)),
			checkRanks,
		},
	})
}

// labelCluster is a small cluster that selects a 2-node segment and pins its
// logical nodes to their domains; providerLabels and clusterLabels are
// topology_labels values ("" leaves them out); more are further blocks.
func labelCluster(name, providerLabels, clusterLabels string, more ...fmt.Stringer) string {
	var blocks []fmt.Stringer
	if providerLabels != "" {
		blocks = append(blocks, acctest.Provider{TopologyLabels: providerLabels})
	}
	blocks = append(blocks, acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, NoGPUs: true, SelectNodes: true,
		SegmentSize: 2, Pinning: "domain", PortLow: 1920, PortHigh: 1999, TopologyLabels: clusterLabels})
	return acctest.HCL(append(blocks, more...)...)
}

// bundlesMatchRay checks the cluster's bundles against Ray's state API: each
// sits where state says, reports its node's domain and rank from the source
// (labels: the label values; resources: the resource names), and its group
// pins it the way the source says: a label selector on the domain label, or
// the domain resource.
func bundlesMatchRay(t *testing.T, name string, byLabel bool) statecheck.StateCheck {
	return stateCheckFunc(func(res map[string]map[string]any) error {
		ray := rayNodesByID(t)
		groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
		if err != nil {
			return err
		}
		live := map[string]raystate.Bundle{}
		for _, g := range groups {
			for _, b := range g.Bundles {
				live[fmt.Sprintf("%s/%d", g.Name, b.BundleIndex)] = b
			}
		}
		bundles, _ := res[vcName]["bundles"].([]any)
		if len(bundles) != 2 || len(live) != 2 {
			return fmt.Errorf("%d bundles in state, %d in Ray", len(bundles), len(live))
		}
		for _, raw := range bundles {
			b, _ := raw.(map[string]any)
			key := fmt.Sprintf("%v/%v", b["placement_group"], b["bundle_index"])
			rb, ok := live[key]
			if !ok || rb.NodeID != b["node_id"] {
				return fmt.Errorf("bundle %s: state says node %v, Ray %q", key, b["node_id"], rb.NodeID)
			}
			node := ray[rb.NodeID]
			domain, rank := fmt.Sprint(b["nvlink_domain"]), asInt(b["topo_rank"])
			if byLabel {
				if domain != node.Labels[domainLabel] || rank != asInt(node.Labels[rankLabel]) {
					return fmt.Errorf("bundle %s: (%s, %d), node labels %v", key, domain, rank, node.Labels)
				}
				if len(rb.LabelSelector) != 1 || rb.LabelSelector[domainLabel] != domain {
					return fmt.Errorf("bundle %s: Ray's label selector %v, want {%s: %s}", key, rb.LabelSelector, domainLabel, domain)
				}
				for k := range rb.UnitResources {
					if strings.HasPrefix(k, resourceDomainPrefix) {
						return fmt.Errorf("bundle %s reserves the domain resource %s under a label source", key, k)
					}
				}
				continue
			}
			if node.ResourcesTotal[domain] == 0 || rank != int(node.ResourcesTotal["topo_rank"]) {
				return fmt.Errorf("bundle %s: (%s, %d), node resources %v", key, domain, rank, node.ResourcesTotal)
			}
			if rb.UnitResources[domain] == 0 || len(rb.LabelSelector) != 0 {
				return fmt.Errorf("bundle %s: Ray's bundle %v / %v does not pin domain %s by resource", key, rb.UnitResources, rb.LabelSelector, domain)
			}
		}
		return nil
	})
}

// A cluster with the label source selects the same segment as the label data
// source, pins by label selector and reports label domains and ranks (checked
// in Ray); the same source moved to the provider is no change; another
// provider source replaces the cluster, which then pins and reports by the
// domain resource.
func TestAccVirtualCluster_labelsPlaceAndReport(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("labels")
	sameSegment := acctest.Topology{Label: "labels", NoNodes: true, SegmentSize: 2, NumNodes: 2, TopologyLabels: bothLabels}
	vcTest(t, name,
		resource.TestStep{
			Config: labelCluster(name, "", bothLabels, sameSegment),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs(vcName, at("selected_node_ids"), dsLabels, at("selected_node_ids"), compare.ValuesSame()),
				expectVC(at("topology_labels", "nvlink_domain"), knownvalue.StringExact(domainLabel)),
				expectVC(at("nvlink_domain_per_bundle"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("rackA"), knownvalue.StringExact("rackA")})),
				bundlesMatchRay(t, name, true),
			},
			Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
		},
		resource.TestStep{
			Config:           labelCluster(name, bothLabels, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		resource.TestStep{
			Config: labelCluster(name, `{ topo_rank = "`+rankLabel+`" }`, ""),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				expectVC(at("topology_labels", "nvlink_domain"), knownvalue.Null()),
				expectVC(at("nvlink_domain_per_bundle", 0), knownvalue.StringExact(resourceDomainPrefix+"rackA")),
				bundlesMatchRay(t, name, false),
			},
		},
	)
}

// A rank label no node has gives every bundle the -1 sentinel from the
// driver's probe, while its domain still comes from the resource (or is
// unknown on a node without one, e.g. the head).
func TestAccVirtualCluster_labelsMissingRankIsSentinel(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	name := acctest.Name("labelsentinel")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, NoGPUs: true, PortLow: 1920, PortHigh: 1999,
		TopologyLabels: `{ topo_rank = "raytf.io/no-such-label" }`}.String()
	vcTest(t, name, resource.TestStep{
		Config: cfg,
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("bundles", 0, "topo_rank"), knownvalue.Int64Exact(-1)),
			expectVC(at("bundles", 1, "topo_rank"), knownvalue.Int64Exact(-1)),
			stateCheckFunc(func(res map[string]map[string]any) error {
				ray := rayNodesByID(t)
				bundles, _ := res[vcName]["bundles"].([]any)
				for _, raw := range bundles {
					b, _ := raw.(map[string]any)
					node := ray[fmt.Sprint(b["node_id"])]
					domain := fmt.Sprint(b["nvlink_domain"])
					if (domain == "unknown") != (node.Labels[domainLabel] == "") || (domain != "unknown" && node.ResourcesTotal[domain] == 0) {
						return fmt.Errorf("bundle on %s reports domain %s; the node's resources are %v", node.NodeIP, domain, node.ResourcesTotal)
					}
				}
				return nil
			}),
		},
	})
}
