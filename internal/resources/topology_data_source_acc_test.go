package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// The local test cluster (scripts/ray-cluster.sh): head (topo_rank 1, no
// domain, no GPU), rackA ranks 2,3; rackB ranks 4,5; rackC rank 6; 4 GPUs each.
const dsName = "data.ray_cluster_topology.t"

func TestAccClusterTopology_nodesInTopologicalOrder(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `data "ray_cluster_topology" "t" { include_nodes = true }`,
			Check: resource.ComposeAggregateTestCheckFunc(
				logNodes(t, dsName),
				resource.TestCheckResourceAttr(dsName, "nodes.#", "6"),
				resource.TestCheckResourceAttr(dsName, "has_topology", "true"),
				resource.TestCheckResourceAttr(dsName, "total_gpus", "20"),
				resource.TestCheckResourceAttr(dsName, "total_cpus", "24"),
				resource.TestCheckResourceAttr(dsName, "ray_version", "2.60.0"),
				resource.TestCheckResourceAttr(dsName, "nodes.0.is_head_node", "true"),
				resource.TestCheckResourceAttr(dsName, "nodes.0.nvlink_domain", "unknown"),
				resource.TestCheckResourceAttr(dsName, "nodes.0.topo_rank", "1"),
				resource.TestCheckResourceAttr(dsName, "nodes.1.nvlink_domain", "nvlink_domain_rackA"),
				resource.TestCheckResourceAttr(dsName, "nodes.1.topo_rank", "2"),
				resource.TestCheckResourceAttr(dsName, "nodes.2.topo_rank", "3"),
				resource.TestCheckResourceAttr(dsName, "nodes.3.nvlink_domain", "nvlink_domain_rackB"),
				resource.TestCheckResourceAttr(dsName, "nodes.3.topo_rank", "4"),
				resource.TestCheckResourceAttr(dsName, "nodes.5.nvlink_domain", "nvlink_domain_rackC"),
				resource.TestCheckResourceAttr(dsName, "nodes.5.gpus", "4"),
				resource.TestCheckResourceAttr(dsName, "nodes.5.resources.topo_rank", "6"),
				resource.TestCheckResourceAttr(dsName, "selected_node_ids.#", "0"),
				resource.TestCheckResourceAttr(dsName, "remaining_node_ids.#", "0"),
				resource.TestCheckNoResourceAttr(dsName, "node_resource_constraints"),
			),
		}},
	})
}

func TestAccClusterTopology_segmentSelection(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
data "ray_cluster_topology" "t" {
  segment_size  = 2
  num_nodes     = 4
  include_nodes = true
}
data "ray_cluster_topology" "inference" {
  segment_size     = 1
  num_nodes        = 1
  exclude_node_ids = data.ray_cluster_topology.t.selected_node_ids
  role             = "inference"
  include_nodes    = true
}`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(dsName, "selected_node_ids.#", "4"),
				resource.TestCheckResourceAttrPair(dsName, "selected_node_ids.0", dsName, "nodes.1.node_id"),
				resource.TestCheckResourceAttrPair(dsName, "selected_node_ids.1", dsName, "nodes.2.node_id"),
				resource.TestCheckResourceAttrPair(dsName, "selected_node_ids.2", dsName, "nodes.3.node_id"),
				resource.TestCheckResourceAttrPair(dsName, "selected_node_ids.3", dsName, "nodes.4.node_id"),
				resource.TestCheckResourceAttr(dsName, "remaining_node_ids.#", "2"),
				resource.TestCheckResourceAttr(dsName, "node_resource_constraints.#", "4"),
				resource.TestCheckResourceAttr(dsName, "node_resource_constraints.0.nvlink_domain_rackA", "0.001"),
				resource.TestCheckResourceAttr(dsName, "node_resource_constraints.1.nvlink_domain_rackA", "0.001"),
				resource.TestCheckResourceAttr(dsName, "node_resource_constraints.3.nvlink_domain_rackB", "0.001"),
				resource.TestMatchResourceAttr(dsName, "message", regexp.MustCompile(`4 training nodes in 2 NVLink domains`)),
				resource.TestCheckResourceAttr("data.ray_cluster_topology.inference", "nodes.#", "2"),
				resource.TestCheckResourceAttr("data.ray_cluster_topology.inference", "selected_node_ids.#", "1"),
				resource.TestCheckResourceAttrPair("data.ray_cluster_topology.inference", "selected_node_ids.0", dsName, "nodes.5.node_id"),
				resource.TestCheckResourceAttr("data.ray_cluster_topology.inference", "node_resource_constraints.0.nvlink_domain_rackC", "0.001"),
				resource.TestMatchResourceAttr("data.ray_cluster_topology.inference", "message", regexp.MustCompile(`inference`)),
			),
		}},
	})
}

func TestAccClusterTopology_infeasibleSegments(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      segmentConfig(2, 6),
				ExpectError: regexp.MustCompile(`(?s)cannot form 3 complete segments of 2 nodes.*nvlink_domain_rackC=1`),
			},
			{
				Config:      segmentConfig(2, 3),
				ExpectError: regexp.MustCompile(`num_nodes \(3\) must be divisible by segment_size \(2\)`),
			},
			{
				Config:      `data "ray_cluster_topology" "t" { segment_size = 2 }`,
				ExpectError: regexp.MustCompile(`num_nodes`),
			},
		},
	})
}

func TestAccClusterTopology_unreachableCluster(t *testing.T) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "ray" {
  address     = "http://127.0.0.1:1"
  max_retries = 0
}
data "ray_cluster_topology" "t" {}`,
			ExpectError: regexp.MustCompile(`(?s)No Ray dashboard answered at http://127.0.0.1:1.*ray start --head`),
		}},
	})
}

func segmentConfig(size, nodes int) string {
	return fmt.Sprintf(`
data "ray_cluster_topology" "t" {
  segment_size = %d
  num_nodes    = %d
}`, size, nodes)
}
