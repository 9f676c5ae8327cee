package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Acceptance test against a real Ray cluster (TF_ACC=1): the test cluster
// of scripts/ray-cluster.sh, found as every acceptance test finds it
// (plainray: RAY_ADDRESS, RAY_TF_IP_BASE, RAY_TF_GCS_PORT), with at least 4
// GPU worker nodes (4 GPUs each, nvlink_domain_* and topo_rank resources).
// Jobs must find a ray-enabled "python" on PATH (RAYTF_TEST_PYTHON
// overrides it).

type accEnv struct {
	t      *testing.T
	client *rayclient.Client
	python string
	prefix string
	ns     string
}

func newAccEnv(t *testing.T) *accEnv {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("set TF_ACC=1 to run against a real Ray cluster")
	}
	c, err := rayclient.New(rayclient.Config{Address: plainray.Address()})
	if err != nil {
		t.Fatal(err)
	}
	py := os.Getenv("RAYTF_TEST_PYTHON")
	if py == "" {
		py = "python"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	e := &accEnv{t: t, client: c, python: py, prefix: "drvtest-" + hex.EncodeToString(b[:]) + "-", ns: "drvtest-ns"}
	t.Cleanup(e.cleanup)
	return e
}

func (e *accEnv) spec(action string, groups ...contract.RequestGroup) contract.Request {
	for i := range groups {
		groups[i].Name = e.prefix + groups[i].Name
	}
	return contract.Request{Version: contract.RequestVersion, Action: action, Namespace: e.ns, ReadyTimeoutSeconds: 60, Groups: groups,
		Probe: contract.Probe{UseGPUs: true, PortRangeLow: 1400, PortRangeHigh: 1999}, Contract: contract.DriverContract()}
}

type timedRun struct {
	res          *contract.Result
	err          error
	total        time.Duration
	firstOutput  time.Duration // until the first progress line was seen
	progressSeen []string
	connect      string // how the driver reached Ray ("started" line)
}

func (e *accEnv) run(ctx context.Context, spec contract.Request) timedRun {
	var mu sync.Mutex
	start := time.Now()
	tr := timedRun{}
	opts := RunOptions{PollInterval: 100 * time.Millisecond, OnProgress: func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if tr.firstOutput == 0 {
			tr.firstOutput = time.Since(start)
		}
		tr.progressSeen = append(tr.progressSeen, p.Phase)
		if p.Phase == "started" {
			tr.connect, _ = p.Raw["connect"].(string)
		}
	}}
	tr.res, tr.err = Run(ctx, e.client, e.python, spec, opts)
	tr.total = time.Since(start)
	return tr
}

func (e *accEnv) mustRun(t *testing.T, spec contract.Request) timedRun {
	t.Helper()
	tr := e.run(context.Background(), spec)
	if tr.err != nil {
		t.Fatalf("%s %v: %v", spec.Action, names(spec), tr.err)
	}
	return tr
}

func names(spec contract.Request) []string {
	out := make([]string, len(spec.Groups))
	for i, g := range spec.Groups {
		out[i] = g.Name
	}
	return out
}

// livePGs lists this test's placement groups that Ray does not report as
// REMOVED, keyed by name.
func (e *accEnv) livePGs(t *testing.T) map[string]raystate.PlacementGroup {
	t.Helper()
	pgs, err := e.client.ListPlacementGroups(context.Background(), rayclient.ListOptions{
		Detail: true, Filters: []rayclient.Filter{rayclient.Ne("state", "REMOVED")}})
	if err != nil {
		t.Fatalf("listing placement groups: %v", err)
	}
	out := map[string]raystate.PlacementGroup{}
	for _, pg := range pgs {
		if strings.HasPrefix(pg.Name, e.prefix) {
			out[pg.Name] = pg
		}
	}
	return out
}

func (e *accEnv) cleanup() {
	t := e.t
	defer e.deleteJobRecords()
	left := e.livePGs(t)
	if len(left) == 0 {
		return
	}
	var gs []contract.RequestGroup
	for n := range left {
		gs = append(gs, contract.RequestGroup{Name: n})
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name < gs[j].Name })
	spec := contract.Request{Version: contract.RequestVersion, Action: contract.ActionDelete, Namespace: e.ns, Groups: gs, ReadyTimeoutSeconds: 60,
		Probe: contract.Probe{PortRangeLow: 1400, PortRangeHigh: 1999}, Contract: contract.DriverContract()}
	if _, err := Run(context.Background(), e.client, e.python, spec, RunOptions{}); err != nil {
		t.Errorf("cleanup delete: %v", err)
	}
	if left := e.livePGs(t); len(left) != 0 {
		t.Errorf("placement groups left behind: %v", mapKeys(left))
	}
}

