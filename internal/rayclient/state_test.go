package rayclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Captured from Ray 2.60.0: GET /api/v0/nodes?detail=true (trimmed to 2 rows).
const nodesBody = `{"result": true, "msg": "", "data": {"result": {"total": 2, "num_after_truncation": 2, "num_filtered": 2, "result": [` +
	`{"node_id": "1d09a116cef3b4ceeab1ad63b06be22e2f81c96e8255b07312d7f135", "node_ip": "127.0.0.11", "is_head_node": false, "state": "ALIVE", "state_message": null, "node_name": "127.0.0.11", "resources_total": {"node:127.0.0.11": 1.0, "memory": 24529612544.0, "GPU": 4.0, "object_store_memory": 100000000.0, "CPU": 4.0, "nvlink_domain_rackA": 1.0, "topo_rank": 3.0}, "labels": {"ray.io/node-id": "1d09a116cef3b4ceeab1ad63b06be22e2f81c96e8255b07312d7f135"}, "start_time_ms": 1796217646033, "end_time_ms": 0}, ` +
	`{"node_id": "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d", "node_ip": "127.0.0.10", "is_head_node": true, "state": "ALIVE", "state_message": null, "node_name": "127.0.0.10", "resources_total": {"CPU": 4.0, "memory": 24708472576.0, "object_store_memory": 100000000.0, "node:__internal_head__": 1.0, "node:127.0.0.10": 1.0, "topo_rank": 1.0}, "labels": {"ray.io/node-id": "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d"}, "start_time_ms": 1796217643411, "end_time_ms": 0}` +
	`], "partial_failure_warning": "", "warnings": null}}}`

// Captured from Ray 2.60.0: GET /api/v0/placement_groups?detail=true.
const pgBody = `{"result": true, "msg": "", "data": {"result": {"total": 2, "num_after_truncation": 2, "num_filtered": 2, "result": [` +
	`{"placement_group_id": "0b05e7a2d6392e0b0640fb871c2c03000000", "name": "drvtest-exp1b", "creator_job_id": "03000000", "state": "REMOVED", "bundles": [{"bundle_id": {"placement_group_id": "0b05e7a2d6392e0b0640fb871c2c03000000", "bundle_index": 0}, "unit_resources": {"GPU": 99.0}, "node_id": "", "label_selector": {}}], "is_detached": true, "stats": {"creation_request_received_ns": "1796217800806865708", "scheduling_started_time_ns": "1796217800806982599", "scheduling_attempt": 1, "scheduling_state": "REMOVED", "scheduling_latency_us": "0", "end_to_end_creation_latency_us": "0", "highest_retry_delay_ms": 0.0}, "topology_strategy": {}, "topology_assignments": {}}, ` +
	`{"placement_group_id": "9a64917f1416d51d242a6d5e22e603000000", "name": "drvtest-exp1", "creator_job_id": "03000000", "state": "CREATED", "bundles": [{"bundle_id": {"placement_group_id": "9a64917f1416d51d242a6d5e22e603000000", "bundle_index": 0}, "unit_resources": {"CPU": 1.0, "GPU": 1.0, "nvlink_domain_rackA": 0.001}, "node_id": "f7bd9c8dadfacb4f473eea3800d68f05bddb0e0a16970819defcc80b", "label_selector": {"zone": "a"}}, {"bundle_id": {"placement_group_id": "9a64917f1416d51d242a6d5e22e603000000", "bundle_index": 1}, "unit_resources": {"CPU": 2.0}, "node_id": "", "label_selector": {}}], "is_detached": false, "stats": {"scheduling_attempt": 1}, "topology_strategy": {"ray.io/gpu-domain": "STRICT_PACK"}, "topology_assignments": {"ray.io/gpu-domain": "rack-1"}}` +
	`], "partial_failure_warning": "", "warnings": null}}}`

