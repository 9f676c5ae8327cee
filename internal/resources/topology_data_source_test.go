package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// The local test cluster (scripts/ray-cluster.sh): head (topo_rank 1, no
// domain, no GPU), rackA ranks 2,3; rackB ranks 4,5; rackC rank 6; 4 GPUs each.

func topologyTest(t *testing.T, steps ...resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps:                    steps,
	})
}

// sameNode checks that list[i] of the data source at address is the node id
// of the t data source's node n.
func sameNode(address, list string, i, n int) statecheck.StateCheck {
	return statecheck.CompareValuePairs(address, at(list, i), dsName, at("nodes", n, "node_id"), compare.ValuesSame())
}

func TestAccClusterTopology_nodesInTopologicalOrder(t *testing.T) {
	node := func(domain string, rank int64) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"nvlink_domain": knownvalue.StringExact(domain), "topo_rank": knownvalue.Int64Exact(rank),
		})
	}
	var rayVersion string
	topologyTest(t, resource.TestStep{
		PreConfig: func() { rayVersion = serverRayVersion(t) },
		Config:    acctest.Topology{}.String(),
		ConfigStateChecks: []statecheck.StateCheck{
			logNodes(t, dsName),
			expectDS(at("nodes"), knownvalue.ListSizeExact(6)),
			expectDS(at("has_topology"), knownvalue.Bool(true)),
			expectDS(at("total_gpus"), knownvalue.Int64Exact(20)),
			expectDS(at("total_cpus"), knownvalue.Int64Exact(24)),
			expectDS(at("ray_version"), knownvalue.StringFunc(func(v string) error {
				if v == "" || v != rayVersion {
					return fmt.Errorf("ray_version %q, the dashboard reports %q", v, rayVersion)
				}
				return nil
			})),
			expectDS(at("nodes", 0, "is_head_node"), knownvalue.Bool(true)),
			expectDS(at("nodes", 0), node("unknown", 1)),
			expectDS(at("nodes", 1), node("nvlink_domain_rackA", 2)),
			expectDS(at("nodes", 2, "topo_rank"), knownvalue.Int64Exact(3)),
			expectDS(at("nodes", 3), node("nvlink_domain_rackB", 4)),
			expectDS(at("nodes", 5), node("nvlink_domain_rackC", 6)),
			expectDS(at("nodes", 5, "gpus"), knownvalue.Float64Exact(4)),
			expectDS(at("nodes", 5, "resources", "topo_rank"), knownvalue.Float64Exact(6)),
			expectDS(at("selected_node_ids"), knownvalue.ListSizeExact(0)),
			expectDS(at("remaining_node_ids"), knownvalue.ListSizeExact(0)),
			expectDS(at("node_resource_constraints"), knownvalue.Null()),
		},
	})
}

func TestAccClusterTopology_segmentSelection(t *testing.T) {
	const inference = "data.ray_cluster_topology.inference"
	constraint := func(domain string) knownvalue.Check {
		return knownvalue.MapExact(map[string]knownvalue.Check{domain: knownvalue.Float64Exact(0.001)})
	}
	topologyTest(t, resource.TestStep{
		Config: acctest.HCL(
			acctest.Topology{SegmentSize: 2, NumNodes: 4},
			acctest.Topology{Label: "inference", SegmentSize: 1, NumNodes: 1, Role: "inference",
				ExcludeNodeIDs: dsName + ".selected_node_ids"},
		),
		ConfigStateChecks: []statecheck.StateCheck{
			expectDS(at("selected_node_ids"), knownvalue.ListSizeExact(4)),
			sameNode(dsName, "selected_node_ids", 0, 1),
			sameNode(dsName, "selected_node_ids", 1, 2),
			sameNode(dsName, "selected_node_ids", 2, 3),
			sameNode(dsName, "selected_node_ids", 3, 4),
			expectDS(at("remaining_node_ids"), knownvalue.ListSizeExact(2)),
			expectDS(at("node_resource_constraints"), knownvalue.ListExact([]knownvalue.Check{
				constraint("nvlink_domain_rackA"), constraint("nvlink_domain_rackA"),
				constraint("nvlink_domain_rackB"), constraint("nvlink_domain_rackB"),
			})),
			expectDS(at("message"), knownvalue.StringRegexp(regexp.MustCompile(`4 training nodes in 2 NVLink domains`))),
			statecheck.ExpectKnownValue(inference, at("nodes"), knownvalue.ListSizeExact(2)),
			statecheck.ExpectKnownValue(inference, at("selected_node_ids"), knownvalue.ListSizeExact(1)),
			sameNode(inference, "selected_node_ids", 0, 5),
			statecheck.ExpectKnownValue(inference, at("node_resource_constraints"),
				knownvalue.ListExact([]knownvalue.Check{constraint("nvlink_domain_rackC")})),
			statecheck.ExpectKnownValue(inference, at("message"), knownvalue.StringRegexp(regexp.MustCompile(`inference`))),
		},
	})
}

func TestAccClusterTopology_infeasibleSegments(t *testing.T) {
	topologyTest(t,
		resource.TestStep{
			Config:      acctest.Topology{SegmentSize: 2, NumNodes: 6}.String(),
			ExpectError: regexp.MustCompile(`(?s)cannot form 3 complete segments of 2 nodes.*nvlink_domain_rackC=1`),
		},
		resource.TestStep{
			Config:      acctest.Topology{SegmentSize: 2, NumNodes: 3}.String(),
			ExpectError: regexp.MustCompile(`num_nodes \(3\) must be divisible by segment_size \(2\)`),
		},
		resource.TestStep{
			Config:      acctest.Topology{SegmentSize: 2}.String(),
			ExpectError: regexp.MustCompile(`num_nodes`),
		},
	)
}

func TestAccClusterTopology_unreachableCluster(t *testing.T) {
	topologyTest(t, resource.TestStep{
		Config:      acctest.HCL(unreachableProvider, acctest.Topology{}),
		ExpectError: regexp.MustCompile(`(?s)No Ray dashboard answered at http://127.0.0.1:1.*ray start --head`),
	})
}
