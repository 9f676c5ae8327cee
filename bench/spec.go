package bench

import (
	"fmt"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// DriverSpec is the resource's own translation (contract.RequestFor); the
// tofu measurement cross-checks it against what the provider binary submits.
func DriverSpec(action, namespace string, spec clusterspec.Spec, ready time.Duration) contract.Request {
	spec.Namespace, spec.ReadyTimeout = namespace, ready
	return contract.RequestFor(spec, action)
}

// ReadyTimeout is the resource's default ready_timeout.
var ReadyTimeout = clusterspec.DefaultReadyTimeout

// GPUsPerNode matches the local test cluster's workers (the schema's
// num_gpus_per_node default is clusterspec.DefaultNumGPUsPerNode).
const GPUsPerNode = 4

// PerNodeGPUCluster is what
//
//	resource "ray_virtual_cluster" "x" {
//	  name                    = name
//	  bundle_ct_per_node_list = [1, 1, ...] # groups entries
//	  num_gpus_per_node       = 4
//	}
//
// means: one PACK group "<name>-node<i>" of one {"CPU": 1, "GPU": 1} bundle
// per logical node.
func PerNodeGPUCluster(name string, groups int) clusterspec.Spec {
	counts := make([]int, groups)
	for i := range counts {
		counts[i] = 1
	}
	return clusterspec.Spec{
		Name:                     name,
		BundleCtPerNode:          counts,
		UseGPUs:                  true,
		NumGPUsPerNode:           GPUsPerNode,
		MaxColocatedWorkerGroups: clusterspec.DefaultMaxColocatedWorkerGroups,
		Strategy:                 clusterspec.DefaultStrategy,
		Ports:                    clusterspec.DefaultPorts,
	}
}

// PerNodeCPUCluster is a use_gpus = false cluster with groups per-node groups
// of one bundle each (bundle {"CPU": 1}).
func PerNodeCPUCluster(name string, groups int) clusterspec.Spec {
	s := PerNodeGPUCluster(name, groups)
	s.UseGPUs = false
	return s
}

// PerNodeHCL renders the resource block that PerNodeGPUCluster or
// PerNodeCPUCluster describes.
func PerNodeHCL(label string, spec clusterspec.Spec) string {
	counts := ""
	for i, c := range spec.BundleCtPerNode {
		if i > 0 {
			counts += ", "
		}
		counts += fmt.Sprint(c)
	}
	return fmt.Sprintf(`resource "ray_virtual_cluster" %q {
  name                    = %q
  bundle_ct_per_node_list = [%s]
  use_gpus                = %t
  num_gpus_per_node       = %d
}
`, label, spec.Name, counts, spec.UseGPUs, spec.NumGPUsPerNode)
}
