package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/drivertest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// These tests need no Ray: they check the bench's own bookkeeping.

// durations is xs, each in unit.
func durations(unit time.Duration, xs ...int) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x) * unit
	}
	return out
}

func TestMedian(t *testing.T) {
	ms := func(xs ...int) []time.Duration { return durations(time.Millisecond, xs...) }
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(5), 5 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 2500 * time.Microsecond},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	in := ms(3, 1, 2)
	Median(in)
	if in[0] != 3*time.Millisecond {
		t.Error("Median reordered its input")
	}
	if lo, hi := MinMax(ms(3, 1, 7)); lo != time.Millisecond || hi != 7*time.Millisecond {
		t.Errorf("MinMax = %v, %v", lo, hi)
	}
}

func TestMinMedianMax(t *testing.T) {
	if got := MinMedianMax(nil); got != "-" {
		t.Errorf("MinMedianMax(nil) = %q", got)
	}
	if got := MinMedianMax(durations(time.Millisecond, 3000, 1000, 9000)); got != "1.000 / 3.000 / 9.000" {
		t.Errorf("MinMedianMax = %q", got)
	}
}

func TestTableAlignsMarkdown(t *testing.T) {
	var b bytes.Buffer
	tb := NewTable(&b, "size", "time/op")
	tb.Row("100", "1.5µs")
	tb.Row("10000", "12.25ms")
	tb.Flush()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 lines, got %q", b.String())
	}
	width := len([]rune(lines[0]))
	for _, l := range lines {
		if len([]rune(l)) != width {
			t.Errorf("misaligned table:\n%s", b.String())
		}
	}
	if !strings.HasPrefix(lines[1], "| ----- | ") || !strings.HasSuffix(lines[1], ": |") {
		t.Errorf("separator row %q", lines[1])
	}
}

func TestPerNodeClusterSpec(t *testing.T) {
	spec := PerNodeGPUCluster("bench-x", 3)
	if issues := spec.Validate(); len(issues) != 0 {
		t.Fatalf("spec does not validate: %+v", issues)
	}
	ds := DriverSpec(contract.ActionCreate, "terraform-ray", spec, ReadyTimeout)
	if err := ds.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(ds.Groups) != 3 || ds.ReadyTimeoutSeconds != 180 || !ds.Probe.UseGPUs ||
		ds.Probe.PortRangeLow != 1400 || ds.Probe.PortRangeHigh != 1999 {
		t.Fatalf("unexpected spec %+v", ds)
	}
	for i, g := range ds.Groups {
		if g.Name != fmt.Sprintf("bench-x-node%d", i) || g.Strategy != "PACK" || len(g.Bundles) != 1 ||
			g.Bundles[0]["GPU"] != 1 || g.Bundles[0]["CPU"] != 1 {
			t.Errorf("group %d = %+v", i, g)
		}
	}
	if got := DriverSpec("create", "ns", spec, 1500*time.Millisecond).ReadyTimeoutSeconds; got != 2 {
		t.Errorf("ready timeout rounds up to whole seconds: got %d", got)
	}
	cpu := DriverSpec("create", "ns", PerNodeCPUCluster("bench-y", 2), ReadyTimeout)
	if cpu.Probe.UseGPUs || len(cpu.Groups[0].Bundles[0]) != 1 || cpu.Groups[0].Bundles[0]["CPU"] != 1 {
		t.Errorf("CPU cluster spec %+v", cpu)
	}
	hcl := PerNodeHCL("c", spec)
	if !strings.Contains(hcl, "bundle_ct_per_node_list = [1, 1, 1]") || !strings.Contains(hcl, "use_gpus                = true") {
		t.Errorf("HCL:\n%s", hcl)
	}
}

func submitEvent(t *testing.T, spec contract.Request) ProxyEvent {
	t.Helper()
	ep, err := driver.Entrypoint("python", spec)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(rayclient.JobSubmitRequest{Entrypoint: ep, SubmissionID: "x"})
	return ProxyEvent{Method: "POST", Route: "POST /api/jobs/", Body: body}
}