func jsonHandler(status int, body string, seen func(*http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			seen(r)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestListNodesDecodeAndDefaults(t *testing.T) {
	var q url.Values
	var path string
	srv := httptest.NewServer(jsonHandler(200, nodesBody, func(r *http.Request) { q = r.URL.Query(); path = r.URL.Path }))
	defer srv.Close()
	c := newTestClient(t, srv.URL+"/")
	nodes, err := c.ListNodes(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/api/v0/nodes" {
		t.Errorf("path = %q", path)
	}
	if q.Get("limit") != "10000" || q.Has("detail") || q.Has("timeout") || q.Has("filter_keys") {
		t.Errorf("query = %v", q)
	}
	if len(nodes) != 2 {
		t.Fatalf("nodes = %d", len(nodes))
	}
	n := nodes[1]
	want := raystate.Node{
		NodeID: "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d", NodeIP: "127.0.0.10", IsHeadNode: true,
		State: raystate.NodeStateAlive, NodeName: "127.0.0.10",
		ResourcesTotal: map[string]float64{"CPU": 4, "memory": 24708472576, "object_store_memory": 1e8, "node:__internal_head__": 1, "node:127.0.0.10": 1, "topo_rank": 1},
		Labels:         map[string]string{"ray.io/node-id": "7c98bcd000b5838d1b953f1b3bfe0bf0475687392e7ccfcdaeec471d"},
		StartTimeMs:    1796217643411,
	}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("node (-want +got):\n%s", diff)
	}
}

// TestListFilterEncoding checks the query exactly as Ray's
// _get_filters_from_req reads it: req.query.getall() on each of the three
// keys, zipped positionally.
func TestListFilterEncoding(t *testing.T) {
	var raw string
	srv := httptest.NewServer(jsonHandler(200, nodesBody, func(r *http.Request) { raw = r.URL.RawQuery }))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	_, err := c.ListNodes(context.Background(), ListOptions{
		Filters: []Filter{Eq("state", "ALIVE"), Ne("node_ip", "10.0.0.1"), {Key: "is_head_node", Op: "=", Value: "false"}, Eq("node_name", "a&b=c d")},
		Limit:   50,
		Detail:  true,
		Timeout: 2500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"state", "node_ip", "is_head_node", "node_name"}, q["filter_keys"]); diff != "" {
		t.Errorf("filter_keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"=", "!=", "=", "="}, q["filter_predicates"]); diff != "" {
		t.Errorf("filter_predicates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ALIVE", "10.0.0.1", "false", "a&b=c d"}, q["filter_values"]); diff != "" {
		t.Errorf("filter_values (-want +got):\n%s", diff)
	}
	if q.Get("limit") != "50" || q.Get("detail") != "true" || q.Get("timeout") != "3" {
		t.Errorf("query = %v", q)
	}
	// Predicates must be percent-encoded ("=" inside a value is data).
	if !strings.Contains(raw, "filter_predicates=%21%3D") || !strings.Contains(raw, "filter_predicates=%3D") {
		t.Errorf("raw query = %s", raw)
	}
}

func TestListFilterValidationSendsNothing(t *testing.T) {
	srv := httptest.NewServer(jsonHandler(200, nodesBody, nil))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	for _, opts := range []ListOptions{
		{Filters: []Filter{{Key: "state", Op: "~", Value: "x"}}},
		{Filters: []Filter{{Key: "state", Op: "==", Value: "x"}}},
		{Filters: []Filter{{Key: "", Op: "=", Value: "x"}}},
		{Limit: -1},
		{Timeout: -time.Second},
	} {
		if _, err := c.ListNodes(context.Background(), opts); err == nil {
			t.Errorf("%+v: expected error", opts)
		}
	}
	if requestCount(c) != 0 {
		t.Errorf("RequestCount = %d", requestCount(c))
	}
}

func TestListEnvelopeResultFalse(t *testing.T) {
	// Real Ray 400 (bad filter value) and a 200 envelope with result=false.
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{400, `{"result": false, "msg": "Invalid node state for filtering: BOGUS", "data": {"result": null}}`,
			"ray: GET /api/v0/nodes: 400 Bad Request: Invalid node state for filtering: BOGUS"},
		{400, `{"result": false, "msg": "Given limit 20000 exceeds the supported limit 10000. Use a lower limit, or set the ` + "`RAY_MAX_LIMIT_FROM_API_SERVER`" + ` environment variable to a larger value.", "data": {"result": null}}`,
			"ray: GET /api/v0/nodes: 400 Bad Request: Given limit 20000 exceeds the supported limit 10000."},
		{200, `{"result": false, "msg": "something went wrong", "data": {"result": null}}`,
			"ray: GET /api/v0/nodes: 200 OK: something went wrong"},
	} {
		srv := httptest.NewServer(jsonHandler(tc.status, tc.body, nil))
		c := newTestClient(t, srv.URL)
		nodes, err := c.ListNodes(context.Background(), ListOptions{})
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != tc.status || nodes != nil {
			t.Errorf("err = %v, nodes = %v", err, nodes)
		} else if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("error = %q, want prefix %q", err.Error(), tc.want)
		}
		if requestCount(c) != 1 {
			t.Errorf("RequestCount = %d", requestCount(c))
		}
		srv.Close()
	}
}

