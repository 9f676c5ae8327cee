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

// claims writes put into kvNamespace and returns every claim there
// (key -> value).
func claims(t *testing.T, kvNamespace string, put map[string]any) map[string]map[string]any {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "node claims", kvScript, map[string]any{"address": plainray.GCSAddress(),
		"kv_namespace": kvNamespace, "prefix": record.ClaimKey(""), "put": put})
	lines := strings.Split(out, "\n")
	got := map[string]map[string]any{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("claims: %v\n%s", err, out)
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

// TestAccDriverNodeClaims: a create that selects its node claims it in Ray's
// KV before it makes a group; another cluster's create for the same node
// fails with the holder and makes nothing; a claim whose groups are gone
// for longer than its stale time is taken over, a fresh one is not; delete
// releases the claims.
func TestAccDriverNodeClaims(t *testing.T) {
	e := newAccEnv(t)
	kvns := "raytf-test-" + strings.TrimSuffix(e.prefix, "-")
	nodes := gpuNodes(t, e.client)
	type cluster struct {
		spec  clusterspec.Spec
		owner string
	}
	at := func(name, owner, node string) cluster {
		s := clusterspec.Spec{Name: e.prefix + name, Namespace: e.ns, BundleCtPerNode: []int{1}, MaxColocatedWorkerGroups: 1,
			SelectNodes: true, SelectedNodeIDs: []string{node}}.WithDefaults()
		return cluster{spec: s, owner: owner}
	}
	request := func(c cluster, action string) contract.Request {
		var m *record.Manifest
		if action == contract.ActionCreate {
			mm := record.NewManifest(c.spec, c.owner, "test", record.Placement{})
			m = &mm
		}
		req := contract.RequestFor(c.spec, action).Owned(c.spec, c.owner, false, m)
		req.Ownership.KVNamespace = kvns // this test's claims only
		return req
	}
	clusterKey := func(c cluster) string { return c.spec.Namespace + "/" + c.spec.Name }
	a, b := at("claim-a", "owner-a", nodes[0]), at("claim-b", "owner-b", nodes[0])
	e.mustRun(t, request(a, contract.ActionCreate))
	if got := claims(t, kvns, nil); got[record.ClaimKey(nodes[0])]["cluster"] != clusterKey(a) {
		t.Fatalf("claims after A's create: %v", got)
	}

	tr := e.run(context.Background(), request(b, contract.ActionCreate))
	if tr.err == nil || tr.res == nil || tr.res.Error == nil || tr.res.Error.Code != contract.CodeNodesClaimed {
		t.Fatalf("B's create on A's node: err %v, result %+v", tr.err, tr.res)
	}
	f := tr.res.Error.Facts
	if len(f.Holders) != 1 || f.Holders[0].Cluster != clusterKey(a) || f.Holders[0].Owner != "owner-a" ||
		f.Holders[0].NodeID != nodes[0] || !slices.ContainsFunc(f.Claimed, func(h contract.NodeHolder) bool {
		return h.NodeID == nodes[0] && h.Cluster == clusterKey(a) && slices.Equal(h.Groups, []string{a.spec.Name + "-node0"})
	}) {
		t.Errorf("B's lost race reports holders %+v, claimed %v", f.Holders, f.Claimed)
	}
	if _, live := e.livePGs(t)[b.spec.Name+"-node0"]; live {
		t.Errorf("B's lost race left its group")
	}

	// A claim left by a run that died (no groups, older than its stale
	// time) is taken over; a fresh one holds, and so does an old one whose
	// groups are alive (A's group stands for them).
	stale := map[string]any{"cluster": e.ns + "/ghost", "owner": "gone", "groups": []string{"ghost-node0"}, "token": "t-stale", "claimed_at": 1}
	fresh := map[string]any{"cluster": e.ns + "/starting", "owner": "busy", "groups": []string{"starting-node0"}, "token": "t-fresh",
		"claimed_at": float64(time.Now().Unix())}
	oldAlive := map[string]any{"cluster": e.ns + "/old", "owner": "old", "groups": []string{a.spec.Name + "-node0"}, "token": "t-old",
		"claimed_at": 1}
	claims(t, kvns, map[string]any{record.ClaimKey(nodes[1]): stale, record.ClaimKey(nodes[2]): fresh,
		record.ClaimKey(nodes[3]): oldAlive})
	c, d, g := at("claim-c", "owner-c", nodes[1]), at("claim-d", "owner-d", nodes[2]), at("claim-g", "owner-g", nodes[3])
	e.mustRun(t, request(c, contract.ActionCreate))
	for _, lost := range []cluster{d, g} {
		tr := e.run(context.Background(), request(lost, contract.ActionCreate))
		if tr.err == nil || tr.res == nil || tr.res.Error == nil || tr.res.Error.Code != contract.CodeNodesClaimed {
			t.Errorf("%s took a node whose claim still holds: %v", lost.spec.Name, tr.err)
		}
		if tr := e.mustRun(t, request(lost, contract.ActionInspect)); tr.res.Record != nil {
			t.Errorf("%s lost the race yet left a record: %+v", lost.spec.Name, tr.res.Record)
		}
	}
	got := claims(t, kvns, nil)
	if got[record.ClaimKey(nodes[1])]["cluster"] != clusterKey(c) {
		t.Errorf("the stale claim was not taken over: %v", got)
	}

	e.mustRun(t, request(a, contract.ActionDelete))
	e.mustRun(t, request(c, contract.ActionDelete))
	got = claims(t, kvns, nil)
	if _, left := got[record.ClaimKey(nodes[0])]; left || len(got) != 2 {
		t.Errorf("claims after the deletes: %v; want only the two foreign ones that held", got)
	}
	t.Cleanup(func() {
		// The foreign claim of this test's namespace, written above.
		plainray.Run(t, time.Minute, "removing the test's claims", `from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
internal_kv._internal_kv_del(spec["prefix"], del_by_prefix=True, namespace=spec["kv_namespace"])
`, map[string]any{"address": plainray.GCSAddress(), "kv_namespace": kvns, "prefix": record.ClaimKey("")})
	})
}
