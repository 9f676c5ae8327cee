package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// SteadyRow is one `tofu plan` of n clusters that match Ray exactly (no
// drift, "No changes"), against the stand-in dashboard serving their groups:
// the everyday plan, where refresh and the plan checks are all the work.
type SteadyRow struct {
	Clusters              int
	Reps                  int
	Wall, CPU             time.Duration // medians of the repetitions
	NodeCalls, GroupCalls int64
	Summary               string
	// FloorWall and FloorCPU are the CLI's own floor (medians): a plan of
	// as many built-in terraform_data resources, each holding the values
	// of one cluster's state, so no provider plugin runs at all.
	FloorWall, FloorCPU time.Duration
}

// steadyReps is how many plans of each size are timed, the provider's and
// the CLI floor's alternating: one sample of a sub-second plan is noise.
const steadyReps = 3

// steadyNodes is the stand-in's size: enough CPUs for 50 clusters of 3
// one-CPU bundles, so that nothing is short.
const steadyNodes = 16

// RunSteadyPlans plans each cluster count against a stand-in holding exactly
// the clusters' groups (bundles {CPU: 1} on stand-in nodes, state recorded
// from the same answers).
func RunSteadyPlans(ctx context.Context, ws *Workspace, counts []int, groupsPerCluster int, prefix string) ([]SteadyRow, error) {
	var rows []SteadyRow
	for _, n := range counts {
		st, clusters := steadyStandIn(n, groupsPerCluster, prefix)
		row, err := steadyPlan(ctx, ws, st, clusters, prefix)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// steadyStandIn is a stand-in dashboard of steadyNodes nodes holding
// exactly the groups of n clusters (bundles {CPU: 1}), and those clusters
// with the ids it serves.
func steadyStandIn(n, groupsPerCluster int, prefix string) (*standin.Server, []standIn) {
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
				State: raystate.PlacementGroupStateCreated, IsDetached: true}
			for bi, b := range g.Bundles {
				pg.Bundles = append(pg.Bundles, raystate.Bundle{PlacementGroupID: id, BundleIndex: bi,
					UnitResources: b, NodeID: nodes[1+len(groups)%(steadyNodes-1)].NodeID})
			}
			groups = append(groups, pg)
			clusters[i].recorded[g.Name] = id
		}
	}
	st.SetPlacementGroups(groups)
	return st, clusters
}

func steadyPlan(ctx context.Context, ws *Workspace, st *standin.Server, clusters []standIn, prefix string) (SteadyRow, error) {
	url, stop, err := serveLoopback(st)
	if err != nil {
		return SteadyRow{}, err
	}
	defer stop()
	dir, floorDir, err := steadyDirs(ctx, ws, url, clusters, prefix, fmt.Sprintf("steady-%d", len(clusters)))
	if err != nil {
		return SteadyRow{}, err
	}
	row := SteadyRow{Clusters: len(clusters), Reps: steadyReps}
	var wall, cpu, floorWall, floorCPU []time.Duration
	for range steadyReps {
		n0, g0 := st.Requests(rayclient.PathNodes), st.Requests(rayclient.PathPlacementGroups)
		w, cpuUsed, out, err := noChangesPlan(ctx, ws, dir)
		if err != nil {
			return SteadyRow{}, fmt.Errorf("steady plan of %d clusters: %w", len(clusters), err)
		}
		wall, cpu = append(wall, w), append(cpu, cpuUsed)
		row.Summary = Summary(out)
		row.NodeCalls, row.GroupCalls = st.Requests(rayclient.PathNodes)-n0, st.Requests(rayclient.PathPlacementGroups)-g0
		if w, cpuUsed, _, err = noChangesPlan(ctx, ws, floorDir); err != nil {
			return SteadyRow{}, fmt.Errorf("CLI floor plan of %d terraform_data: %w", len(clusters), err)
		}
		floorWall, floorCPU = append(floorWall, w), append(floorCPU, cpuUsed)
	}
	row.Wall, row.CPU, row.FloorWall, row.FloorCPU = Median(wall), Median(cpu), Median(floorWall), Median(floorCPU)
	return row, nil
}

