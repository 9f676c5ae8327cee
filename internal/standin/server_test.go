package standin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func startServer(t *testing.T, s *Server) (*httptest.Server, *rayclient.Client) {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, err := rayclient.New(rayclient.Config{Address: ts.URL, RetryMax: -1})
	if err != nil {
		t.Fatal(err)
	}
	return ts, c
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" && resp.StatusCode != 404 {
		t.Errorf("%s: Content-Type %q", url, ct)
	}
	return resp.StatusCode, string(body)
}

func TestNVL72TenThousandNodesThroughTheRealClient(t *testing.T) {
	const n = 10000
	s := New(Generate(NVL72(n)))
	ts, c := startServer(t, s)
	ctx := context.Background()

	v, err := c.Version(ctx)
	if err != nil || v.RayVersion != "2.60.0" || v.SessionName == "" {
		t.Fatalf("version: %+v %v", v, err)
	}
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("state", "ALIVE")}, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != n {
		t.Fatalf("got %d nodes, want %d", len(nodes), n)
	}
	domains := map[string]int{}
	heads, gpus := 0, 0.0
	ranks := map[int]bool{}
	for i, nd := range nodes {
		if i > 0 && nodes[i-1].NodeID >= nd.NodeID {
			t.Fatalf("rows not in node-id order at %d", i)
		}
		d, r := topology.ParseNodeTopology(nd.ResourcesTotal)
		ranks[r] = true
		gpus += nd.ResourcesTotal["GPU"]
		if nd.IsHeadNode {
			heads++
			if d != topology.NVLinkDomainUnknown || r != 1 {
				t.Errorf("head node: domain %s rank %d", d, r)
			}
			continue
		}
		domains[d]++
		if nd.Labels[NodeIDLabel] != nd.NodeID || nd.Labels[DomainLabel] == "" || nd.StartTimeMs == 0 {
			t.Fatalf("node %d: labels %v start %d", i, nd.Labels, nd.StartTimeMs)
		}
	}
	if heads != 1 || len(ranks) != n || gpus != 4*(n-1) {
		t.Errorf("heads %d, distinct ranks %d, GPUs %g", heads, len(ranks), gpus)
	}
	if len(domains) != 139 {
		t.Errorf("%d NVLink domains, want 139", len(domains))
	}
	for d, k := range domains {
		if k != 72 && k != (n-1)%72 {
			t.Errorf("domain %s has %d nodes", d, k)
		}
	}
	// About 5 MB, like a real dashboard's answer for this many nodes.
	_, body := get(t, ts.URL+"/api/v0/nodes?limit=10000&detail=true")
	if len(body) < 4<<20 || len(body) > 8<<20 {
		t.Errorf("response is %d bytes", len(body))
	}
	if got := s.Requests("/api/v0/nodes"); got != 2 {
		t.Errorf("counted %d node requests, want 2", got)
	}
}

func TestNodeRowShape(t *testing.T) {
	ts, _ := startServer(t, New(Generate(NVL72(3))))
	status, body := get(t, ts.URL+"/api/v0/nodes?limit=1&detail=true&filter_keys=is_head_node&filter_predicates=%3D&filter_values=1")
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	for _, want := range []string{
		`{"result": true, "msg": "", "data": {"result": {"total": 3, "num_after_truncation": 3, "num_filtered": 1, "result": [{"node_id": "`,
		`"is_head_node": true, "state": "ALIVE", "state_message": null, "node_name": "10.0.0.0", "resources_total": {"CPU": 72.0, `,
		`"node:10.0.0.0": 1.0, "node:__internal_head__": 1.0, "object_store_memory": 68719476736.0, "topo_rank": 1.0}`,
		`"start_time_ms": 1796234892100, "end_time_ms": 0}], "partial_failure_warning": "", "warnings": null}}}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in\n%s", want, body)
		}
	}
	_, plain := get(t, ts.URL+"/api/v0/nodes?filter_keys=node_ip&filter_predicates=%3D&filter_values=10.0.0.2")
	var env struct {
		Data struct {
			Result struct {
				NumFiltered int              `json:"num_filtered"`
				Result      []map[string]any `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(plain), &env); err != nil {
		t.Fatal(err)
	}
	rows := env.Data.Result.Result
	if len(rows) != 1 || env.Data.Result.NumFiltered != 1 {
		t.Fatalf("node_ip filter: %s", plain)
	}
	if _, ok := rows[0]["start_time_ms"]; ok {
		t.Error("start_time_ms is a detail column")
	}
	res := rows[0]["resources_total"].(map[string]any)
	if res["GPU"] != 4.0 || res[DomainResource(0)] != 1.0 || res["topo_rank"] != 3.0 {
		t.Errorf("worker resources %v", res)
	}
}

