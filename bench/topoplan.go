package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// TopologyDataSource is the ray_cluster_topology type name.
const TopologyDataSource = "ray_cluster_topology"

// TopoPlanCase is one data-source configuration measured at one size.
type TopoPlanCase struct {
	// Label names the case in the table.
	Label string
	// HCL is the body of `data "ray_cluster_topology" "t" { ... }`.
	HCL string
	// Args are the same arguments for the in-process read.
	Args map[string]tftypes.Value
}

// TopoPlanSample is one measurement of one case.
type TopoPlanSample struct {
	// HTTP is Version + the alive-node list, decoded (rayclient against the stand-in).
	HTTP time.Duration
	// Read is the provider's whole ReadDataSource (RPC decode, Read, values,
	// State.Set, msgpack encode), in process.
	Read time.Duration
	// Encode is a msgpack encode of the returned state alone (part of Read).
	Encode time.Duration
	// StateBytes is the size of the msgpack state the provider returns.
	StateBytes int
	// Plan is the wall time of `terraform plan`; Floor is a plan of the
	// same workspace without the data source (CLI start, provider start,
	// configure).
	Plan, Floor time.Duration
	// ReadCPU, PlanCPU and FloorCPU are the CPU time (user+system) of the
	// same: on a shared, loaded machine they show what wall time would be
	// on an idle one far better than wall time does.
	ReadCPU, PlanCPU, FloorCPU time.Duration
}

// ReadTopologyInProcess runs the data source's read once through the
// provider's protocol server and returns its time, the state encode time and
// the state size.
func ReadTopologyInProcess(ctx context.Context, srv tfprotov6.ProviderServer, dsType tftypes.Object, args map[string]tftypes.Value) (read, encode time.Duration, size int, err error) {
	for name := range args {
		if _, ok := dsType.AttributeTypes[name]; !ok {
			return 0, 0, 0, fmt.Errorf("%s has no argument %q", TopologyDataSource, name)
		}
	}
	cfg, err := tfprotov6.NewDynamicValue(dsType, acctest.ObjectWith(dsType, args))
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	resp, err := srv.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: TopologyDataSource, Config: &cfg})
	read = time.Since(start)
	if err != nil {
		return 0, 0, 0, err
	}
	if d := acctest.DiagErrors(resp.Diagnostics); d != nil {
		return 0, 0, 0, d
	}
	state, err := resp.State.Unmarshal(dsType)
	if err != nil {
		return 0, 0, 0, err
	}
	start = time.Now()
	if _, err := tfprotov6.NewDynamicValue(dsType, state); err != nil {
		return 0, 0, 0, err
	}
	return read, time.Since(start), len(resp.State.MsgPack), nil
}

// TopoPlanConfig configures the plan benchmark of the topology data source.
type TopoPlanConfig struct {
	Terraform string // terraform or tofu binary ("" skips the CLI plans)
	Dir       string // work directory (provider build, workspaces)
	Sizes     []int  // alive nodes served by the stand-in
	Cases     func(nodes int) []TopoPlanCase
	Reps      int
	Log       io.Writer
}

// TopoPlanResult is every sample of one case at one size.
type TopoPlanResult struct {
	Nodes, ResponseBytes int
	Case                 TopoPlanCase
	Samples              []TopoPlanSample
}

