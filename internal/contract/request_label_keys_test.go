package contract

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
)

func TestRequestValidateRejectsBadLabelKeys(t *testing.T) {
	s := clusterspectest.SelectingSpec(1)
	s.Topology = clusterspec.TopologySource{RankLabel: "not a key"}
	if err := RequestFor(s, ActionCreate).Validate(); err == nil {
		t.Fatal("bad rank label key accepted")
	}
}
