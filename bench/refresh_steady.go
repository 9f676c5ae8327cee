package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// SteadyRow is one `tofu plan` of n clusters that match Ray exactly (no
// drift, "No changes"), against the stand-in dashboard serving their groups:
// the everyday plan, where refresh and the plan checks are all the work.
type SteadyRow struct {
	Clusters              int
	Wall, CPU             time.Duration
	NodeCalls, GroupCalls int64
	Summary               string
}

// steadyNodes is the stand-in's size: enough CPUs for 50 clusters of 3
// one-CPU bundles, so that nothing is short.
const steadyNodes = 16

// RunSteadyPlans plans each cluster count against a stand-in holding exactly
// the clusters' groups (bundles {CPU: 1} on stand-in nodes, state recorded
// from the same answers).
func RunSteadyPlans(ctx context.Context, ws *Workspace, counts []int, groupsPerCluster int, prefix string) ([]SteadyRow, error) {
	var rows []SteadyRow
	for _, n := range counts {
		nodes := standin.Generate(standin.NVL72(steadyNodes))
		st := standin.New(nodes)
		clusters := make([]standIn, n)
		var groups []standin.PlacementGroup
		for i := range clusters {
			spec := PerNodeCPUCluster(fmt.Sprintf("%s-s%02d-c%02d", prefix, n, i), groupsPerCluster)
			clusters[i] = standIn{spec: spec, recorded: map[string]string{}}
			for _, g := range spec.Groups() {
				id := fmt.Sprintf("%028x", len(groups)+1)
				pg := standin.PlacementGroup{PlacementGroupID: id, Name: g.Name, CreatorJobID: "01000000",
					State: rayclient.PlacementGroupStateCreated, IsDetached: true}
				for bi, b := range g.Bundles {
					pg.Bundles = append(pg.Bundles, rayclient.Bundle{PlacementGroupID: id, BundleIndex: bi,
						UnitResources: b, NodeID: nodes[1+len(groups)%(steadyNodes-1)].NodeID})
				}
				groups = append(groups, pg)
				clusters[i].recorded[g.Name] = id
			}
		}
		st.SetPlacementGroups(groups)
		row, err := steadyPlan(ctx, ws, st, clusters, prefix)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func steadyPlan(ctx context.Context, ws *Workspace, st *standin.Server, clusters []standIn, prefix string) (SteadyRow, error) {
	url, stop, err := serveLoopback(st)
	if err != nil {
		return SteadyRow{}, err
	}
	defer stop()
	client, err := NewClient(url)
	if err != nil {
		return SteadyRow{}, err
	}
	state, err := StateFile(ctx, client.Client, clusters)
	if err != nil {
		return SteadyRow{}, err
	}
	hcl := clustersHCL(url, fmt.Sprintf("%s-s%02d", prefix, len(clusters)), clusters)
	dir, err := ws.Dir(fmt.Sprintf("steady-%d", len(clusters)), map[string]string{"main.tf": hcl, "terraform.tfstate": state})
	if err != nil {
		return SteadyRow{}, err
	}
	n0, g0 := st.Requests(rayclient.PathNodes), st.Requests(rayclient.PathPlacementGroups)
	wall, code, out, err := ws.Run(ctx, dir, "plan", "-no-color", "-lock=false", "-detailed-exitcode")
	if err != nil || code != 0 {
		return SteadyRow{}, fmt.Errorf("steady plan of %d clusters exited %d (%v), want 0 (no changes):\n%s", len(clusters), code, err, tail(out, 40))
	}
	return SteadyRow{Clusters: len(clusters), Wall: wall, CPU: ws.LastCPU, Summary: Summary(out),
		NodeCalls: st.Requests(rayclient.PathNodes) - n0, GroupCalls: st.Requests(rayclient.PathPlacementGroups) - g0}, nil
}

// PrintSteady prints the steady-state plan table.
func PrintSteady(out io.Writer, rows []SteadyRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(out, "`tofu plan` of clusters that match Ray exactly, against the stand-in dashboard (%d nodes) serving their groups: refresh of every cluster, then the plan checks; the CLI's answer is %q.\n\n",
		steadyNodes, rows[len(rows)-1].Summary)
	ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(max(1, b))) }
	t := NewTable(out, "clusters", "tofu plan s", "vs 1st row", "plan cpu s", "cpu vs 1st row", "GET placement_groups", "GET nodes")
	wall, cpu := map[int]time.Duration{}, map[int]time.Duration{}
	for _, r := range rows {
		t.Row(fmt.Sprint(r.Clusters), Sec(r.Wall), ratio(r.Wall, rows[0].Wall), Sec(r.CPU), ratio(r.CPU, rows[0].CPU),
			fmt.Sprint(r.GroupCalls), fmt.Sprint(r.NodeCalls))
		wall[r.Clusters], cpu[r.Clusters] = r.Wall, r.CPU
	}
	t.Flush()
	fmt.Fprintln(out)
	PrintPlanScaleTarget(out, "steady state, \"No changes\"", wall, cpu)
}