// RunTopoPlan serves NVL72 clusters of each size from the stand-in and
// measures the data source in process and, when a CLI is given, with
// `terraform plan` against a dev_overrides build of the provider.
func RunTopoPlan(ctx context.Context, cfg TopoPlanConfig) ([]TopoPlanResult, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	var ws *Workspace
	if cfg.Terraform != "" {
		var err error
		if ws, _, err = NewWorkspace(ctx, cfg.Terraform, cfg.Dir); err != nil {
			return nil, err
		}
	}
	var out []TopoPlanResult
	for _, n := range cfg.Sizes {
		st := standin.New(standin.Generate(standin.NVL72(n)))
		url, stop, err := serveLoopback(st)
		if err != nil {
			return out, err
		}
		srv, dsType, err := acctest.InProcessProvider(ctx, url, TopologyDataSource)
		if err != nil {
			stop()
			return out, err
		}
		client, err := NewClient(url)
		if err != nil {
			stop()
			return out, err
		}
		respBytes := nodeResponseBytes(url)
		for _, c := range cfg.Cases(n) {
			r := TopoPlanResult{Nodes: n, ResponseBytes: respBytes, Case: c}
			for rep := 0; rep < cfg.Reps; rep++ {
				var s TopoPlanSample
				t := time.Now()
				if _, err := client.Version(ctx); err != nil {
					stop()
					return out, err
				}
				if _, err := client.ListNodes(ctx, rayclient.ListOptions{
					Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}, Detail: true}); err != nil {
					stop()
					return out, err
				}
				s.HTTP = time.Since(t)
				cpu := selfCPU()
				s.Read, s.Encode, s.StateBytes, err = ReadTopologyInProcess(ctx, srv, dsType, c.Args)
				s.ReadCPU = selfCPU() - cpu
				if err != nil {
					stop()
					return out, fmt.Errorf("%s at %d nodes: %w", c.Label, n, err)
				}
				if ws != nil {
					if s.Floor, s.FloorCPU, err = ws.planTopology(ctx, url, false, ""); err != nil {
						stop()
						return out, err
					}
					if s.Plan, s.PlanCPU, err = ws.planTopology(ctx, url, true, c.HCL); err != nil {
						stop()
						return out, fmt.Errorf("%s at %d nodes: %w", c.Label, n, err)
					}
				}
				r.Samples = append(r.Samples, s)
				logf("   %6d nodes %-22s read %ss (http %ss, encode %ss, state %.1f MB) plan %ss floor %ss",
					n, c.Label, Sec(s.Read), Sec(s.HTTP), Sec(s.Encode), float64(s.StateBytes)/1e6, Sec(s.Plan), Sec(s.Floor))
			}
			out = append(out, r)
		}
		stop()
	}
	return out, nil
}

func nodeResponseBytes(url string) int {
	raw, err := httpGet(url + "/api/v0/nodes?detail=true&limit=10000&filter_keys=state&filter_predicates=%3D&filter_values=ALIVE")
	if err != nil {
		return 0
	}
	return len(raw)
}

// planTopology runs `terraform plan` in a workspace whose only block is the
// data source with the given body, or no data source at all (withData
// false), and returns its wall time and the CPU time of the CLI and the
// provider plugin it started.
func (w *Workspace) planTopology(ctx context.Context, url string, withData bool, body string) (wall, cpu time.Duration, err error) {
	hcl := ProviderHCL(url)
	if withData {
		hcl += fmt.Sprintf("\ndata %q \"t\" {\n%s}\n", TopologyDataSource, body)
	}
	dir, err := w.Dir("topoplan", map[string]string{"main.tf": hcl})
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, w.Tofu, "-chdir="+dir, "plan", "-input=false", "-no-color", "-lock=false")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.RCFile, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s plan: %v\n%s", filepath.Base(w.Tofu), err, tail(string(out), 20))
	}
	// wait4's usage of the CLI includes the plugin processes it waited for.
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PrintTopoPlan prints the phase split per case and size.
func PrintTopoPlan(out io.Writer, results []TopoPlanResult) {
	fmt.Fprintln(out, "`data \"ray_cluster_topology\"` against the stand-in dashboard (internal/standin, NVL72-sized domains of 72 nodes, real state-API JSON), median of the repetitions (seconds).")
	fmt.Fprintln(out, "http = Version + the alive-node list, decoded; provider read = the whole ReadDataSource in process (RPC decode, Read, building values, state encode), of which state encode = the msgpack encode alone;")
	fmt.Fprintln(out, "plan = `terraform plan` wall; CLI floor = the same workspace without the data source; CLI digest = plan - floor - provider read. "+
		"cpu = user+system time of the same (for plans: the CLI and the provider plugin), which tracks idle-machine wall time when the machine is shared.")
	fmt.Fprintln(out)
	t := NewTable(out, "nodes", "config", "response MB", "state MB", "http", "provider read", "build (read - http - encode)", "state encode",
		"plan", "CLI floor", "CLI digest", "read cpu", "plan cpu", "floor cpu")
	for _, r := range results {
		var h, rd, enc, pl, fl, rc, pc, fc []time.Duration
		size := 0
		for _, s := range r.Samples {
			h, rd, enc, pl, fl = append(h, s.HTTP), append(rd, s.Read), append(enc, s.Encode), append(pl, s.Plan), append(fl, s.Floor)
			rc, pc, fc = append(rc, s.ReadCPU), append(pc, s.PlanCPU), append(fc, s.FloorCPU)
			size = s.StateBytes
		}
		build := Median(rd) - Median(h) - Median(enc)
		digest := Median(pl) - Median(fl) - Median(rd)
		row := []string{fmt.Sprint(r.Nodes), r.Case.Label, fmt.Sprintf("%.1f", float64(r.ResponseBytes)/1e6),
			fmt.Sprintf("%.1f", float64(size)/1e6), Sec(Median(h)), Sec(Median(rd)), Sec(max(build, 0)), Sec(Median(enc))}
		if Median(pl) > 0 {
			row = append(row, Sec(Median(pl)), Sec(Median(fl)), Sec(max(digest, 0)))
		} else {
			row = append(row, "-", "-", "-")
		}
		row = append(row, Sec(Median(rc)), Sec(Median(pc)), Sec(Median(fc)))
		t.Row(row...)
	}
	t.Flush()
	fmt.Fprintln(out)
	PrintTopoPlanTarget(out, results)
}

