package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// LiveBundleCPU is what each stand-in bundle of the refresh benchmark
// reserves. The resource's own bundles reserve at least one CPU each
// (max_colocated_worker_groups >= 1), and 50 clusters of 3 such groups would
// need 150 CPUs; the refresh path does the same calls for any bundle shape.
const LiveBundleCPU = 0.01

// RefreshConfig configures the refresh/plan benchmark.
type RefreshConfig struct {
	Client           *Client
	Baseline         *Baseline // creates and removes the stand-in groups
	Address          string    // dashboard, for the proxy
	Tofu, Dir        string    // the tofu part is skipped without Tofu
	Clusters         []int
	GroupsPerCluster int
	Reps             int
	Prefix           string
	Log              io.Writer
}

// RefreshRow is one cluster count.
type RefreshRow struct {
	Clusters, Groups int
	// LiveInRay is how many live groups Ray lists (the one shared list).
	LiveInRay int
	// In-process, medians over the repetitions.
	RefreshCalls, PlanCalls int64
	Refresh, Plan           time.Duration
	Drifted                 int // clusters whose comparison reported drift
	// tofu plan through the counting proxy (zero without tofu).
	TofuPlan, TofuPlanNoRefresh     TofuStep
	TofuPlanCPU, TofuNoRefreshCPU   time.Duration // CLI + provider plugin
	TofuExit, TofuExitNoRefresh     int
	PlanPGCalls, PlanNodeCalls      int
	NoRefreshPGCalls, NoRefreshNode int
}

// RefreshResult is the whole benchmark.
type RefreshResult struct {
	Rows      []RefreshRow
	Steady    []SteadyRow // plans with no drift, against the stand-in
	TofuError string
}

type standIn struct {
	spec     clusterspec.Spec
	recorded map[string]string // group name -> id
}

