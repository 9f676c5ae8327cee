package clusterspec_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestGoneSelectedNodes(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.SelectedNodeIDs = []string{"a2", "a1"}
	if gone := s.GoneSelectedNodes(map[string]bool{"a1": true, "a2": true, "b0": true}); len(gone) != 0 {
		t.Fatalf("nothing gone: %v", gone)
	}
	if diff := cmp.Diff([]string{"a2"}, s.GoneSelectedNodes(map[string]bool{"a1": true})); diff != "" {
		t.Fatalf("a2 gone (-want +got):\n%s", diff)
	}
}

func TestSpecValidateSelection(t *testing.T) {
	s := clusterspectest.SelectingSpec(1, 1)
	s.NodeResourceConstraints = []topology.Resources{{}, {}}
	s.Pinning = "rack"
	issues := s.Validate()
	var paths []string
	for _, is := range issues {
		paths = append(paths, is.Path)
	}
	if !strings.Contains(strings.Join(paths, ","), clusterspec.AttrNodeResourceConstraints) || !strings.Contains(strings.Join(paths, ","), clusterspec.AttrPinning) {
		t.Fatalf("issues: %+v", issues)
	}
}
