package resources_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// checkPortsUnique is get_available_addresses_and_ports_batch's promise: every
// bundle gets its node's address and a port in range, unique per node.
func checkPortsUnique(low, high int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		a := s.RootModule().Resources[vcName].Primary.Attributes
		n, _ := strconv.Atoi(a["bundles.#"])
		seen := map[string]int{}
		for i := 0; i < n; i++ {
			ip, port := a[fmt.Sprintf("bundles.%d.node_ip", i)], a[fmt.Sprintf("bundles.%d.port", i)]
			p, _ := strconv.Atoi(port)
			if ip == "" || p < low || p >= high {
				return fmt.Errorf("bundle %d: address %s:%s outside [%d, %d)", i, ip, port, low, high)
			}
			key := ip + ":" + port
			if j, dup := seen[key]; dup {
				return fmt.Errorf("bundles %d and %d were both given %s", j, i, key)
			}
			seen[key] = i
		}
		if n == 0 {
			return fmt.Errorf("no bundles")
		}
		return nil
	}
}

func TestAccParity_addressesAndPortsBatch(t *testing.T) {
	name := acctest.Name("ports")
	vcTest(t, name, resource.TestStep{
		Config: fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                     = %q
  bundle_ct_per_node_list  = [4, 4]
  num_gpus_per_node        = 4
  use_unified_pg           = true
  placement_group_strategy = "PACK"
  port_range_low           = 2100
  port_range_high          = 2110
}`, name),
		Check: resource.ComposeAggregateTestCheckFunc(
			checkPortsUnique(2100, 2110),
			resource.TestCheckResourceAttrPair(vcName, "master_port", vcName, "bundles.0.port"),
			resource.TestCheckResourceAttrPair(vcName, "master_address", vcName, "bundles.0.node_ip"),
		),
	})
}

func TestAccParity_driverEnvironment(t *testing.T) {
	name := acctest.Name("pyenv")
	vcTest(t, name, resource.TestStep{
		Config: fmt.Sprintf(`
provider "ray" {
  python_executable = "python3"
  runtime_env_json  = jsonencode({ env_vars = { RAYTF_ACCEPTANCE = "1" } })
}
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1]
  num_gpus_per_node       = 4
}`, name),
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
	})
}

func TestAccParity_badPythonExecutable(t *testing.T) {
	name := acctest.Name("nopy")
	vcTest(t, name, resource.TestStep{
		Config: fmt.Sprintf(`
provider "ray" {
  python_executable = "/nonexistent/python"
}
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1]
  num_gpus_per_node       = 4
}`, name),
		ExpectError: regexp.MustCompile(`(?s)Cannot create the virtual cluster.*/nonexistent/python`),
	})
}

// shutdown() is idempotent: destroying a cluster whose groups were partly
// removed by hand succeeds and leaves nothing.
func TestAccParity_destroyAfterManualRemoval(t *testing.T) {
	name := acctest.Name("shut")
	cfg := fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1, 1]
  num_gpus_per_node       = 4
}`, name)
	vcTest(t, name,
		resource.TestStep{Config: cfg},
		resource.TestStep{
			PreConfig: func() { acctest.RemoveGroupsOutOfBand(t, name+"-node0") },
			Config:    cfg,
			Destroy:   true,
		},
	)
}