// RunRefresh creates stand-in groups for each cluster count, then measures
// the resource's Read path and the plan's live check in-process, and a real
// `tofu plan` (with and without refresh) over a state file holding those
// clusters, through a counting proxy.
func RunRefresh(ctx context.Context, cfg RefreshConfig) (*RefreshResult, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	out := &RefreshResult{}
	var ws *Workspace
	var proxy *CountingProxy
	if cfg.Tofu != "" {
		var err error
		if ws, _, err = NewWorkspace(ctx, cfg.Tofu, cfg.Dir); err != nil {
			out.TofuError = err.Error()
		} else if proxy, err = StartProxy(cfg.Address); err != nil {
			out.TofuError = err.Error()
			ws = nil
		} else {
			defer proxy.Close()
		}
	} else {
		out.TofuError = "no OpenTofu binary"
	}
	for _, n := range cfg.Clusters {
		row, err := cfg.one(ctx, n, ws, proxy, logf)
		if err != nil {
			return out, err
		}
		out.Rows = append(out.Rows, row)
	}
	if ws != nil {
		logf("   steady-state plans against the stand-in: %v clusters", cfg.Clusters)
		var err error
		if out.Steady, err = RunSteadyPlans(ctx, ws, cfg.Clusters, cfg.GroupsPerCluster, cfg.Prefix); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (cfg *RefreshConfig) one(ctx context.Context, n int, ws *Workspace, proxy *CountingProxy, logf func(string, ...any)) (RefreshRow, error) {
	row := RefreshRow{Clusters: n, Groups: n * cfg.GroupsPerCluster}
	clusters, live, names := cfg.standIns(n)
	logf("   %d clusters: creating %d stand-in groups of {CPU: %g}", n, len(live), LiveBundleCPU)
	created, err := cfg.Baseline.Create(live)
	defer func() {
		if _, rerr := cfg.Baseline.Remove(names); rerr != nil {
			logf("   removing the stand-in groups failed: %v", rerr)
		}
	}()
	if err != nil {
		return row, err
	}
	for i := range clusters {
		for _, g := range clusters[i].spec.Groups() {
			clusters[i].recorded[g.Name] = created.IDs[g.Name]
		}
	}

	var refreshT, planT []time.Duration
	var refreshC, planC []int64
	for rep := 0; rep < max(1, cfg.Reps); rep++ {
		// A fresh LiveView per repetition is what a new CLI run (a new
		// provider process) starts with: the shared group list is empty.
		live := liveview.NewLiveView(cfg.Client.Client)
		before, start := cfg.Client.RequestCount(), time.Now()
		drifted := 0
		for _, c := range clusters { // what Read does for each cluster in state
			groups, err := live.Groups(ctx)
			if err != nil {
				return row, err
			}
			row.LiveInRay = len(groups)
			present, drift := CompareGroups(c.spec.Groups(), c.recorded, groups)
			if present != len(c.recorded) {
				return row, fmt.Errorf("cluster %s: %d of %d groups found", c.spec.Name, present, len(c.recorded))
			}
			if strings.Join(drift, "") != "" {
				drifted++
			}
		}
		refreshT, refreshC = append(refreshT, time.Since(start)), append(refreshC, cfg.Client.RequestCount()-before)
		row.Drifted = drifted

		before, start = cfg.Client.RequestCount(), time.Now()
		snap, err := live.Snapshot(ctx) // after refresh, as in `plan`: the node list only
		if err != nil {
			return row, err
		}
		for _, c := range clusters { // ModifyPlan's live check of a cluster being (re)created
			own := map[string]bool{}
			for _, g := range c.spec.Groups() {
				own[g.Name] = true
			}
			if err := planning.CheckSegments(c.spec, snap.Topology()); err != nil {
				return row, err
			}
			_ = topology.CheckPlacement(c.spec.Groups(), snap.Capacity(own))
		}
		planT, planC = append(planT, time.Since(start)), append(planC, cfg.Client.RequestCount()-before)
	}
	row.Refresh, row.Plan = Median(refreshT), Median(planT)
	row.RefreshCalls, row.PlanCalls = medianInt64(refreshC), medianInt64(planC)
	logf("   %d clusters in-process: refresh %d calls %sms, plan %d calls %sms", n, row.RefreshCalls, Ms(row.Refresh), row.PlanCalls, Ms(row.Plan))

	if ws != nil {
		if err := cfg.tofuPlan(ctx, &row, clusters, ws, proxy); err != nil {
			return row, err
		}
		logf("   %d clusters tofu plan: %ss, %d calls; -refresh=false: %ss, %d calls", n, Sec(row.TofuPlan.Wall),
			len(row.TofuPlan.Events), Sec(row.TofuPlanNoRefresh.Wall), len(row.TofuPlanNoRefresh.Events))
	}
	return row, nil
}

// standIns are n clusters of the configured size, with the stand-in groups
// of {CPU: LiveBundleCPU} bundles that play their live groups and the
// names of those groups.
func (cfg *RefreshConfig) standIns(n int) (clusters []standIn, live []contract.RequestGroup, names []string) {
	clusters = make([]standIn, n)
	for i := range clusters {
		spec := PerNodeCPUCluster(fmt.Sprintf("%s-r%02d-c%02d", cfg.Prefix, n, i), cfg.GroupsPerCluster)
		clusters[i] = standIn{spec: spec, recorded: map[string]string{}}
		for _, g := range spec.Groups() {
			bundles := make([]map[string]float64, len(g.Bundles))
			for j := range bundles {
				bundles[j] = map[string]float64{"CPU": LiveBundleCPU}
			}
			live = append(live, contract.RequestGroup{Name: g.Name, Strategy: g.Strategy, Bundles: bundles})
			names = append(names, g.Name)
		}
	}
	return clusters, live, names
}

func medianInt64(xs []int64) int64 {
	ds := make([]time.Duration, len(xs))
	for i, x := range xs {
		ds[i] = time.Duration(x)
	}
	return int64(Median(ds))
}

func (cfg *RefreshConfig) tofuPlan(ctx context.Context, row *RefreshRow, clusters []standIn, ws *Workspace, proxy *CountingProxy) error {
	state, err := StateFile(ctx, cfg.Client.Client, clusters)
	if err != nil {
		return err
	}
	hcl := clustersHCL(proxy.URL, fmt.Sprintf("%s-r%02d", cfg.Prefix, len(clusters)), clusters)
	dir, err := ws.Dir(fmt.Sprintf("refresh-%d", len(clusters)), map[string]string{"main.tf": hcl, "terraform.tfstate": state})
	if err != nil {
		return err
	}
	args := []string{"plan", "-no-color", "-lock=false", "-detailed-exitcode"}
	proxy.Take()
	wall, code, outText, err := ws.Run(ctx, dir, args...)
	if err != nil || (code == 1 && !onlyCapacityErrors(outText)) {
		return fmt.Errorf("tofu plan (%d clusters) exited %d (%v):\n%s", len(clusters), code, err, tail(outText, 40))
	}
	row.TofuPlan, row.TofuExit, row.TofuPlanCPU = step("tofu plan", wall, proxy.Take()), code, ws.LastCPU
	row.TofuPlan.Summary = Summary(outText)
	if code == 1 {
		row.TofuPlan.Summary = fmt.Sprintf("%d x %q", strings.Count(outText, "Error: "), capacityError)
	}
	row.PlanPGCalls = CountRoute(row.TofuPlan.Events, "GET /api/v0/placement_groups")
	row.PlanNodeCalls = CountRoute(row.TofuPlan.Events, "GET /api/v0/nodes")

	wall, code, outText, err = ws.Run(ctx, dir, append(args, "-refresh=false")...)
	if err != nil || code == 1 {
		return fmt.Errorf("tofu plan -refresh=false (%d clusters) exited %d (%v):\n%s", len(clusters), code, err, tail(outText, 40))
	}
	row.TofuPlanNoRefresh, row.TofuExitNoRefresh, row.TofuNoRefreshCPU = step("tofu plan -refresh=false", wall, proxy.Take()), code, ws.LastCPU
	row.TofuPlanNoRefresh.Summary = Summary(outText)
	row.NoRefreshPGCalls = CountRoute(row.TofuPlanNoRefresh.Events, "GET /api/v0/placement_groups")
	row.NoRefreshNode = CountRoute(row.TofuPlanNoRefresh.Events, "GET /api/v0/nodes")
	return nil
}

// capacityError starts the plan error of clusters Ray cannot hold. Refresh
// records every stand-in group as drifted (it reserves {CPU: 0.01}, the
// configuration {CPU: 1}), so each cluster is planned for replacement; the
// 24 CPUs of the shared local cluster cannot hold 10 or 50 such clusters
// (alone, or together). The plan then ends in this error after refreshing
// and planning every cluster, which is still what is measured.
const capacityError = "The Ray cluster cannot hold this virtual cluster"

func onlyCapacityErrors(out string) bool {
	n := strings.Count(out, "Error: ")
	return n > 0 && n == strings.Count(out, "Error: "+capacityError)
}

// clustersHCL declares the stand-in clusters as ray_virtual_cluster.c[i],
// named "<names>-c<i>", with the provider pointed at address.
func clustersHCL(address, names string, clusters []standIn) string {
	return ProviderHCL(address) + fmt.Sprintf(`
resource "ray_virtual_cluster" "c" {
  count                   = %d
  name                    = format("%s-c%%02d", count.index)
  bundle_ct_per_node_list = %s
  use_gpus                = false
  num_gpus_per_node       = %d
}
`, len(clusters), names, jsonList(clusters[0].spec.BundleCtPerNode), GPUsPerNode)
}

func jsonList(v any) string {
	raw, _ := json.Marshal(v)
	return strings.ReplaceAll(string(raw), ",", ", ")
}

// StateFile renders a Terraform state (format version 4) holding the stand-in
// clusters as ray_virtual_cluster.c[i], with every attribute the resource's
// Create would record (placement from Ray, ports made up).
func StateFile(ctx context.Context, c *rayclient.Client, clusters []standIn) (string, error) {
	live, err := liveview.ListLiveGroups(ctx, c)
	if err != nil {
		return "", err
	}
	nodes, err := liveview.ListAliveNodes(ctx, c)
	if err != nil {
		return "", err
	}
	nodeByID := map[string]raystate.Node{}
	for _, nd := range nodes {
		nodeByID[nd.NodeID] = nd
	}
	liveByName := map[string]raystate.PlacementGroup{}
	for _, g := range live {
		liveByName[g.Name] = g
	}
	var instances []map[string]any
	for i, cl := range clusters {
		spec := cl.spec
		var groups, bundles []map[string]any
		var indices []int
		var domains []string
		gi := 0
		for _, g := range spec.Groups() {
			lg := liveByName[g.Name]
			groups = append(groups, map[string]any{"name": g.Name, "id": cl.recorded[g.Name], "state": raystate.PlacementGroupStateCreated,
				"strategy": g.Strategy, "node_index": g.NodeIndex, "bundle_count": len(g.Bundles), "drift": ""})
			for bi := range g.Bundles {
				nodeID := ""
				if bi < len(lg.Bundles) {
					nodeID = lg.Bundles[bi].NodeID
				}
				domain, rank := topology.ParseNodeTopology(nodeByID[nodeID].ResourcesTotal)
				bundles = append(bundles, map[string]any{"rank": gi, "placement_group": g.Name, "bundle_index": bi,
					"global_index": gi, "node_id": nodeID, "node_ip": nodeByID[nodeID].NodeIP, "gpu_id": nil,
					"nvlink_domain": domain, "topo_rank": rank, "port": clusterspec.DefaultPorts.Low + gi})
				indices = append(indices, gi)
				domains = append(domains, domain)
				gi++
			}
		}
		attrs := map[string]any{
			"id": spec.Name, "name": spec.Name, "bundle_ct_per_node_list": spec.BundleCtPerNode,
			"use_gpus": spec.UseGPUs, "num_gpus_per_node": spec.NumGPUsPerNode,
			"max_colocated_worker_groups": spec.MaxColocatedWorkerGroups, "placement_group_strategy": spec.WithDefaults().Strategy,
			"use_unified_pg": spec.UseUnifiedPG, "segment_size": nil, "node_resource_constraints": nil,
			"port_range_low": spec.Ports.Low, "port_range_high": spec.Ports.High, "ready_timeout": clusterspec.DefaultReadyTimeoutText,
			"namespace": clusterspec.DefaultNamespace, "placement_groups": groups, "world_size": spec.WorldSize(),
			"node_count": spec.NodeCount(), "sorted_bundle_indices": indices, "bundles": bundles,
			"nvlink_domain_per_bundle": domains, "master_address": bundles[0]["node_ip"], "master_port": bundles[0]["port"],
			"timeouts": nil, "select_nodes": false, "pinning": clusterspec.DefaultPinning, "exclusive_nodes": false,
		}
		instances = append(instances, map[string]any{"index_key": i, "schema_version": 0, "attributes": attrs,
			"sensitive_attributes": []any{}})
	}
	var lineage [16]byte
	_, _ = rand.Read(lineage[:])
	l := hex.EncodeToString(lineage[:])
	state := map[string]any{
		"version": 4, "terraform_version": "1.10.6", "serial": 1,
		"lineage": l[:8] + "-" + l[8:12] + "-" + l[12:16] + "-" + l[16:20] + "-" + l[20:],
		"outputs": map[string]any{},
		"resources": []any{map[string]any{"mode": "managed", "type": "ray_virtual_cluster", "name": "c",
			"provider": `provider["registry.terraform.io/ray-infra/ray"]`, "instances": instances}},
		"check_results": nil,
	}
	raw, err := json.MarshalIndent(state, "", "  ")
	return string(raw), err
}

// PrintRefresh prints the refresh/plan tables.
func PrintRefresh(out io.Writer, r *RefreshResult) {
	if r == nil || len(r.Rows) == 0 {
		return
	}
	g := r.Rows[0].Groups / max(1, r.Rows[0].Clusters)
	fmt.Fprintf(out, "Clusters of %d per-node groups each (stand-in bundles {CPU: %g}, see bench/README.md).\n\n", g, LiveBundleCPU)
	fmt.Fprintln(out, "In-process, the resource's code path (median of the repetitions, a fresh liveview.LiveView each, as a new CLI run has): refresh = LiveView.Groups (one list shared by every Read of the process) + the drift comparison per cluster in state; plan = LiveView.Snapshot after that refresh (the node list; the group list is shared) + the segment and capacity checks per cluster. HTTP calls counted on the client (rayclienttest.Counter).")
	fmt.Fprintln(out)
	t := NewTable(out, "clusters", "groups", "live groups listed", "refresh calls", "calls/group", "refresh ms", "ms/cluster", "plan calls", "plan ms")
	for _, row := range r.Rows {
		t.Row(fmt.Sprint(row.Clusters), fmt.Sprint(row.Groups), fmt.Sprint(row.LiveInRay), fmt.Sprint(row.RefreshCalls),
			fmt.Sprintf("%.2f", float64(row.RefreshCalls)/float64(max(1, row.Groups))), Ms(row.Refresh),
			Ms(row.Refresh/time.Duration(max(1, row.Clusters))), fmt.Sprint(row.PlanCalls), Ms(row.Plan))
	}
	t.Flush()
	fmt.Fprintln(out)
	if r.Rows[0].TofuPlan.Wall == 0 {
		fmt.Fprintf(out, "tofu plan part skipped: %s\n\n", r.TofuError)
		return
	}
	fmt.Fprintln(out, "`tofu plan` over a state holding those clusters, provider address pointed at a counting proxy on loopback (every request the CLI's provider process sent):")
	fmt.Fprintln(out)
	t = NewTable(out, "clusters", "groups", "tofu plan s", "vs 1st row", "plan cpu s", "cpu vs 1st row", "GET placement_groups", "GET nodes", "all calls", "response MB", "-refresh=false s", "calls")
	ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.2fx", float64(a)/float64(max(1, b))) }
	for _, row := range r.Rows {
		t.Row(fmt.Sprint(row.Clusters), fmt.Sprint(row.Groups), Sec(row.TofuPlan.Wall), ratio(row.TofuPlan.Wall, r.Rows[0].TofuPlan.Wall),
			Sec(row.TofuPlanCPU), ratio(row.TofuPlanCPU, r.Rows[0].TofuPlanCPU), fmt.Sprint(row.PlanPGCalls),
			fmt.Sprint(row.PlanNodeCalls), fmt.Sprint(len(row.TofuPlan.Events)),
			fmt.Sprintf("%.2f", float64(TotalBytes(row.TofuPlan.Events))/1e6), Sec(row.TofuPlanNoRefresh.Wall),
			fmt.Sprint(len(row.TofuPlanNoRefresh.Events)))
	}
	t.Flush()
	fmt.Fprintln(out)
	last := r.Rows[len(r.Rows)-1]
	fmt.Fprintf(out, "%d clusters: plan calls %s; with -refresh=false %s. Plan result: %q (refresh records the stand-ins' bundle drift, so each cluster is planned for replacement; -refresh=false: %q).\n\n",
		last.Clusters, RouteCounts(last.TofuPlan.Events), RouteCounts(last.TofuPlanNoRefresh.Events),
		last.TofuPlan.Summary, last.TofuPlanNoRefresh.Summary)
	PrintSteady(out, r.Steady)
}
