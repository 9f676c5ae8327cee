package resources_test

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

func TestAccParity_addressesAndPortsBatch(t *testing.T) {
	name := acctest.Name("ports")
	vcTest(t, name, resource.TestStep{
		Config: acctest.VirtualCluster{Name: name, Counts: []int{4, 4}, GPUsPerNode: 4, Unified: true, Strategy: "PACK",
			PortLow: 2100, PortHigh: 2110}.String(),
		ConfigStateChecks: []statecheck.StateCheck{
			portsUniquePerNode(vcName, 2100, 2110),
			sameAsBundle0("master_port", "port"),
			sameAsBundle0("master_address", "node_ip"),
		},
	})
}

func TestAccParity_driverEnvironment(t *testing.T) {
	name := acctest.Name("pyenv")
	vcTest(t, name, resource.TestStep{
		Config: acctest.HCL(
			acctest.Provider{PythonExecutable: "python3", RuntimeEnvJSON: `jsonencode({ env_vars = { RAYTF_ACCEPTANCE = "1" } })`},
			acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 4},
		),
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
	})
}

func TestAccParity_badPythonExecutable(t *testing.T) {
	name := acctest.Name("nopy")
	vcTest(t, name, resource.TestStep{
		Config:      acctest.HCL(acctest.Provider{PythonExecutable: "/nonexistent/python"}, acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 4}),
		ExpectError: regexp.MustCompile(`(?s)Cannot create the virtual cluster.*/nonexistent/python`),
	})
}

// shutdown() is idempotent: destroying a cluster whose groups were partly
// removed by hand succeeds and leaves nothing.
func TestAccParity_destroyAfterManualRemoval(t *testing.T) {
	name := acctest.Name("shut")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, GPUsPerNode: 4}.String()
	vcTest(t, name,
		resource.TestStep{Config: cfg},
		resource.TestStep{
			PreConfig: func() { acctest.RemoveGroupsOutOfBand(t, name+"-node0") },
			Config:    cfg,
			Destroy:   true,
		},
	)
}
