package driver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// kvScript reads or writes node claims of one KV namespace with plain ray
// calls (never this package's driver): it writes spec["put"] (key -> JSON
// value), then prints every key under spec["prefix"] with its value.
const kvScript = `import json
from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
ns = spec["kv_namespace"]
for key, value in (spec.get("put") or {}).items():
    internal_kv._internal_kv_put(key, json.dumps(value), overwrite=True, namespace=ns)
out = {}
for key in internal_kv._internal_kv_list(spec["prefix"], namespace=ns) or []:
    raw = internal_kv._internal_kv_get(key, namespace=ns)
    out[key.decode()] = json.loads(raw) if raw else None
print(json.dumps(out))
`

// reservations writes put into kvNamespace and returns every reservation
// there (key -> value).
func reservations(t *testing.T, kvNamespace string, put map[string]any) map[string]map[string]any {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "reservations", kvScript, map[string]any{"address": plainray.GCSAddress(),
		"kv_namespace": kvNamespace, "prefix": record.ReservationPrefix, "put": put})
	lines := strings.Split(out, "\n")
	got := map[string]map[string]any{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("reservations: %v\n%s", err, out)
	}
	return got
}

// gpuNodes lists the ids of the alive nodes with GPUs, sorted.
func gpuNodes(t *testing.T, c *rayclient.Client) []string {
	t.Helper()
	nodes, err := c.ListNodes(context.Background(), rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range nodes {
		if n.ResourcesTotal["GPU"] > 0 {
			ids = append(ids, n.NodeID)
		}
	}
	slices.Sort(ids)
	if len(ids) < 4 {
		t.Skipf("needs 4 GPU nodes, Ray has %d", len(ids))
	}
	return ids
}

// TestAccDriverReservations: creates that select one node reserve what
// their bundles ask there, in Ray's KV, before they make a group. Two 2-GPU
// clusters share a 4-GPU node; a third on it fails naming both holders and
// makes nothing. A fresh reservation whose groups are not placed yet counts
// (a create that does not fit beside it fails, told of the pending share);
// a stale one (no groups, older than its stale time) is deleted and its
// GPUs taken. Deletes release their reservations.
func TestAccDriverReservations(t *testing.T) {
	e := newAccEnv(t)
	kvns := "raytf-test-" + strings.TrimSuffix(e.prefix, "-")
	nodes := gpuNodes(t, e.client)
	type cluster struct {
		spec  clusterspec.Spec
		owner string
	}
	at := func(name, owner, node string) cluster {
		s := clusterspec.Spec{Name: e.prefix + name, Namespace: e.ns, BundleCtPerNode: []int{2}, UseGPUs: true, NumGPUsPerNode: 2,
			MaxColocatedWorkerGroups: 1, SelectNodes: true, SelectedNodeIDs: []string{node}}.WithDefaults()
		return cluster{spec: s, owner: owner}
	}
	request := func(c cluster, action string) contract.Request {
		var m *record.Manifest
		if action == contract.ActionCreate {
			mm := record.NewManifest(c.spec, c.owner, "test", record.Placement{})
			m = &mm
		}
		req := contract.RequestFor(c.spec, action).Owned(c.spec, c.owner, false, m)
		req.Ownership.KVNamespace = kvns // this test's reservations and lock only
		return req
	}
	keyOf := func(c cluster) string { return record.ReservationKey(c.spec.Namespace, c.spec.Name) }
	clusterKey := func(c cluster) string { return c.spec.Namespace + "/" + c.spec.Name }
	lost := func(c cluster) *contract.ErrorFacts {
		t.Helper()
		tr := e.run(context.Background(), request(c, contract.ActionCreate))
		if tr.err == nil || tr.res == nil || tr.res.Error == nil || tr.res.Error.Code != contract.CodeNodesClaimed {
			t.Fatalf("%s's create: err %v, result %+v; want %s", c.spec.Name, tr.err, tr.res, contract.CodeNodesClaimed)
		}
		if _, live := e.livePGs(t)[c.spec.Name+"-node0"]; live {
			t.Errorf("%s's lost race left its group", c.spec.Name)
		}
		if tr := e.mustRun(t, request(c, contract.ActionInspect)); tr.res.Record != nil {
			t.Errorf("%s lost the race yet left a record: %+v", c.spec.Name, tr.res.Record)
		}
		return &tr.res.Error.Facts
	}

	a, b, c := at("resv-a", "owner-a", nodes[0]), at("resv-b", "owner-b", nodes[0]), at("resv-c", "owner-c", nodes[0])
	e.mustRun(t, request(a, contract.ActionCreate))
	e.mustRun(t, request(b, contract.ActionCreate))
	got := reservations(t, kvns, nil)
	for _, x := range []cluster{a, b} {
		if nodesOf, _ := got[keyOf(x)]["nodes"].(map[string]any); got[keyOf(x)]["cluster"] != clusterKey(x) || len(nodesOf) != 1 || nodesOf[nodes[0]] == nil {
			t.Errorf("%s's reservation: %v", x.spec.Name, got[keyOf(x)])
		}
	}
	for _, x := range []cluster{a, b} {
		for _, bundle := range e.livePGs(t)[x.spec.Name+"-node0"].Bundles {
			if bundle.NodeID != nodes[0] {
				t.Errorf("%s has a bundle on %s; want the shared node %s", x.spec.Name, bundle.NodeID, nodes[0])
			}
		}
	}
	f := lost(c)
	var holders []string
	for _, h := range f.Holders {
		holders = append(holders, h.Cluster)
	}
	slices.Sort(holders)
	if want := []string{clusterKey(a), clusterKey(b)}; !slices.Equal(holders, want) {
		t.Errorf("C's lost race names holders %v; want %v", holders, want)
	}

	// A fresh reservation whose group is not placed yet holds 3 of node 1's
	// 4 GPUs (fresh however slow the test runs: it would be stale, and
	// deleted by the next create, stale_seconds after its time); a stale one
	// (no group, old) holds all of node 2's.
	pending := map[string]any{"cluster": e.ns + "/starting", "owner": "busy", "groups": []string{"starting-node0"}, "token": "t-fresh",
		"claimed_at": float64(time.Now().Add(5 * time.Minute).Unix()), "nodes": map[string]any{nodes[1]: map[string]float64{"GPU": 3}}}
	stale := map[string]any{"cluster": e.ns + "/ghost", "owner": "gone", "groups": []string{"ghost-node0"}, "token": "t-stale",
		"claimed_at": 1, "nodes": map[string]any{nodes[2]: map[string]float64{"GPU": 4}}}
	reservations(t, kvns, map[string]any{record.ReservationKey(e.ns, "starting"): pending, record.ReservationKey(e.ns, "ghost"): stale})
	d, g := at("resv-d", "owner-d", nodes[1]), at("resv-g", "owner-g", nodes[2])
	f = lost(d)
	if !slices.ContainsFunc(f.Claimed, func(h contract.NodeHolder) bool {
		return h.NodeID == nodes[1] && h.Pending && h.Resources["GPU"] == 3
	}) {
		t.Errorf("D's lost race does not report the pending share: %+v", f.Claimed)
	}
	e.mustRun(t, request(g, contract.ActionCreate))
	got = reservations(t, kvns, nil)
	if _, left := got[record.ReservationKey(e.ns, "ghost")]; left || got[keyOf(g)] == nil {
		t.Errorf("the stale reservation was not replaced by G's: %v", got)
	}

	for _, x := range []cluster{a, b, g} {
		e.mustRun(t, request(x, contract.ActionDelete))
	}
	got = reservations(t, kvns, nil)
	if _, left := got[record.ReservationKey(e.ns, "starting")]; !left || len(got) != 1 {
		t.Errorf("reservations after the deletes: %v; want only the pending foreign one", got)
	}
	t.Cleanup(func() {
		// The foreign reservations of this test's namespace, written above.
		plainray.Run(t, time.Minute, "removing the test's reservations", `from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
for prefix in (spec["prefix"], spec["lock"]):
    internal_kv._internal_kv_del(prefix, del_by_prefix=True, namespace=spec["kv_namespace"])
`, map[string]any{"address": plainray.GCSAddress(), "kv_namespace": kvns, "prefix": record.ReservationPrefix, "lock": record.ReservationLockKey})
	})
}
