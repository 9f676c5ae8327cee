package provider_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

const functionsHeader = `
terraform {
  required_providers {
    ray = { source = "registry.terraform.io/hashicorp/ray" }
  }
}
locals {
  topo = {
    n1 = { nvlink_domain = "nvlink_domain_A", topo_rank = 3 }
    n2 = { nvlink_domain = "nvlink_domain_A", topo_rank = 2 }
    n3 = { nvlink_domain = "nvlink_domain_B", topo_rank = 1 }
    n4 = { nvlink_domain = "unknown", topo_rank = -1 }
  }
}
`

// The functions are pure: they run at plan time without touching Ray.
func TestAccFunctions_pureTopologyMaths(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{{
			Config: functionsHeader + `
output "selected" {
  value = jsonencode(provider::ray::select_segment_nodes(local.topo, 1, 2))
}
output "prepared" {
  value = jsonencode(provider::ray::prepare_segment_topology(local.topo, 2, 2))
}
output "prepared_off" {
  value = jsonencode(provider::ray::prepare_segment_topology(local.topo, 0, 2))
}
output "sorted" {
  value = jsonencode(provider::ray::sort_bundles([
    { gpu_id = 1, nvlink_domain = "nvlink_domain_A", topo_rank = 3, node_id = "n1" },
    { gpu_id = 0, nvlink_domain = "nvlink_domain_A", topo_rank = 3, node_id = "n1" },
    { gpu_id = 0, nvlink_domain = "nvlink_domain_B", topo_rank = 1, node_id = "n3" },
  ], 0, 0))
}
output "sorted_no_topology" {
  value = jsonencode(provider::ray::sort_bundles([
    { gpu_id = 1, nvlink_domain = "unknown", topo_rank = -1, node_id = "b" },
    { gpu_id = 0, nvlink_domain = "unknown", topo_rank = -1, node_id = "b" },
    { gpu_id = 3, nvlink_domain = "unknown", topo_rank = -1, node_id = "a" },
  ], 0, 0))
}
output "trimmed" {
  value = jsonencode(provider::ray::sort_bundles([
    { gpu_id = 0, nvlink_domain = "nvlink_domain_A", topo_rank = 3, node_id = "n1" },
    { gpu_id = 0, nvlink_domain = "nvlink_domain_A", topo_rank = 2, node_id = "n2" },
    { gpu_id = 0, nvlink_domain = "nvlink_domain_B", topo_rank = 1, node_id = "n3" },
  ], 2, 1))
}
output "master_range" {
  value = "${provider::ray::port_ranges().master.low}-${provider::ray::port_ranges().master.high}"
}
output "vllm_engine_2" {
  value = "${provider::ray::vllm_engine_port_range(2).low}-${provider::ray::vllm_engine_port_range(2).high}"
}
`,
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckOutput("selected", `{"remaining":["n1","n4"],"selected":["n3","n2"]}`),
				resource.TestCheckOutput("prepared", `{"message":"Topology-aware allocation: 2 training nodes in 1 NVLink domains (segment_size=2)","node_resource_constraints":[{"nvlink_domain_A":0.001},{"nvlink_domain_A":0.001}],"remaining_node_ids":["n3","n4"],"selected_node_ids":["n2","n1"]}`),
				resource.TestCheckOutput("prepared_off", `{"message":"","node_resource_constraints":null,"remaining_node_ids":[],"selected_node_ids":[]}`),
				resource.TestCheckOutput("sorted", `[2,1,0]`),
				resource.TestCheckOutput("sorted_no_topology", `[2,1,0]`),
				resource.TestCheckOutput("trimmed", `[1,0]`),
				resource.TestCheckOutput("master_range", "1400-1999"),
				resource.TestCheckOutput("vllm_engine_2", "7200-7300"),
			),
		}},
	})
}

func TestAccFunctions_errors(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      functionsHeader + `output "x" { value = provider::ray::select_segment_nodes(local.topo, 2, 3) }`,
				ExpectError: regexp.MustCompile(`(?s)num_nodes.*must\s+be\s+divisible`),
			},
			{
				Config:      functionsHeader + `output "x" { value = provider::ray::select_segment_nodes(local.topo, 2, 4) }`,
				ExpectError: regexp.MustCompile(`(?s)cannot\s+form\s+2\s+complete\s+segments`),
			},
			{
				Config: functionsHeader + `output "x" {
  value = provider::ray::sort_bundles([{ gpu_id = 0, nvlink_domain = "a", topo_rank = 1, node_id = "n" }], 2, 0)
}`,
				ExpectError: regexp.MustCompile(`gpus_per_node`),
			},
		},
	})
}
