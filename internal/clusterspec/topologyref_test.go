package clusterspec_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
	"github.com/ray-infra/terraform-provider-ray/internal/topology/topologyref"
)

// topologyref (below clusterspec, so it cannot call Spec.Groups) spells out the
// provider's per-node request; it must stay the request Spec.Groups builds.
func TestTopologyRefRequestsAreTheProvidersOwn(t *testing.T) {
	constraints := []map[string]float64{{"nvl_rack0000": 0.001}, {"nvl_rack0001": 0.001, "zero": 0}, {}}
	counts := []int{topologyref.GPUsPerNode, topologyref.GPUsPerNode, topologyref.GPUsPerNode}
	spec := clusterspec.Spec{Name: "ref", BundleCtPerNode: counts, UseGPUs: true, NumGPUsPerNode: topologyref.GPUsPerNode,
		MaxColocatedWorkerGroups: 1, Strategy: clusterspec.DefaultStrategy, NodeResourceConstraints: []topology.Resources{constraints[0], constraints[1], constraints[2]}}
	if diff := cmp.Diff(spec.Groups(), topologyref.Requests(constraints)); diff != "" {
		t.Errorf("topologyref.Requests (-want +got):\n%s", diff)
	}
}