func TestListTruncation(t *testing.T) {
	body := func(total, after, filtered int, rows, warn string, warnings string) string {
		return `{"result": true, "msg": "", "data": {"result": {"total": ` + strconv.Itoa(total) + `, "num_after_truncation": ` + strconv.Itoa(after) +
			`, "num_filtered": ` + strconv.Itoa(filtered) + `, "result": [` + rows + `], "partial_failure_warning": ` + warn + `, "warnings": ` + warnings + `}}}`
	}
	pg := func(id string) string {
		return `{"placement_group_id": "` + id + `", "name": "", "creator_job_id": "01000000", "state": "CREATED"}`
	}

	t.Run("limit", func(t *testing.T) {
		srv := httptest.NewServer(jsonHandler(200, body(5, 5, 5, pg("a")+","+pg("b"), `""`, "null"), nil))
		defer srv.Close()
		c := newTestClient(t, srv.URL)
		pgs, err := c.ListPlacementGroups(context.Background(), ListOptions{Limit: 2})
		if len(pgs) != 2 || pgs[0].PlacementGroupID != "a" {
			t.Errorf("rows not returned with the error: %+v", pgs)
		}
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("err = %v", err)
		}
		var te *TruncatedError
		if !errors.As(err, &te) || te.Returned != 2 || te.NumFiltered != 5 || te.Limit != 2 || te.Resource != "placement_groups" {
			t.Errorf("te = %+v", te)
		}
		if !strings.Contains(err.Error(), "2 of 5 matching entries returned (limit 2)") {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("data source", func(t *testing.T) {
		srv := httptest.NewServer(jsonHandler(200, body(12000, 10000, 1, pg("a"), `""`, "null"), nil))
		defer srv.Close()
		c := newTestClient(t, srv.URL)
		pgs, err := c.ListPlacementGroups(context.Background(), ListOptions{})
		if len(pgs) != 1 || !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "10000 of 12000 entries retrieved") {
			t.Errorf("pgs = %v err = %v", pgs, err)
		}
	})
	t.Run("filtered is not truncated", func(t *testing.T) {
		srv := httptest.NewServer(jsonHandler(200, body(6, 6, 1, pg("a"), `""`, "null"), nil))
		defer srv.Close()
		c := newTestClient(t, srv.URL)
		if _, err := c.ListPlacementGroups(context.Background(), ListOptions{Filters: []Filter{Eq("name", "x")}}); err != nil {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nodes source-side filter", func(t *testing.T) {
		// Real Ray 2.60 answer to filter state=DEAD on a cluster of 6 live
		// nodes: the GCS drops the rows and counts them in "total".
		srv := httptest.NewServer(jsonHandler(200, body(6, 0, 0, "", `""`, "null"), nil))
		defer srv.Close()
		c := newTestClient(t, srv.URL)
		nodes, err := c.ListNodes(context.Background(), ListOptions{Filters: []Filter{Eq("state", raystate.NodeStateDead)}})
		if err != nil || nodes == nil || len(nodes) != 0 {
			t.Errorf("nodes = %v err = %v", nodes, err)
		}
		// Without a source-side filter the same counters mean truncation.
		_, err = c.ListNodes(context.Background(), ListOptions{Filters: []Filter{Ne("state", raystate.NodeStateAlive)}})
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("partial failure and warnings", func(t *testing.T) {
		srv := httptest.NewServer(jsonHandler(200, body(5, 5, 5, pg("a"), `"Failed to query data from GCS."`, `["callsite not enabled"]`), nil))
		defer srv.Close()
		log := &recLogger{}
		c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Logger = log })
		res, err := c.ListPlacementGroupsWithMeta(context.Background(), ListOptions{})
		if res == nil || len(res.Items) != 1 {
			t.Fatalf("res = %+v", res)
		}
		if !errors.Is(err, ErrPartialFailure) || !errors.Is(err, ErrTruncated) {
			t.Errorf("err = %v", err)
		}
		var pf *PartialFailureError
		if !errors.As(err, &pf) || pf.Warning != "Failed to query data from GCS." {
			t.Errorf("pf = %+v", pf)
		}
		want := ListMeta{Total: 5, NumAfterTruncation: 5, NumFiltered: 5, Returned: 1, PartialFailureWarning: "Failed to query data from GCS.", Warnings: []string{"callsite not enabled"}}
		if diff := cmp.Diff(want, res.Meta); diff != "" {
			t.Errorf("meta (-want +got):\n%s", diff)
		}
		if !strings.Contains(log.all(), "callsite not enabled") {
			t.Errorf("warnings not logged: %s", log.all())
		}
	})
}

func TestListPlacementGroupsDecode(t *testing.T) {
	var q url.Values
	srv := httptest.NewServer(jsonHandler(200, pgBody, func(r *http.Request) { q = r.URL.Query() }))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	pgs, err := c.ListPlacementGroups(context.Background(), ListOptions{Detail: true, Filters: []Filter{Ne("state", raystate.PlacementGroupStateRemoved)}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("detail") != "true" || q.Get("filter_keys") != "state" {
		t.Errorf("query = %v", q)
	}
	if len(pgs) != 2 {
		t.Fatalf("pgs = %d", len(pgs))
	}
	p := pgs[1]
	if p.PlacementGroupID != "9a64917f1416d51d242a6d5e22e603000000" || p.Name != "drvtest-exp1" || p.CreatorJobID != "03000000" ||
		p.State != raystate.PlacementGroupStateCreated || p.IsDetached || len(p.Bundles) != 2 {
		t.Fatalf("pg = %+v", p)
	}
	b := p.Bundles[0]
	want := raystate.Bundle{
		BundleID:         "9a64917f1416d51d242a6d5e22e603000000:0",
		PlacementGroupID: "9a64917f1416d51d242a6d5e22e603000000",
		BundleIndex:      0,
		NodeID:           "f7bd9c8dadfacb4f473eea3800d68f05bddb0e0a16970819defcc80b",
		UnitResources:    map[string]float64{"CPU": 1, "GPU": 1, "nvlink_domain_rackA": 0.001},
		LabelSelector:    map[string]string{"zone": "a"},
	}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("bundle (-want +got):\n%s", diff)
	}
	if p.Bundles[1].BundleIndex != 1 || p.Bundles[1].NodeID != "" || p.Bundles[1].BundleID != "9a64917f1416d51d242a6d5e22e603000000:1" {
		t.Errorf("bundle[1] = %+v", p.Bundles[1])
	}
	if p.Stats["scheduling_attempt"] != 1.0 || p.TopologyStrategy["ray.io/gpu-domain"] != "STRICT_PACK" || p.TopologyAssignments["ray.io/gpu-domain"] != "rack-1" {
		t.Errorf("pg = %+v", p)
	}
	if !pgs[0].IsDetached || pgs[0].Stats["creation_request_received_ns"] != "1796217800806865708" {
		t.Errorf("pg0 = %+v", pgs[0])
	}
}

func TestListTimeoutExtendsAttemptTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, nodesBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RequestTimeout = 100 * time.Millisecond; cfg.RetryMax = -1 })
	if _, err := c.ListNodes(context.Background(), ListOptions{}); err == nil {
		t.Error("expected per-attempt timeout")
	}
	if _, err := c.ListNodes(context.Background(), ListOptions{Timeout: time.Second}); err != nil {
		t.Errorf("server-side timeout should extend the attempt timeout: %v", err)
	}
}
