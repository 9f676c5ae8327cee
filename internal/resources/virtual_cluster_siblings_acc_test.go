package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// One configuration declares more select_nodes clusters than the best node
// or segment holds (three of two GPUs pinned to their nodes, two whole
// 4-GPU nodes pinned to their domain) beside a cluster Ray places, with no
// exclude_node_ids chain: the plan chooses for each in turn, every cluster
// lands on GPUs its node holds (Ray's own list: no node above its four,
// no GPU given twice), and the next plan is empty.
func TestAccReservations_siblingsWithoutExcludeChain(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	prefix := acctest.Name("sib")
	var blocks []fmt.Stringer
	var labels []string
	add := func(label string, c acctest.VirtualCluster) {
		c.Label, c.Name, c.ReadyTimeout = label, prefix+"-"+label, "60s"
		c.PortLow, c.PortHigh = 1700+100*len(labels), 1790+100*len(labels)
		blocks, labels = append(blocks, c), append(labels, label)
	}
	for i := range 3 {
		add(fmt.Sprintf("node%d", i), acctest.VirtualCluster{Counts: []int{2}, GPUsPerNode: 2, SelectNodes: true, Pinning: "node"})
	}
	for i := range 2 {
		add(fmt.Sprintf("domain%d", i), acctest.VirtualCluster{Counts: []int{4}, GPUsPerNode: 4, SelectNodes: true, Pinning: "domain"})
	}
	add("placed", acctest.VirtualCluster{Counts: []int{2}, GPUsPerNode: 2})
	config := acctest.HCL(append(blocks, gpusOutput(labels...))...)
	vcTest(t, prefix, resource.TestStep{
		Config: config,
		Check: resource.ComposeAggregateTestCheckFunc(
			func(*terraform.State) error {
				perNode := groupGPUsPerNode(t, prefix)
				total := 0.0
				for node, gpus := range perNode {
					if gpus > 4 {
						return fmt.Errorf("node %s holds %g GPUs of the clusters, more than its 4", node, gpus)
					}
					total += gpus
				}
				if total != 16 {
					return fmt.Errorf("the clusters hold %g GPUs in Ray (%v); want 16", total, perNode)
				}
				return nil
			},
			func(s *terraform.State) error {
				var gpus []string
				for _, l := range labels {
					r := s.RootModule().Resources["ray_virtual_cluster."+l]
					for i := 0; i < len(r.Primary.Attributes); i++ {
						node, ok := r.Primary.Attributes[fmt.Sprintf("bundles.%d.node_id", i)]
						if !ok {
							break
						}
						gpus = append(gpus, node+"/"+r.Primary.Attributes[fmt.Sprintf("bundles.%d.gpu_id", i)])
					}
				}
				if len(gpus) != 16 {
					return fmt.Errorf("state has %d bundles; want 16", len(gpus))
				}
				checkNoGPUTwice(t, gpus)
				return nil
			},
		),
	})
}
