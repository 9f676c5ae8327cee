package session

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// AdoptProblem says why no ray_virtual_cluster can adopt the groups of c,
// which have no record of this provider ("" when import can adopt them as
// they are): a name that is not a cluster's, or a shape the resource's
// arguments cannot declare, so an import would misstate the groups.
func AdoptProblem(c ListCandidate) string {
	if !c.Cluster {
		return fmt.Sprintf("its name is not a virtual cluster's: ray_virtual_cluster finds its groups by the names %q and %q, "+
			"and Ray cannot rename a placement group", clusterspec.UnifiedGroupName("<name>"), "<name>-node<i>")
	}
	unified, nodes := false, map[int]bool{}
	for _, g := range c.Groups {
		if g.Name == clusterspec.UnifiedGroupName(c.Name) {
			unified = true
		} else if i, err := strconv.Atoi(strings.TrimPrefix(g.Name, c.Name+"-node")); err == nil {
			nodes[i] = true
		}
	}
	if unified && len(nodes) > 0 {
		return fmt.Sprintf("both %q and %q groups exist, and a virtual cluster has one or the other", clusterspec.UnifiedGroupName(c.Name), c.Name+"-node<i>")
	}
	for i := range len(nodes) {
		if !nodes[i] {
			return fmt.Sprintf("its node groups leave out %q: a virtual cluster numbers its logical nodes from 0 without gaps", clusterspec.NodeGroupName(c.Name, i))
		}
	}
	return shapeProblem(c.Groups)
}

// shapeProblem says why no ray_virtual_cluster with one logical node per
// group declares groups' bundles ("" when one does).
func shapeProblem(groups []raystate.PlacementGroup) string {
	var first map[string]float64
	for _, g := range groups {
		if !g.IsDetached {
			return fmt.Sprintf("%q is not detached: it ends with the job that made it, while a virtual cluster's groups are detached", g.Name)
		}
		for _, b := range g.Bundles {
			if !maps.Equal(b.UnitResources, g.Bundles[0].UnitResources) {
				return fmt.Sprintf("the bundles of %q differ (%s and %s), while a virtual cluster gives every bundle of a logical node the same resources",
					g.Name, resourceText(g.Bundles[0].UnitResources), resourceText(b.UnitResources))
			}
		}
		if len(g.Bundles) == 0 {
			continue
		}
		res := g.Bundles[0].UnitResources
		if gpu := res["GPU"]; gpu != 0 && gpu != 1 {
			return fmt.Sprintf("the bundles of %q ask for %g GPUs, while a virtual cluster's bundle holds one GPU or none", g.Name, gpu)
		}
		if cpu := res["CPU"]; cpu < 1 || cpu != math.Trunc(cpu) {
			return fmt.Sprintf("the bundles of %q ask for %g CPUs, while max_colocated_worker_groups gives each bundle a whole number of CPUs, at least 1", g.Name, cpu)
		}
		if first == nil {
			first = res
			continue
		}
		if (first["GPU"] > 0) != (res["GPU"] > 0) {
			return "some of its groups hold GPUs and others do not, while use_gpus is the whole cluster's"
		}
		if first["CPU"] != res["CPU"] {
			return "its groups' bundles ask for different numbers of CPUs, while max_colocated_worker_groups is the whole cluster's"
		}
	}
	return ""
}

// NotAClusterDetail describes placement groups no virtual cluster can adopt:
// why, their shape, and the shape a ray_virtual_cluster would declare.
func NotAClusterDetail(c ListCandidate, ns, problem string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ray namespace %q holds placement groups without a record of this provider that no ray_virtual_cluster can adopt: %s.\n\n",
		ns, problem)
	b.WriteString("Their shape (Ray's state API does not report a group's strategy):\n")
	for _, g := range c.Groups {
		fmt.Fprintf(&b, "  - %q: %s, %s, %s\n", g.Name, g.State, map[bool]string{true: "detached", false: "not detached"}[g.IsDetached],
			bundlesText(g.Bundles))
	}
	if why := shapeProblem(c.Groups); why != "" {
		b.WriteString("\nNo ray_virtual_cluster has this shape either: " + why + ".\n")
	} else {
		b.WriteString("\nA ray_virtual_cluster of the same shape (one logical node per group) declares:\n" + shapeHint(c.Groups))
	}
	b.WriteString("\nTerraform cannot import them. To hand this capacity to Terraform, declare such a cluster under a new name, " +
		"move the workload to it, and remove these groups with ray.util.remove_placement_group.")
	return b.String()
}

// shapeHint is the arguments of a ray_virtual_cluster with one logical node
// per group of groups, whose shape fits one (shapeProblem is "").
func shapeHint(groups []raystate.PlacementGroup) string {
	counts := make([]string, len(groups))
	var constraints []string
	useGPUs, cpu, anyConstraint := false, 0.0, false
	for i, g := range groups {
		counts[i] = strconv.Itoa(len(g.Bundles))
		extra := map[string]float64{}
		if len(g.Bundles) > 0 {
			res := g.Bundles[0].UnitResources
			useGPUs = useGPUs || res["GPU"] > 0
			cpu = max(cpu, res["CPU"])
			for k, v := range res {
				if k != "CPU" && k != "GPU" {
					extra[k] = v
					anyConstraint = true
				}
			}
		}
		constraints = append(constraints, resourceText(extra))
	}
	hint := fmt.Sprintf("  bundle_ct_per_node_list     = [%s]\n  use_gpus                    = %t\n", strings.Join(counts, ", "), useGPUs)
	if cpu >= 1 {
		hint += fmt.Sprintf("  max_colocated_worker_groups = %d\n", int(cpu))
	}
	if anyConstraint {
		hint += fmt.Sprintf("  node_resource_constraints   = [%s]\n", strings.Join(constraints, ", "))
	}
	return hint
}

// bundlesText summarizes a group's bundles: "2 bundles of {CPU = 1, GPU = 1}".
func bundlesText(bundles []raystate.Bundle) string {
	if len(bundles) == 0 {
		return "no bundles"
	}
	var parts []string
	for i := 0; i < len(bundles); {
		j := i
		for j < len(bundles) && maps.Equal(bundles[j].UnitResources, bundles[i].UnitResources) {
			j++
		}
		noun := "bundles"
		if j-i == 1 {
			noun = "bundle"
		}
		parts = append(parts, fmt.Sprintf("%d %s of %s", j-i, noun, resourceText(bundles[i].UnitResources)))
		i = j
	}
	return strings.Join(parts, ", ")
}

// resourceText writes resources as an HCL object: {CPU = 1, GPU = 1}.
func resourceText(res map[string]float64) string {
	parts := make([]string, 0, len(res))
	for _, k := range slices.Sorted(maps.Keys(res)) {
		parts = append(parts, fmt.Sprintf("%s = %g", k, res[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
