package resources

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// readImported rebuilds the configuration attributes of an imported cluster
// from the groups Ray holds, then probes them like a create would. It returns
// false (with an error) when Ray has no group of that name.
func (r *virtualClusterResource) readImported(ctx context.Context, m *virtualClusterModel, diags *diag.Diagnostics) bool {
	name := m.Name.ValueString()
	live, err := ListLiveGroups(ctx, r.data.Client)
	if err != nil {
		diags.AddError("Cannot read placement groups for import", err.Error())
		return false
	}
	var counts []int64
	if !m.BundleCtPerNodeList.IsNull() {
		diags.Append(m.BundleCtPerNodeList.ElementsAs(ctx, &counts, false)...)
	}
	shape, ok := shapeFromGroups(name, live, counts)
	if !ok {
		diags.AddError("Nothing to import", fmt.Sprintf("Ray has no live placement group named %q or %q.",
			name+"-unified", name+"-node<i>"))
		return false
	}
	if shape.err != "" {
		diags.AddError("Cannot import the virtual cluster", shape.err)
		return false
	}
	m.ID = types.StringValue(name)
	m.BundleCtPerNodeList, _ = types.ListValueFrom(ctx, types.Int64Type, shape.counts)
	m.UseGPUs = types.BoolValue(shape.useGPUs)
	m.MaxColocatedWorkerGroups = types.Int64Value(shape.cpus)
	m.UseUnifiedPG = types.BoolValue(shape.unified)
	m.PlacementGroupStrategy = types.StringValue(defaultStrategy)
	m.NumGPUsPerNode = types.Int64Value(defaultNumGPUsPerNode)
	m.PortRangeLow = types.Int64Value(topology.DefaultMasterPortRangeLow)
	m.PortRangeHigh = types.Int64Value(topology.DefaultMasterPortRangeHigh)
	m.ReadyTimeout = types.StringValue(defaultReadyTimeout)
	m.SegmentSize = types.Int64Null()
	m.NodeResourceConstraints = constraintsValue(shape.constraints, diags)
	spec, _, d := clusterSpec(ctx, *m)
	diags.Append(d...)
	if diags.HasError() {
		return false
	}
	res, err := r.runDriver(ctx, "inspect", spec, readyTimeout(*m))
	if err != nil {
		diags.AddError("Cannot probe the imported placement groups", err.Error())
		return false
	}
	if shape.unified && len(res.Groups) == 1 && res.Groups[0].Strategy != "" {
		m.PlacementGroupStrategy = types.StringValue(res.Groups[0].Strategy)
	}
	diags.Append(applyResult(m, spec, res)...)
	return !diags.HasError()
}

type importedShape struct {
	counts      []int64
	useGPUs     bool
	cpus        int64
	unified     bool
	constraints []map[string]float64 // nil when no node has one
	err         string
}

// shapeFromGroups infers the cluster shape from its live groups. counts, when
// given, splits a unified group's bundles into logical nodes.
func shapeFromGroups(name string, live []rayclient.PlacementGroup, counts []int64) (importedShape, bool) {
	var s importedShape
	perNode := map[int][]rayclient.Bundle{}
	var unified []rayclient.Bundle
	found := false
	nodeGroup := regexp.MustCompile("^" + regexp.QuoteMeta(name) + `-node(\d+)$`)
	for _, g := range live {
		switch {
		case g.Name == name+"-unified":
			unified, s.unified, found = g.Bundles, true, true
		case nodeGroup.MatchString(g.Name):
			if i, err := strconv.Atoi(nodeGroup.FindStringSubmatch(g.Name)[1]); err == nil && i < maxBundleListLength {
				perNode[i], found = g.Bundles, true
			}
		}
	}
	if !found {
		return s, false
	}
	var nodes [][]rayclient.Bundle
	if s.unified {
		if len(counts) == 0 {
			counts = []int64{int64(len(unified))}
		}
		total := int64(0)
		for _, c := range counts {
			total += c
		}
		if total != int64(len(unified)) {
			s.err = fmt.Sprintf("the import id splits %d bundles but %s-unified has %d", total, name, len(unified))
			return s, true
		}
		at := 0
		for _, c := range counts {
			nodes = append(nodes, unified[at:at+int(c)])
			at += int(c)
		}
		s.counts = counts
	} else {
		idx := make([]int, 0, len(perNode))
		for i := range perNode {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		nodes = make([][]rayclient.Bundle, idx[len(idx)-1]+1)
		for _, i := range idx {
			nodes[i] = perNode[i]
		}
		for _, n := range nodes {
			s.counts = append(s.counts, int64(len(n)))
		}
	}
	s.cpus = 1
	anyConstraint := false
	s.constraints = make([]map[string]float64, len(nodes))
	for i, n := range nodes {
		s.constraints[i] = map[string]float64{}
		if len(n) == 0 {
			continue
		}
		res := n[0].UnitResources
		s.useGPUs = s.useGPUs || res["GPU"] > 0
		if res["CPU"] >= 1 {
			s.cpus = int64(res["CPU"])
		}
		for k, v := range res {
			if k != "CPU" && k != "GPU" {
				s.constraints[i][k] = v
				anyConstraint = true
			}
		}
	}
	if !anyConstraint {
		s.constraints = nil
	}
	return s, true
}

func constraintsValue(c []map[string]float64, diags *diag.Diagnostics) types.List {
	if c == nil {
		return types.ListNull(constraintType)
	}
	elems := make([]attr.Value, len(c))
	for i, m := range c {
		v, d := types.MapValueFrom(context.Background(), types.Float64Type, m)
		diags.Append(d...)
		elems[i] = v
	}
	return mustList(constraintType, elems, diags)
}