func TestSubmittedSpecRoundTrip(t *testing.T) {
	spec := PerNodeGPUCluster("bench-rt", 2)
	want := DriverSpec("create", "terraform-ray", spec, ReadyTimeout)
	sent := want
	sent.RunID = "0123456789abcdef"
	specs, err := SubmittedSpecs([]ProxyEvent{{Route: "GET /api/v0/nodes"}, submitEvent(t, sent)})
	if err != nil || len(specs) != 1 {
		t.Fatalf("SubmittedSpecs = %v, %v", specs, err)
	}
	if specs[0].RunID != sent.RunID {
		t.Errorf("run id %q not decoded", specs[0].RunID)
	}
	if !SpecMatches(specs[0], want) {
		t.Errorf("decoded spec %+v does not match %+v", specs[0], want)
	}
	other := DriverSpec("create", "terraform-ray", PerNodeCPUCluster("bench-rt", 2), ReadyTimeout)
	if SpecMatches(specs[0], other) {
		t.Error("a CPU-only spec must not match the GPU one")
	}
}

func TestCompareGroups(t *testing.T) {
	spec := PerNodeCPUCluster("vc", 2)
	want := spec.Groups()
	bundle := func(r map[string]float64) []raystate.Bundle { return []raystate.Bundle{{UnitResources: r}} }
	live := []raystate.PlacementGroup{
		{Name: "vc-node0", PlacementGroupID: "a", State: "CREATED", Bundles: bundle(map[string]float64{"CPU": 1})},
		{Name: "vc-node1", PlacementGroupID: "b", State: "CREATED", Bundles: bundle(map[string]float64{"CPU": 1})},
		{Name: "other-node0", PlacementGroupID: "c", State: "CREATED"},
	}
	rec := map[string]string{"vc-node0": "a", "vc-node1": "b"}
	if n, d := CompareGroups(want, rec, live); n != 2 || strings.Join(d, "") != "" {
		t.Errorf("matching groups: present %d drift %q", n, d)
	}
	live[1].PlacementGroupID, live[1].State = "z", "RESCHEDULING"
	live[0].Bundles = bundle(map[string]float64{"CPU": LiveBundleCPU})
	n, d := CompareGroups(want, rec, live)
	if n != 2 || !strings.Contains(d[0], "bundle 0 reserves {CPU: 0.01}, the configuration wants {CPU: 1}") ||
		!strings.Contains(d[1], "recreated outside Terraform") || !strings.Contains(d[1], "RESCHEDULING") {
		t.Errorf("drift %q", d)
	}
	if n, d := CompareGroups(want, rec, live[2:]); n != 0 || d[0] != "removed outside Terraform" {
		t.Errorf("missing groups: present %d drift %q", n, d)
	}
}