func TestListErrorsAndLimits(t *testing.T) {
	ts, c := startServer(t, New(Generate(NVL72(150))))
	ctx := context.Background()

	// The default limit is Ray's 100; a smaller limit than the matches is
	// what the client reports as truncation.
	_, body := get(t, ts.URL+"/api/v0/nodes")
	if !strings.Contains(body, `"num_filtered": 150`) || strings.Count(body, `"node_id"`) != 100 {
		t.Errorf("default limit: %.200s", body)
	}
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Limit: 10})
	var trunc *rayclient.TruncatedError
	if len(nodes) != 10 || !errors.As(err, &trunc) {
		t.Errorf("limit 10: %d rows, err %v", len(nodes), err)
	}
	nodes, err = c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Ne("state", "alive")}})
	if len(nodes) != 0 || err != nil {
		t.Errorf("state != alive (case-insensitive): %d rows, %v", len(nodes), err)
	}

	for query, want := range map[string]string{
		"limit=10001": "Given limit 10001 exceeds the supported limit 10000",
		"filter_keys=resources_total&filter_predicates=%3D&filter_values=x": "The given filter column resources_total is not supported",
		"filter_keys=state&filter_predicates=%3E&filter_values=x":           "Unsupported filter predicate > is given",
	} {
		status, body := get(t, ts.URL+"/api/v0/nodes?"+query)
		if status != 400 || !strings.Contains(body, `{"result": false, "msg": "`+want) || !strings.HasSuffix(body, `"data": {"result": null}}`) {
			t.Errorf("%s: %d %s", query, status, body)
		}
	}
	if _, err := c.ListNodes(ctx, rayclient.ListOptions{Limit: 20000}); err == nil || !strings.Contains(err.Error(), "exceeds the supported limit") {
		t.Errorf("limit 20000 through the client: %v", err)
	}
	if status, _ := get(t, ts.URL+"/api/jobs/"); status != 404 {
		t.Errorf("unknown route: %d", status)
	}
}

func TestPlacementGroups(t *testing.T) {
	nodes := Generate(NVL72(4))
	s := New(nodes)
	ts, c := startServer(t, s)
	s.SetPlacementGroups([]PlacementGroup{
		{PlacementGroupID: "bb01", Name: "train-node0", CreatorJobID: "02000000", State: "CREATED", IsDetached: true,
			Bundles: []Bundle{
				{PlacementGroupID: "bb01", BundleIndex: 0, UnitResources: map[string]float64{"CPU": 1, "GPU": 1}, NodeID: nodes[1].NodeID},
				{PlacementGroupID: "bb01", BundleIndex: 1, UnitResources: map[string]float64{"CPU": 0.01}},
			},
			Stats: map[string]any{"scheduling_state": "FINISHED", "scheduling_attempt": 1}},
		{PlacementGroupID: "aa02", Name: "old", CreatorJobID: "01000000", State: "REMOVED"},
	})
	groups, err := c.ListPlacementGroups(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Ne("state", "REMOVED")}, Detail: true})
	if err != nil || len(groups) != 1 {
		t.Fatalf("%d groups, %v", len(groups), err)
	}
	g := groups[0]
	if g.Name != "train-node0" || !g.IsDetached || len(g.Bundles) != 2 || g.Bundles[0].NodeID != nodes[1].NodeID ||
		g.Bundles[1].NodeID != "" || g.Bundles[1].BundleID != "bb01:1" || g.Bundles[0].UnitResources["GPU"] != 1 {
		t.Errorf("decoded %+v", g)
	}
	_, body := get(t, ts.URL+"/api/v0/placement_groups?detail=true")
	for _, want := range []string{
		`[{"placement_group_id": "aa02", "name": "old", "creator_job_id": "01000000", "state": "REMOVED", "bundles": [], "is_detached": false, "stats": {}, "topology_strategy": {}, "topology_assignments": {}}, `,
		`"unit_resources": {"CPU": 0.01}, "label_selector": {}}]`,
		`"stats": {"scheduling_attempt": 1, "scheduling_state": "FINISHED"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in\n%s", want, body)
		}
	}
	_, plain := get(t, ts.URL+"/api/v0/placement_groups?filter_keys=is_detached&filter_predicates=%3D&filter_values=true")
	if strings.Contains(plain, "bundles") || !strings.Contains(plain, `"num_filtered": 1`) {
		t.Errorf("non-detail, is_detached filter: %s", plain)
	}
}

func TestPythonJSONScalars(t *testing.T) {
	var s pyWriter
	s.str("a\u2013<b>\"\n")
	if got, want := s.String(), `"a\u2013<b>\"\n"`; got != want {
		t.Errorf("string: got %s, want %s", got, want)
	}
	var w pyWriter
	for _, v := range []float64{4, 0.01, 24065007360, 1e20, 0.00001, -2} {
		w.float(v)
		w.WriteByte(' ')
	}
	if got, want := w.String(), "4.0 0.01 24065007360.0 1e+20 1e-05 -2.0 "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