// steadyDirs writes, for clusters served by the stand-in at url, a working
// directory (name dirName) whose configuration and state match Ray exactly
// (a steady plan finds nothing to do) and the CLI floor's directory of as
// many terraform_data holding the same state values.
func steadyDirs(ctx context.Context, ws *Workspace, url string, clusters []standIn, prefix, dirName string) (dir, floorDir string, err error) {
	client, err := NewClient(url)
	if err != nil {
		return "", "", err
	}
	state, err := StateFile(ctx, client.Client, clusters)
	if err != nil {
		return "", "", err
	}
	hcl := clustersHCL(url, fmt.Sprintf("%s-s%02d", prefix, len(clusters)), clusters)
	if dir, err = ws.Dir(dirName, map[string]string{"main.tf": hcl, "terraform.tfstate": state}); err != nil {
		return "", "", err
	}
	floorDir, err = cliFloorDir(ctx, ws, state)
	return dir, floorDir, err
}

// noChangesPlan runs one plan in dir that must find nothing to do.
func noChangesPlan(ctx context.Context, ws *Workspace, dir string, extra ...string) (time.Duration, time.Duration, string, error) {
	wall, code, out, err := ws.Run(ctx, dir, append([]string{"plan", "-no-color", "-lock=false", "-detailed-exitcode"}, extra...)...)
	if err != nil || code != 0 {
		return 0, 0, out, fmt.Errorf("exited %d (%v), want 0 (no changes):\n%s", code, err, tail(out, 40))
	}
	return wall, ws.LastCPU, out, nil
}

// cliFloorDir writes and applies a configuration of the CLI's built-in
// terraform_data, one per instance of state, whose triggers_replace is that
// instance's attributes (stored once; input would be stored twice, as input
// and output): the CLI decodes, evaluates and compares the same values as in
// the provider's plan, with no plugin. It returns the workspace directory.
func cliFloorDir(ctx context.Context, ws *Workspace, state string) (string, error) {
	var parsed struct {
		Resources []struct {
			Instances []struct {
				Attributes json.RawMessage `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(state), &parsed); err != nil || len(parsed.Resources) != 1 {
		return "", fmt.Errorf("CLI floor: reading the generated state: %v", err)
	}
	instances := parsed.Resources[0].Instances
	files := map[string]string{"main.tf": fmt.Sprintf(`
resource "terraform_data" "c" {
  count            = %d
  triggers_replace = jsondecode(file(format("%%s/c%%d.json", path.module, count.index)))
}
`, len(instances))}
	for i, inst := range instances {
		files[fmt.Sprintf("c%d.json", i)] = string(inst.Attributes)
	}
	dir, err := ws.Dir(fmt.Sprintf("steady-floor-%d", len(instances)), files)
	if err != nil {
		return "", err
	}
	if _, code, out, err := ws.Run(ctx, dir, "apply", "-no-color", "-lock=false", "-auto-approve"); err != nil || code != 0 {
		return "", fmt.Errorf("CLI floor apply exited %d (%v):\n%s", code, err, tail(out, 40))
	}
	return dir, nil
}

// PrintSteady prints the steady-state plan table.
func PrintSteady(out io.Writer, rows []SteadyRow) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(out, "`tofu plan` of clusters that match Ray exactly, against the stand-in dashboard (%d nodes) serving their groups: refresh of every cluster, then the plan checks; the CLI's answer is %q.\n\n",
		steadyNodes, rows[len(rows)-1].Summary)
	ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(max(1, b))) }
	t := NewTable(out, "clusters", "reps", "tofu plan s", "vs 1st row", "plan cpu s", "cpu vs 1st row", "GET placement_groups", "GET nodes",
		"CLI floor s", "floor vs 1st row", "floor cpu s")
	wall, cpu, floor := map[int]time.Duration{}, map[int]time.Duration{}, map[int]time.Duration{}
	for _, r := range rows {
		t.Row(fmt.Sprint(r.Clusters), fmt.Sprint(r.Reps), Sec(r.Wall), ratio(r.Wall, rows[0].Wall), Sec(r.CPU), ratio(r.CPU, rows[0].CPU),
			fmt.Sprint(r.GroupCalls), fmt.Sprint(r.NodeCalls), Sec(r.FloorWall), ratio(r.FloorWall, rows[0].Wall), Sec(r.FloorCPU))
		wall[r.Clusters], cpu[r.Clusters], floor[r.Clusters] = r.Wall, r.CPU, r.FloorWall
	}
	t.Flush()
	fmt.Fprintln(out, "\n(CLI floor = the same CLI planning as many built-in `terraform_data` resources, each holding one cluster's state values once (`triggers_replace`): no plugin; \"floor vs 1st row\" is against the provider's plan of the first row.)")
	fmt.Fprintln(out)
	PrintPlanScaleTarget(out, "steady state, \"No changes\"", wall, cpu)
	PrintPlanScaleFloor(out, wall, floor)
}
