package resources

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

func TestTopologyLabelsSchema(t *testing.T) {
	s := resourceSchema(t)
	a, ok := s.Attributes[clusterspec.AttrTopologyLabels]
	if !ok || !a.IsOptional() || !a.IsComputed() {
		t.Fatalf("topology_labels must be optional and computed (the source in effect): %+v", a)
	}
	if !slices.Contains(replacingInSchema(t, s), clusterspec.AttrTopologyLabels) {
		t.Fatal("a change of topology_labels must replace the cluster")
	}
}

// planLabels runs the topology_labels part of ModifyPlan.
func planLabels(t *testing.T, provider *clusterspec.TopologySource, config, state types.Object, creating bool) (types.Object, bool) {
	t.Helper()
	plan := virtualClusterModel{TopologyLabels: config}
	resp := &resource.ModifyPlanResponse{}
	p := &planCall{r: &virtualClusterResource{data: &session.Session{TopologyLabels: provider}}, ctx: context.Background(),
		resp: resp, plan: &plan, state: virtualClusterModel{TopologyLabels: state}, creating: creating}
	p.planTopologyLabels(config)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	replaced := slices.ContainsFunc(resp.RequiresReplace, func(p path.Path) bool {
		return p.Equal(path.Root(clusterspec.AttrTopologyLabels))
	})
	if replaced != p.replacing {
		t.Fatalf("RequiresReplace %v but replacing %v", resp.RequiresReplace, p.replacing)
	}
	return plan.TopologyLabels, replaced
}

func TestPlanTopologyLabels(t *testing.T) {
	both := &clusterspec.TopologySource{DomainLabel: "raytf.io/nvlink-domain", RankLabel: "raytf.io/topo-rank"}
	rankOnly := &clusterspec.TopologySource{RankLabel: "raytf.io/topo-rank"}
	null := topologyLabelsObject(nil)
	empty := topologyLabelsObject(&clusterspec.TopologySource{}) // `topology_labels = {}`: the resources
	for _, tc := range []struct {
		name                   string
		provider               *clusterspec.TopologySource
		config, state, want    types.Object
		creating, wantReplaced bool
	}{
		{"create takes the provider's", both, null, null, topologyLabelsObject(both), true, false},
		{"create with its own", both, topologyLabelsObject(rankOnly), null, topologyLabelsObject(rankOnly), true, false},
		{"provider's, unchanged", both, null, topologyLabelsObject(both), topologyLabelsObject(both), false, false},
		{"own moved to the provider", both, null, topologyLabelsObject(both), topologyLabelsObject(both), false, false},
		{"provider's changed", rankOnly, null, topologyLabelsObject(both), topologyLabelsObject(rankOnly), false, true},
		{"provider's removed", nil, null, topologyLabelsObject(both), null, false, true},
		{"own replaces the provider's", both, topologyLabelsObject(rankOnly), topologyLabelsObject(both), topologyLabelsObject(rankOnly), false, true},
		{"{} overrides the provider's", both, empty, topologyLabelsObject(both), empty, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, replaced := planLabels(t, tc.provider, tc.config, tc.state, tc.creating)
			if !got.Equal(tc.want) || replaced != tc.wantReplaced {
				t.Fatalf("planned %v (replace %v), want %v (replace %v)", got, replaced, tc.want, tc.wantReplaced)
			}
		})
	}
}

func TestClusterSpecReadsTopologyLabels(t *testing.T) {
	ctx := context.Background()
	m := virtualClusterModel{
		Name:                types.StringValue("vc"),
		BundleCtPerNodeList: types.ListValueMust(types.Int64Type, nil),
		TopologyLabels:      topologyLabelsObject(&clusterspec.TopologySource{DomainLabel: "bad key"}),
	}
	spec, known, d := clusterSpec(ctx, m)
	if !known || d.HasError() || spec.Topology.DomainLabel != "bad key" {
		t.Fatalf("spec %+v known %v %v", spec.Topology, known, d)
	}
	var paths []string
	for _, is := range spec.Validate() {
		paths = append(paths, issuePath(is.Path).String())
	}
	if !slices.Contains(paths, "topology_labels.nvlink_domain") {
		t.Fatalf("a bad label key is reported at topology_labels.nvlink_domain: %v", paths)
	}
	m.TopologyLabels = types.ObjectUnknown(topologyLabelsType.AttrTypes)
	if _, known, _ := clusterSpec(ctx, m); known {
		t.Fatal("an unknown source must wait")
	}
}