func TestCountingProxy(t *testing.T) {
	var mu sync.Mutex
	var seenBody string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			seenBody = string(b)
			mu.Unlock()
		}
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	defer backend.Close()
	p, err := StartProxy(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, path := range []string{"/api/v0/placement_groups?limit=10", "/api/v0/placement_groups", "/api/jobs/raytf_x_1", "/api/jobs/raytf_x_1/logs"} {
		resp, err := http.Get(p.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	resp, err := http.Post(p.URL+"/api/jobs/", "application/json", strings.NewReader(`{"entrypoint":"e"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	ev := p.Take()
	if len(ev) != 5 {
		t.Fatalf("got %d events", len(ev))
	}
	if got := CountRoute(ev, "GET /api/v0/placement_groups"); got != 2 {
		t.Errorf("placement_groups calls %d", got)
	}
	if got := RouteCounts(ev); got != "GET /api/v0/placement_groups x2, GET /api/jobs/{id} x1, GET /api/jobs/{id}/logs x1, POST /api/jobs/ x1" {
		t.Errorf("RouteCounts = %q", got)
	}
	if TotalBytes(ev) != 5*int64(len(`{"ok":true}`)) {
		t.Errorf("bytes %d", TotalBytes(ev))
	}
	mu.Lock()
	defer mu.Unlock()
	if seenBody != `{"entrypoint":"e"}` || string(ev[4].Body) != seenBody {
		t.Errorf("POST body forwarded %q, recorded %q", seenBody, ev[4].Body)
	}
	if len(p.Take()) != 0 {
		t.Error("Take must forget what it returned")
	}
}

func TestBusyUnion(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(a, b int) ProxyEvent {
		return ProxyEvent{Start: t0.Add(time.Duration(a) * time.Second), End: t0.Add(time.Duration(b) * time.Second)}
	}
	if got := Busy([]ProxyEvent{at(5, 6), at(0, 2), at(1, 3)}); got != 4*time.Second {
		t.Errorf("Busy = %v, want 4s", got)
	}
}

const benchOutput = `goos: linux
BenchmarkSortBundles/nodes=100-2     	    2000	    100000 ns/op	      1000 ns/node	   50000 B/op	     100 allocs/op
BenchmarkSortBundles/nodes=100-2     	    2000	    120000 ns/op	      1200 ns/node	   50000 B/op	     100 allocs/op
BenchmarkSortBundles/nodes=100-2     	    2000	    110000 ns/op	      1100 ns/node	   50000 B/op	     100 allocs/op
BenchmarkSortBundles/nodes=1000-2    	     100	   1100000 ns/op	      1100 ns/node	  500000 B/op	    1000 allocs/op
BenchmarkSortBundles/nodes=10000-2   	      10	  22000000 ns/op	      2200 ns/node	 5000000 B/op	   10000 allocs/op
BenchmarkOther-2                     	      10	  22000000 ns/op
PASS
`

func TestTopologyTable(t *testing.T) {
	lines, err := ParseBenchOutput(strings.NewReader(benchOutput))
	if err != nil || len(lines) != 5 {
		t.Fatalf("parsed %d lines, %v", len(lines), err)
	}
	if l := lines[4]; l.Name != "BenchmarkSortBundles" || l.Nodes != 10000 || l.Metrics["ns/node"] != 2200 {
		t.Errorf("line %+v", l)
	}
	var b bytes.Buffer
	if err := PrintTopology(&b, strings.NewReader(benchOutput)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| 100   |    3 | 110.0µs |    1100 |          1.00x |               - |",
		"| 1000  |    1 |  1.10ms |    1100 |          1.00x |            1.00 |",
		"| 10000 |    1 | 22.00ms |    2200 |          2.00x |            1.30 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if err := PrintTopology(&b, strings.NewReader("PASS\n")); err == nil {
		t.Error("no benchmark lines must be an error")
	}
}

// fakeJobs plays a Ray job API for one driver run with a scripted timeline.
type fakeJobs struct {
	mu      sync.Mutex
	runID   string
	polls   int
	endTime int64
}

func (f *fakeJobs) SubmitJob(_ context.Context, req rayclient.JobSubmitRequest) (*rayclient.JobSubmitResponse, error) {
	ep := strings.TrimSpace(req.Entrypoint)
	raw, err := drivertest.DecodeSpecArg(strings.Trim(ep[strings.LastIndexByte(ep, ' ')+1:], "'"))
	if err != nil {
		return nil, err
	}
	var s contract.Request
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.runID = s.RunID
	f.mu.Unlock()
	return &rayclient.JobSubmitResponse{SubmissionID: req.SubmissionID}, nil
}

func (f *fakeJobs) GetJob(context.Context, string) (*rayclient.JobDetails, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls++
	j := &rayclient.JobDetails{Status: rayclient.JobStatusRunning, StartTime: time.Now().UnixMilli()}
	if f.polls >= 2 {
		if f.endTime == 0 {
			f.endTime = time.Now().Add(-50 * time.Millisecond).UnixMilli()
		}
		j.Status, j.EndTime = rayclient.JobStatusSucceeded, f.endTime
	}
	return j, nil
}

func (f *fakeJobs) GetJobLogs(context.Context, string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rid := f.runID
	lines := []string{
		`RAYTF_PROGRESS {"phase":"started","elapsed":0.05,"run_id":"` + rid + `"}`,
		`RAYTF_PROGRESS {"phase":"lookup","elapsed":0.05,"run_id":"` + rid + `"}`,
		`RAYTF_PROGRESS {"phase":"created","elapsed":0.06,"run_id":"` + rid + `"}`,
		`RAYTF_PROGRESS {"phase":"waiting","ready":1,"total":1,"elapsed":0.16,"run_id":"` + rid + `"}`,
		`RAYTF_PROGRESS {"phase":"probing","ready":0,"total":1,"elapsed":0.17,"run_id":"` + rid + `"}`,
		`RAYTF_PROGRESS {"phase":"probing","ready":1,"total":1,"elapsed":0.21,"run_id":"` + rid + `"}`,
	}
	if f.endTime != 0 { // the result line only once the job ended, so Run waits for Ray's end time
		lines = append(lines, `RAYTF_RESULT {"ok":true,"action":"create","groups":[],"run_id":"`+rid+`"}`)
	}
	return strings.Join(lines, "\n") + "\n", nil
}

func (f *fakeJobs) ListJobs(context.Context) ([]rayclient.JobDetails, error) { return nil, nil }
func (f *fakeJobs) StopJob(context.Context, string) (bool, error)            { return false, nil }
func (f *fakeJobs) DeleteJob(context.Context, string) (bool, error) {
	return true, nil
}

func TestComputePhases(t *testing.T) {
	if testing.Short() {
		t.Skip("runs driver.Run's real poll and record-settle timers (about 2s)")
	}
	trace := &TracedJobs{API: &fakeJobs{}}
	var progress []driver.Progress
	spec := DriverSpec("create", "ns", PerNodeGPUCluster("bench-fake", 1), ReadyTimeout)
	start := time.Now()
	res, err := driver.Run(context.Background(), trace, "python", spec, driver.RunOptions{
		PollInterval: 10 * time.Millisecond,
		OnProgress:   func(p driver.Progress) { progress = append(progress, p) },
	})
	end := time.Now()
	if err != nil || !res.OK {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	p, err := trace.ComputePhases(start, end, 7*time.Millisecond, progress, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want time.Duration) {
		if d := got - want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("ray.init", p.RayInit, 50*time.Millisecond)
	near("create calls", p.CreateCalls, 10*time.Millisecond)
	near("placement wait", p.PlacementWait, 100*time.Millisecond)
	near("probes", p.Probe, 50*time.Millisecond)
	if p.LiveCheck != 7*time.Millisecond || p.Total != end.Sub(start)+7*time.Millisecond {
		t.Errorf("live check %v total %v", p.LiveCheck, p.Total)
	}
	if p.Split {
		t.Error("no driver pid was reported, so the process lifetime cannot be split")
	}
	if p.PollLag <= 0 || p.DeleteRecord <= 0 || p.Polls < 2 || p.Calls < 5 {
		t.Errorf("phases %+v", p)
	}
	var sum time.Duration
	for _, v := range p.Values() {
		sum += v
	}
	if sum != p.Total {
		t.Errorf("phases add up to %v, total %v", sum, p.Total)
	}
	med := MedianPhases([]Phases{p, p, p})
	if med.Probe != p.Probe || med.Total != p.Total || med.Calls != p.Calls {
		t.Errorf("MedianPhases of identical samples changed them: %+v", med)
	}
}

func TestRoute(t *testing.T) {
	for in, want := range map[string]string{
		"/api/jobs/":                      "GET /api/jobs/",
		"/api/jobs/raytf_create_x_0":      "GET /api/jobs/{id}",
		"/api/jobs/raytf_create_x_0/logs": "GET /api/jobs/{id}/logs",
		"/api/v0/nodes":                   "GET /api/v0/nodes",
	} {
		if got := Route("GET", in); got != want {
			t.Errorf("Route(%q) = %q, want %q", in, got, want)
		}
	}
}

// SpecMatches reports whether the spec the provider submitted equals the
// bench's DriverSpec (see SpecDiff).
func SpecMatches(submitted, bench contract.Request) bool { return len(SpecDiff(submitted, bench)) == 0 }
