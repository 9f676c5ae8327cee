package bench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// The proxy hands every job-API answer, gunzipped, to OnResponse, and
// Observe turns them into the calls ComputePhases splits.
func TestProxyFeedsObserve(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/logs"):
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, `{"logs":"hello RAYTF_PROGRESS {\"phase\":\"started\",\"elapsed\":0.5}\n"}`)
			_ = zw.Close()
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/jobs/j"):
			fmt.Fprintf(w, `{"status":"RUNNING","driver_info":{"pid":"%d"}}`, os.Getpid())
		default:
			_, _ = io.WriteString(w, `{"submission_id":"j"}`)
		}
	}))
	defer backend.Close()
	p, err := StartProxy(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tr := &TracedJobs{}
	p.SetOnResponse(tr.Observe)
	do := func(method, path string) {
		req, _ := http.NewRequest(method, p.URL+path, bytes.NewReader(nil))
		req.Header.Set("Accept-Encoding", "gzip") // as a client that decodes itself
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	do(http.MethodPost, "/api/jobs/")
	do(http.MethodGet, "/api/jobs/j")
	do(http.MethodGet, "/api/jobs/j/logs")
	do(http.MethodGet, "/api/version") // not a job call: not observed
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var ops []string
	for _, c := range tr.calls {
		ops = append(ops, c.Op+":"+c.Status)
	}
	if got := strings.Join(ops, " "); got != "submit: get:RUNNING logs:" {
		t.Errorf("observed %q", got)
	}
	if tr.procStart.IsZero() || time.Since(tr.procStart) < 0 {
		t.Errorf("driver process start not read from /proc: %v", tr.procStart)
	}
	if !strings.Contains(tr.lastLogs, "RAYTF_PROGRESS") {
		t.Errorf("logs not decoded: %q", tr.lastLogs)
	}
	if !tr.resultAt.IsZero() {
		t.Error("logs without a result line must not mark the result")
	}
}

func TestUnifiedHCLAndTargets(t *testing.T) {
	hcl := unifiedHCL(ReferenceSpec("bench-x", 16, LayoutUnified))
	for _, want := range []string{`use_unified_pg           = true`, `placement_group_strategy = "PACK"`, `bundle_ct_per_node_list = [4, 4, 4, 4]`} {
		if !strings.Contains(hcl, want) {
			t.Errorf("HCL lacks %q:\n%s", want, hcl)
		}
	}
	s := func(xs ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x*float64(time.Second)))
		}
		return out
	}
	if _, met := traceTarget(16, s(3, 3.5), s(10, 10), nil, ""); met != "met" {
		t.Errorf("0.33x NeMo-RL must meet 0.35x: %s", met)
	}
	if _, met := traceTarget(16, s(4, 4), s(10, 10), nil, ""); met != "not met" {
		t.Errorf("0.4x NeMo-RL must not meet 0.35x: %s", met)
	}
	if _, met := traceTarget(4, s(5.4), nil, s(5), "ref"); met != "met" {
		t.Errorf("within the noise margin of today: %s", met)
	}
	if _, met := traceTarget(1, s(6), nil, s(5), "ref"); met != "not met" {
		t.Errorf("20%% slower than today: %s", met)
	}
	if got := RatioStats(s(1, 2, 3), s(2, 2, 2)); got != "1.00 (0.50-1.50)" {
		t.Errorf("RatioStats = %q", got)
	}
}