// deleteJobRecords removes terminal job records of this test that Ray's job
// monitor may have written back after Run deleted them (Run sweeps those in
// the background, but the test binary exits first).
func (e *accEnv) deleteJobRecords() {
	time.Sleep(3 * time.Second)
	jobs, err := e.client.ListJobs(context.Background())
	if err != nil {
		e.t.Logf("listing jobs: %v", err)
		return
	}
	for _, j := range jobs {
		if strings.Contains(j.SubmissionID, e.prefix) && rayclient.IsTerminalStatus(j.Status) {
			e.t.Logf("deleting leftover job record %s (%s %s)", j.SubmissionID, j.Status, j.ErrorType)
			_, _ = e.client.DeleteJob(context.Background(), j.SubmissionID)
		}
	}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func gpuBundles(n int, extra map[string]float64) []map[string]float64 {
	out := make([]map[string]float64, n)
	for i := range out {
		b := map[string]float64{"CPU": 1, "GPU": 1}
		for k, v := range extra {
			b[k] = v
		}
		out[i] = b
	}
	return out
}

// checkProbe verifies the probe data of a CREATED result.
func checkProbe(t *testing.T, res *contract.Result, spec contract.Request) {
	t.Helper()
	if len(res.Groups) != len(spec.Groups) {
		t.Fatalf("got %d groups, want %d", len(res.Groups), len(spec.Groups))
	}
	portsByIP := map[string]map[int]string{}
	for gi, g := range res.Groups {
		want := spec.Groups[gi]
		if g.Name != want.Name || g.State != "CREATED" || g.Missing || len(g.ID) < 16 || g.Strategy != want.Strategy {
			t.Errorf("group %d = %+v", gi, g)
		}
		if len(g.Bundles) != len(want.Bundles) {
			t.Fatalf("group %s: %d bundles, want %d", g.Name, len(g.Bundles), len(want.Bundles))
		}
		gpusByNode := map[string]map[int]bool{}
		for bi, b := range g.Bundles {
			where := fmt.Sprintf("%s bundle %d", g.Name, bi)
			if b.Index != bi || b.NodeID == "" || !strings.HasPrefix(b.NodeIP, "127.0.0.") {
				t.Errorf("%s: %+v", where, b)
			}
			for k, v := range want.Bundles[bi] {
				if v > 0 && !same(b.Resources[k], v) {
					t.Errorf("%s: resources %v, want %v", where, b.Resources, want.Bundles[bi])
				}
				if strings.HasPrefix(k, "nvlink_domain_") && b.NVLinkDomain != k {
					t.Errorf("%s: placed in %s, want %s", where, b.NVLinkDomain, k)
				}
			}
			if b.Port < 1400 || b.Port >= 1999 {
				t.Errorf("%s: port %d outside [1400, 1999)", where, b.Port)
			}
			if other, dup := portsByIP[b.NodeIP][b.Port]; dup {
				t.Errorf("%s: port %d on %s already given to %s", where, b.Port, b.NodeIP, other)
			}
			if portsByIP[b.NodeIP] == nil {
				portsByIP[b.NodeIP] = map[int]string{}
			}
			portsByIP[b.NodeIP][b.Port] = where
			if want.Bundles[bi]["GPU"] > 0 {
				if b.GPUID == nil {
					t.Errorf("%s: no GPU id", where)
				} else {
					if gpusByNode[b.NodeID][*b.GPUID] {
						t.Errorf("%s: GPU %d on %s reported twice", where, *b.GPUID, b.NodeIP)
					}
					if gpusByNode[b.NodeID] == nil {
						gpusByNode[b.NodeID] = map[int]bool{}
					}
					gpusByNode[b.NodeID][*b.GPUID] = true
				}
				if !strings.HasPrefix(b.NVLinkDomain, "nvlink_domain_") || b.TopoRank < 1 {
					t.Errorf("%s: topology %s/%d", where, b.NVLinkDomain, b.TopoRank)
				}
			}
		}
	}
}

func same(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }

func TestAccDriver(t *testing.T) {
	e := newAccEnv(t)
	racks := []string{"nvlink_domain_rackA", "nvlink_domain_rackA", "nvlink_domain_rackB", "nvlink_domain_rackB"}
	perNode := func() contract.Request {
		var gs []contract.RequestGroup
		for i, r := range racks {
			gs = append(gs, contract.RequestGroup{Name: fmt.Sprintf("vc-node%d", i), Strategy: "PACK", Bundles: gpuBundles(2, map[string]float64{r: 0.001})})
		}
		return e.spec(contract.ActionCreate, gs...)
	}

	t.Run("create one group", func(t *testing.T) {
		spec := e.spec(contract.ActionCreate, contract.RequestGroup{Name: "single", Strategy: "PACK", Bundles: gpuBundles(1, nil)})
		tr := e.mustRun(t, spec)
		checkProbe(t, tr.res, spec)
		t.Logf("TIMING create 1 group: total %v, first driver output after %v, progress %v", tr.total.Round(time.Millisecond), tr.firstOutput.Round(time.Millisecond), tr.progressSeen)
		del := spec
		del.Action = contract.ActionDelete
		e.mustRun(t, del)
	})

	var first *contract.Result
	t.Run("create per-node groups", func(t *testing.T) {
		spec := perNode()
		tr := e.mustRun(t, spec)
		first = tr.res
		checkProbe(t, tr.res, spec)
		for _, g := range tr.res.Groups {
			if !g.Created {
				t.Errorf("%s not marked created", g.Name)
			}
		}
		t.Logf("TIMING create 4 groups x 2 bundles: total %v, first driver output after %v", tr.total.Round(time.Millisecond), tr.firstOutput.Round(time.Millisecond))
		live := e.livePGs(t)
		for _, g := range tr.res.Groups {
			pg, ok := live[g.Name]
			if !ok || pg.State != "CREATED" || !pg.IsDetached || pg.PlacementGroupID != g.ID {
				t.Errorf("Ray state of %s: %+v (present %v)", g.Name, pg, ok)
			}
		}
	})
	if first == nil {
		t.FailNow()
	}

	t.Run("adopt on second create", func(t *testing.T) {
		spec := perNode()
		tr := e.mustRun(t, spec)
		checkProbe(t, tr.res, spec)
		for i, g := range tr.res.Groups {
			if g.Created || g.ID != first.Groups[i].ID {
				t.Errorf("%s: created=%v id=%s, want adopted %s", g.Name, g.Created, g.ID, first.Groups[i].ID)
			}
			for j, b := range g.Bundles {
				if b.NodeID != first.Groups[i].Bundles[j].NodeID {
					t.Errorf("%s bundle %d moved", g.Name, j)
				}
			}
		}
		t.Logf("TIMING adopt 4 groups: total %v", tr.total.Round(time.Millisecond))
	})

	t.Run("conflict", func(t *testing.T) {
		spec := perNode()
		spec.Groups[1].Bundles[0]["CPU"] = 2
		tr := e.run(context.Background(), spec)
		var de *contract.DriverError
		if !errors.As(tr.err, &de) || de.Kind != contract.KindConflict || !strings.Contains(de.Message, spec.Groups[1].Name) {
			t.Fatalf("err = %v", tr.err)
		}
		t.Logf("conflict message: %s", de.Message)
		if live := e.livePGs(t); len(live) != 4 || live[spec.Groups[1].Name].PlacementGroupID != first.Groups[1].ID {
			t.Errorf("conflict touched groups: %v", mapKeys(live))
		}
	})

	t.Run("inspect", func(t *testing.T) {
		spec := e.spec(contract.ActionInspect, contract.RequestGroup{Name: "vc-node0"}, contract.RequestGroup{Name: "vc-node3"}, contract.RequestGroup{Name: "does-not-exist"})
		tr := e.mustRun(t, spec)
		res := tr.res
		if len(res.Groups) != 3 || len(res.Missing) != 1 || res.Missing[0] != e.prefix+"does-not-exist" {
			t.Fatalf("result = %+v", res)
		}
		g0, miss := res.Groups[0], res.Groups[2]
		if g0.ID != first.Groups[0].ID || g0.Strategy != "PACK" || g0.Created || len(g0.Bundles) != 2 ||
			!same(g0.Bundles[0].Resources["nvlink_domain_rackA"], 0.001) || g0.Bundles[0].Port == 0 {
			t.Errorf("inspected group = %+v", g0)
		}
		if !miss.Missing || miss.State != contract.StateMissing || miss.ID != "" {
			t.Errorf("missing group = %+v", miss)
		}
		if len(e.livePGs(t)) != 4 {
			t.Error("inspect created something")
		}
	})

	t.Run("back-to-back identical runs", func(t *testing.T) {
		// Each run has a submission id of its own, so none waits for the
		// teardown of the one before.
		spec := e.spec(contract.ActionInspect, contract.RequestGroup{Name: "vc-node2"})
		for i := 0; i < 4; i++ {
			tr := e.mustRun(t, spec)
			if len(tr.res.Groups) != 1 || tr.res.Groups[0].ID != first.Groups[2].ID {
				t.Fatalf("run %d: %+v", i, tr.res)
			}
			t.Logf("TIMING inspect run %d: %v", i, tr.total.Round(time.Millisecond))
		}
	})

	t.Run("unified STRICT_SPREAD", func(t *testing.T) {
		spec := e.spec(contract.ActionCreate, contract.RequestGroup{Name: "vc-unified", Strategy: "STRICT_SPREAD", Bundles: gpuBundles(4, nil)})
		tr := e.mustRun(t, spec)
		checkProbe(t, tr.res, spec)
		ips := map[string]bool{}
		for _, b := range tr.res.Groups[0].Bundles {
			ips[b.NodeIP] = true
		}
		if len(ips) != 4 {
			t.Errorf("STRICT_SPREAD bundles on %d nodes, want 4", len(ips))
		}
		t.Logf("TIMING create STRICT_SPREAD 4 bundles: total %v", tr.total.Round(time.Millisecond))
	})

	t.Run("infeasible times out and leaves nothing", func(t *testing.T) {
		spec := e.spec(contract.ActionCreate,
			contract.RequestGroup{Name: "fits", Strategy: "PACK", Bundles: gpuBundles(1, nil)},
			contract.RequestGroup{Name: "huge", Strategy: "PACK", Bundles: []map[string]float64{{"CPU": 1, "GPU": 99}}})
		spec.ReadyTimeoutSeconds = 5
		tr := e.run(context.Background(), spec)
		var de *contract.DriverError
		if !errors.As(tr.err, &de) || (de.Kind != contract.KindInfeasible && de.Kind != contract.KindTimeout) {
			t.Fatalf("err = %v", tr.err)
		}
		// The driver reports what is pending and the per-node view; Go explains it.
		huge := clusterspec.GroupRequest{Name: e.prefix + "huge", Strategy: "PACK", Bundles: []topology.Resources{{"CPU": 1, "GPU": 99}}}
		if tr.res == nil || !slices.Contains(tr.res.Pending, huge.Name) || len(tr.res.Nodes) == 0 {
			t.Errorf("pending/nodes not reported: %+v", tr.res)
		} else if why := planning.ExplainShortage([]clusterspec.GroupRequest{huge}, placement.NodeCapacities(tr.res.Nodes)); !strings.Contains(strings.Join(why.Errors, "; "), `"GPU":99`) {
			t.Errorf("explanation = %+v", why)
		}
		if tr.res == nil || len(tr.res.Removed) != 2 {
			t.Errorf("removed = %+v", tr.res)
		}
		if tr.total > 30*time.Second {
			t.Errorf("took %v", tr.total)
		}
		t.Logf("infeasible (%s) after %v: %s", de.Kind, tr.total.Round(time.Millisecond), de.Message)
		for n := range e.livePGs(t) {
			if strings.HasSuffix(n, "fits") || strings.HasSuffix(n, "huge") {
				t.Errorf("%s left behind", n)
			}
		}
	})

	t.Run("stopped job leaves nothing", func(t *testing.T) {
		spec := e.spec(contract.ActionCreate,
			contract.RequestGroup{Name: "stop-fits", Strategy: "PACK", Bundles: gpuBundles(1, nil)},
			contract.RequestGroup{Name: "stop-huge", Strategy: "PACK", Bundles: []map[string]float64{{"GPU": 99}}})
		spec.ReadyTimeoutSeconds = 300
		// Stopped once the driver has created its groups, however slowly
		// the job started.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for ctx.Err() == nil {
				pgs, err := e.client.ListPlacementGroups(ctx, rayclient.ListOptions{
					Filters: []rayclient.Filter{rayclient.Eq("name", e.prefix+"stop-huge")}})
				if err == nil && len(pgs) > 0 {
					time.Sleep(time.Second)
					cancel()
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		tr := e.run(ctx, spec)
		if !errors.Is(tr.err, context.Canceled) {
			t.Fatalf("err = %v", tr.err)
		}
		t.Logf("stopped after %v: %v", tr.total.Round(time.Millisecond), tr.err)
		if !strings.Contains(tr.err.Error(), "removed the groups it had created") {
			t.Errorf("err = %v", tr.err)
		}
		for n := range e.livePGs(t) {
			if strings.Contains(n, "stop-") {
				t.Errorf("%s left behind", n)
			}
		}
	})

	t.Run("delete twice", func(t *testing.T) {
		spec := perNode()
		spec.Action = contract.ActionDelete
		spec.Groups = append(spec.Groups, contract.RequestGroup{Name: e.prefix + "vc-unified"})
		tr := e.mustRun(t, spec)
		if len(tr.res.Removed) != 5 || len(tr.res.Missing) != 0 {
			t.Fatalf("first delete = %+v", tr.res)
		}
		t.Logf("TIMING delete 5 groups: total %v", tr.total.Round(time.Millisecond))
		if tr.connect != "gcs" { // the job's RAY_ADDRESS is the GCS, which needs no token here
			t.Errorf("delete connected through %q, want the direct GCS path", tr.connect)
		}
		if live := e.livePGs(t); len(live) != 0 {
			t.Fatalf("still live after delete: %v", mapKeys(live))
		}
		tr = e.mustRun(t, spec)
		if len(tr.res.Removed) != 0 || len(tr.res.Missing) != 5 {
			t.Fatalf("second delete = %+v", tr.res)
		}
	})
}