// serveLoopback serves h on a free loopback port until stop is called.
func serveLoopback(h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func httpGet(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// DefaultTopoPlanCases are the configurations the bench measures at n
// nodes: the default (no per-node list), a segment selection of the largest
// power of two up to 85% of the nodes (8,192 of 10,000), and the per-node list.
func DefaultTopoPlanCases(n int) []TopoPlanCase {
	sel := 4
	for sel*2 <= n*85/100 {
		sel *= 2
	}
	return []TopoPlanCase{
		{Label: "{} (default)"},
		{Label: fmt.Sprintf("segment_size = 4, num_nodes = %d", sel), HCL: fmt.Sprintf("  segment_size = 4\n  num_nodes    = %d\n", sel),
			Args: map[string]tftypes.Value{"segment_size": tftypes.NewValue(tftypes.Number, 4),
				"num_nodes": tftypes.NewValue(tftypes.Number, sel)}},
		{Label: "include_nodes = true", HCL: "  include_nodes = true\n",
			Args: map[string]tftypes.Value{"include_nodes": tftypes.NewValue(tftypes.Bool, true)}},
	}
}

// ClusterPlanSample is one `terraform plan` of a ray_virtual_cluster against
// the stand-in: wall and CPU time, and the HTTP calls the stand-in served.
type ClusterPlanSample struct {
	Wall, CPU             time.Duration
	NodeCalls, GroupCalls int64
}

// ClusterPlanResult is every sample of one cluster shape at one size.
type ClusterPlanResult struct {
	Nodes, LogicalNodes, BundlesPerNode int
	SelectNodes                         bool
	GPUsPerNode                         float64 // of the stand-in's workers
	Samples                             []ClusterPlanSample
}

// shapeName is the row's cluster column.
func (r *ClusterPlanResult) shapeName() string {
	name := fmt.Sprintf("%d x %d unified", r.LogicalNodes, r.BundlesPerNode)
	if r.SelectNodes {
		name += ", select_nodes"
	}
	return name
}

// RunClusterPlan plans a unified cluster of logical x perNode GPU bundles
// (e.g. 2,048 x 8) with `terraform plan` against the stand-in serving nodes
// NVL72 nodes: the resource's plan-time checks (snapshot, segment and
// capacity checks) on a frontier-sized request. With selectNodes the plan
// also chooses the nodes (select_nodes = true), and the stand-in's workers
// hold perNode GPUs each, so that a logical node fits on one of them.
func RunClusterPlan(ctx context.Context, terraform, dir string, nodes, logical, perNode int, selectNodes bool, reps int, log io.Writer) (*ClusterPlanResult, error) {
	ws, _, err := NewWorkspace(ctx, terraform, dir)
	if err != nil {
		return nil, err
	}
	shape := standin.NVL72(nodes)
	if selectNodes {
		shape.GPUsPerNode = max(shape.GPUsPerNode, float64(perNode))
	}
	st := standin.New(standin.Generate(shape))
	url, stop, err := serveLoopback(st)
	if err != nil {
		return nil, err
	}
	defer stop()
	counts := make([]int, logical)
	for i := range counts {
		counts[i] = perNode
	}
	hcl := ProviderHCL(url) + fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                    = "bench-%dx%d"
  bundle_ct_per_node_list = %s
  num_gpus_per_node       = %d
  use_unified_pg          = true
  select_nodes            = %t
}
`, logical, perNode, jsonList(counts), perNode, selectNodes)
	wd, err := ws.Dir(fmt.Sprintf("clusterplan-select-%t", selectNodes), map[string]string{"main.tf": hcl})
	if err != nil {
		return nil, err
	}
	out := &ClusterPlanResult{Nodes: nodes, LogicalNodes: logical, BundlesPerNode: perNode, SelectNodes: selectNodes,
		GPUsPerNode: shape.GPUsPerNode}
	for rep := 0; rep < max(1, reps); rep++ {
		n0, g0 := st.Requests(rayclient.PathNodes), st.Requests(rayclient.PathPlacementGroups)
		cmd := exec.CommandContext(ctx, ws.Tofu, "-chdir="+wd, "plan", "-input=false", "-no-color", "-lock=false")
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+ws.RCFile, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		start := time.Now()
		text, err := cmd.CombinedOutput()
		s := ClusterPlanSample{Wall: time.Since(start)}
		if err != nil {
			return out, fmt.Errorf("%s plan of %s: %v\n%s", filepath.Base(ws.Tofu), out.shapeName(), err, tail(string(text), 20))
		}
		if !strings.Contains(string(text), "1 to add") {
			return out, fmt.Errorf("plan of %s did not plan a create:\n%s", out.shapeName(), tail(string(text), 20))
		}
		s.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		s.NodeCalls, s.GroupCalls = st.Requests(rayclient.PathNodes)-n0, st.Requests(rayclient.PathPlacementGroups)-g0
		out.Samples = append(out.Samples, s)
		if log != nil {
			fmt.Fprintf(log, "   %d nodes, %s cluster: plan %ss (cpu %ss), %d node and %d group calls\n",
				nodes, out.shapeName(), Sec(s.Wall), Sec(s.CPU), s.NodeCalls, s.GroupCalls)
		}
	}
	return out, nil
}

// PrintClusterPlan prints one row per cluster shape planned, in one table.
func PrintClusterPlan(out io.Writer, rs ...*ClusterPlanResult) {
	var t *Table
	for _, r := range rs {
		if r == nil || len(r.Samples) == 0 {
			continue
		}
		if t == nil {
			fmt.Fprintf(out, "`terraform plan` of one `ray_virtual_cluster` with `use_unified_pg = true` against the stand-in (real CLI, "+
				"dev_overrides build):\n\n")
			t = NewTable(out, "nodes", "GPUs per worker", "cluster", "bundles", "reps", "plan wall (median)", "plan wall min / median / max",
				"plan cpu (median)", "GET nodes", "GET placement_groups")
		}
		var wall, cpu []time.Duration
		for _, s := range r.Samples {
			wall, cpu = append(wall, s.Wall), append(cpu, s.CPU)
		}
		last := r.Samples[len(r.Samples)-1]
		t.Row(fmt.Sprint(r.Nodes), fmt.Sprint(r.GPUsPerNode), r.shapeName(), fmt.Sprint(r.LogicalNodes*r.BundlesPerNode), fmt.Sprint(len(r.Samples)),
			Sec(Median(wall)), MinMedianMax(wall), Sec(Median(cpu)),
			fmt.Sprint(last.NodeCalls), fmt.Sprint(last.GroupCalls))
	}
	if t != nil {
		t.Flush()
		fmt.Fprintln(out)
	}
}
