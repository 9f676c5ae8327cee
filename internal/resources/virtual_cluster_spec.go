package resources

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// clusterSpec converts the Terraform model into the pure cluster shape.
// known is false while any value it needs is unknown (e.g. constraints that
// come from a data source not read yet).
func clusterSpec(ctx context.Context, m virtualClusterModel) (spec topology.ClusterSpec, known bool, diags diag.Diagnostics) {
	for _, v := range []interface{ IsUnknown() bool }{m.Name, m.BundleCtPerNodeList, m.UseGPUs, m.NumGPUsPerNode,
		m.MaxColocatedWorkerGroups, m.PlacementGroupStrategy, m.UseUnifiedPG, m.SegmentSize,
		m.NodeResourceConstraints, m.PortRangeLow, m.PortRangeHigh} {
		if v.IsUnknown() {
			return spec, false, diags
		}
	}
	var counts []types.Int64
	diags.Append(m.BundleCtPerNodeList.ElementsAs(ctx, &counts, false)...)
	for _, c := range counts {
		if c.IsNull() || c.IsUnknown() { // nulls are reported by the attribute's validator
			return spec, false, diags
		}
		spec.BundleCtPerNode = append(spec.BundleCtPerNode, int(c.ValueInt64()))
	}
	if !m.NodeResourceConstraints.IsNull() {
		var raw []types.Map
		diags.Append(m.NodeResourceConstraints.ElementsAs(ctx, &raw, false)...)
		spec.NodeResourceConstraints = make([]topology.Resources, len(raw))
		for i, mv := range raw {
			if mv.IsUnknown() || mv.IsNull() {
				return spec, false, diags
			}
			res := topology.Resources{}
			diags.Append(mv.ElementsAs(ctx, &res, false)...)
			spec.NodeResourceConstraints[i] = res
		}
	}
	spec.Name = m.Name.ValueString()
	spec.UseGPUs = boolOr(m.UseGPUs, true)
	spec.NumGPUsPerNode = int(int64Or(m.NumGPUsPerNode, defaultNumGPUsPerNode))
	spec.MaxColocatedWorkerGroups = int(int64Or(m.MaxColocatedWorkerGroups, defaultMaxColocated))
	spec.Strategy = m.PlacementGroupStrategy.ValueString()
	if spec.Strategy == "" {
		spec.Strategy = defaultStrategy
	}
	spec.UseUnifiedPG = m.UseUnifiedPG.ValueBool()
	if !m.SegmentSize.IsNull() {
		s := int(m.SegmentSize.ValueInt64())
		spec.SegmentSize = &s
	}
	spec.Ports = topology.PortRange{
		Low:  int(int64Or(m.PortRangeLow, topology.DefaultMasterPortRangeLow)),
		High: int(int64Or(m.PortRangeHigh, topology.DefaultMasterPortRangeHigh)),
	}
	return spec, !diags.HasError(), diags
}

func readyTimeout(m virtualClusterModel) time.Duration {
	if d, err := time.ParseDuration(m.ReadyTimeout.ValueString()); err == nil && d > 0 {
		return d
	}
	d, _ := time.ParseDuration(defaultReadyTimeout)
	return d
}

func boolOr(v types.Bool, def bool) bool {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueBool()
}

func int64Or(v types.Int64, def int64) int64 {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	return v.ValueInt64()
}

// groupNames lists the placement-group names a spec owns.
func groupNames(spec topology.ClusterSpec) map[string]bool {
	names := map[string]bool{}
	for _, g := range spec.Groups() {
		names[g.Name] = true
	}
	return names
}
