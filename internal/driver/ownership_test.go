package driver

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// writeKVStub is a "ray" whose init works, whose internal KV lives in a JSON
// file and whose only placement groups are those named in RAYTF_STUB_GROUPS:
// enough to run driver.py's ownership decisions without a cluster.
func writeKVStub(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kv := "import json, os\n" +
		"P = os.environ['RAYTF_STUB_KV']\n" +
		"def _load():\n    return json.load(open(P)) if os.path.exists(P) else {}\n" +
		"def _key(k, ns):\n    return '%s|%s' % (ns, k)\n" +
		"def _internal_kv_get(k, namespace=None):\n    v = _load().get(_key(k, namespace))\n    return v.encode() if v is not None else None\n" +
		"def _internal_kv_put(k, v, overwrite=True, namespace=None):\n    d = _load(); d[_key(k, namespace)] = v if isinstance(v, str) else v.decode()\n    json.dump(d, open(P, 'w'))\n    return True\n" +
		"def _internal_kv_del(k, del_by_prefix=False, namespace=None):\n    d = _load(); d.pop(_key(k, namespace), None)\n    json.dump(d, open(P, 'w'))\n    return 1\n"
	pg := "import os\n" +
		"class PG:\n    def __init__(self, name):\n        self.name = name\n" +
		"def get_placement_group(name):\n    if name in os.environ.get('RAYTF_STUB_GROUPS', '').split(','):\n        return PG(name)\n    raise ValueError(name)\n" +
		"def placement_group_table(pg):\n    return {'state': 'CREATED', 'strategy': 'PACK', 'placement_group_id': 'id-' + pg.name, 'bundles': {0: {'CPU': 1.0}}}\n" +
		"def remove_placement_group(pg):\n    raise AssertionError('the driver must not remove ' + pg.name)\n" +
		"placement_group = None\n"
	files := map[string]string{
		"ray/__init__.py": "__version__ = 'stub'\n" +
			"def remote(*a, **k):\n    return (lambda f: f) if not a or not callable(a[0]) else a[0]\n" +
			"def init(**k):\n    pass\n" +
			"def nodes():\n    return []\n",
		"ray/util/__init__.py":              "",
		"ray/experimental/__init__.py":      "",
		"ray/experimental/internal_kv.py":   kv,
		"ray/util/placement_group.py":       pg,
		"ray/util/scheduling_strategies.py": "PlacementGroupSchedulingStrategy = None\n",
	}
	writeFiles(t, dir, files)
	return dir
}

type ownershipWorld struct {
	t            *testing.T
	py, stub     string
	kvFile       string
	groups       []string
	spec         clusterspec.Spec
	record, tomb string
}

func newOwnershipWorld(t *testing.T) *ownershipWorld {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1}, MaxColocatedWorkerGroups: 1}.WithDefaults()
	return &ownershipWorld{t: t, py: py, stub: writeKVStub(t), kvFile: filepath.Join(t.TempDir(), "kv.json"), spec: spec,
		record: record.KVNamespace + "|" + record.RecordKey(spec.Namespace, spec.Name),
		tomb:   record.KVNamespace + "|" + record.TombstoneKey(spec.Namespace, spec.Name)}
}

func (w *ownershipWorld) setRecord(owner string) {
	raw, _ := json.Marshal(map[string]string{w.record: `{"owner": "` + owner + `", "created_at": "2026-12-02T18:00:00Z"}`})
	if err := os.WriteFile(w.kvFile, raw, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *ownershipWorld) kv() map[string]string {
	out := map[string]string{}
	if raw, err := os.ReadFile(w.kvFile); err == nil {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

func (w *ownershipWorld) run(req contract.Request) *contract.Result {
	w.t.Helper()
	raw, _ := json.Marshal(req)
	return w.runRaw(raw)
}

// runRaw runs the driver on a request's JSON.
func (w *ownershipWorld) runRaw(raw []byte) *contract.Result {
	w.t.Helper()
	cmd := exec.Command(w.py, "-c", bootstrapCode(), EncodeSpecArg(raw))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+w.stub, "RAYTF_STUB_KV="+w.kvFile, "RAYTF_STUB_GROUPS="+strings.Join(w.groups, ","))
	out, _ := cmd.CombinedOutput()
	res, err := ParseResult(string(out), "")
	if err != nil {
		w.t.Fatalf("%v\n%s", err, out)
	}
	return res
}

func (w *ownershipWorld) deleteAs(owner string) *contract.Result {
	return w.run(contract.RequestFor(w.spec, contract.ActionDelete).Owned(w.spec, owner, false, nil))
}

func (w *ownershipWorld) createAs(owner string) *contract.Result {
	m := record.NewManifest(w.spec, owner, "test", record.Placement{})
	return w.run(contract.RequestFor(w.spec, contract.ActionCreate).Owned(w.spec, owner, false, &m))
}

func TestDriverDeleteLeavesOtherOwnersGroupsAlone(t *testing.T) {
	w := newOwnershipWorld(t)
	w.groups = []string{"vc-node0"}
	w.setRecord("other")
	res := w.deleteAs("mine")
	if !res.OK || res.OtherOwner == nil || res.OtherOwner.Owner != "other" || len(res.Removed) != 0 {
		t.Fatalf("delete by a non-owner: %+v %+v", res, res.Error)
	}
	if _, ok := w.kv()[w.record]; !ok {
		t.Fatal("the other owner's record was touched")
	}
	// Groups without any record are not this state's either.
	w.setRecord("")
	_ = os.Remove(w.kvFile)
	if res := w.deleteAs("mine"); !res.OK || res.OtherOwner == nil || res.OtherOwner.Owner != "" {
		t.Fatalf("delete of unrecorded groups: %+v", res)
	}
	// A state from before owners existed may still delete unrecorded groups
	// (here none are left to remove: the stub has no removable groups).
	w.groups = nil
	if res := w.deleteAs(""); !res.OK || res.OtherOwner != nil {
		t.Fatalf("legacy delete: %+v %+v", res, res.Error)
	}
}

func TestDriverDeleteByOwnerLeavesTombstone(t *testing.T) {
	w := newOwnershipWorld(t)
	w.setRecord("mine")
	res := w.deleteAs("mine")
	if !res.OK || res.OtherOwner != nil || len(res.Missing) != 1 {
		t.Fatalf("delete by the owner: %+v %+v", res, res.Error)
	}
	kv := w.kv()
	if _, ok := kv[w.record]; ok {
		t.Fatal("record not removed")
	}
	var tomb record.Tombstone
	if err := json.Unmarshal([]byte(kv[w.tomb]), &tomb); err != nil || tomb.DeletedBy != "mine" || tomb.RecordOwner != "mine" || tomb.DeletedAt == "" {
		t.Fatalf("tombstone %q: %v", kv[w.tomb], err)
	}
	// Inspect reports it, for a state that finds its cluster gone.
	res = w.run(contract.RequestFor(w.spec, contract.ActionInspect).Owned(w.spec, "former", false, nil))
	if !res.OK || res.Tombstone == nil || res.Tombstone.DeletedBy != "mine" {
		t.Fatalf("inspect: %+v", res)
	}
}

func TestDriverCreateRefusesGroupsItDoesNotOwn(t *testing.T) {
	w := newOwnershipWorld(t)
	w.groups = []string{"vc-node0"}
	w.setRecord("other")
	res := w.createAs("mine")
	if res.OK || res.Error == nil || res.Error.Kind != contract.KindConflict ||
		res.Error.Message != `placement groups of "vc" already exist in namespace terraform-ray (created 2026-12-02T18:00:00Z); import it or choose another name` {
		t.Fatalf("create over another owner's groups: %+v %+v", res, res.Error)
	}
	if !strings.Contains(w.kv()[w.record], `"owner": "other"`) {
		t.Fatalf("record changed: %s", w.kv()[w.record])
	}
	_ = os.Remove(w.kvFile)
	res = w.createAs("mine")
	if res.OK || res.Error == nil || res.Error.Kind != contract.KindConflict || !strings.Contains(res.Error.Message, "no ownership record") {
		t.Fatalf("create over unrecorded groups: %+v %+v", res, res.Error)
	}
	if len(w.kv()) != 0 {
		t.Fatalf("a refused create wrote %v", w.kv())
	}
}

func TestDriverUpdateRefusesAnotherOwnersCluster(t *testing.T) {
	w := newOwnershipWorld(t)
	w.setRecord("other")
	m := record.NewManifest(w.spec, "mine", "test", record.Placement{})
	res := w.run(contract.RequestFor(w.spec, contract.ActionInspect).Owned(w.spec, "mine", false, &m))
	if res.OK || res.Error == nil || res.Error.Kind != contract.KindConflict || !strings.Contains(res.Error.Message, "another Terraform state (owner other") {
		t.Fatalf("update of another owner's cluster: %+v %+v", res, res.Error)
	}
}

func TestDriverRecordRewritesOnlyItsOwnRecord(t *testing.T) {
	w := newOwnershipWorld(t)
	w.setRecord("mine")
	m := record.NewManifest(w.spec, "mine", "test", record.Placement{})
	m.SortedBundleIndices = []int{0}
	res := w.run(contract.RequestFor(w.spec, contract.ActionRecord).Owned(w.spec, "mine", false, &m))
	if !res.OK || res.Record == nil || res.Record.CreatedAt != "2026-12-02T18:00:00Z" || res.Record.UpdatedAt == "" {
		t.Fatalf("record by the owner: %+v %+v", res, res.Error)
	}
	var stored record.Manifest
	if err := json.Unmarshal([]byte(w.kv()[w.record]), &stored); err != nil || stored.Owner != "mine" || stored.SchemaVersion != record.ManifestSchemaVersion ||
		len(stored.Groups) != 1 || stored.Groups[0].Name != "vc-node0" {
		t.Fatalf("stored record %q: %v", w.kv()[w.record], err)
	}
	w.setRecord("other")
	res = w.run(contract.RequestFor(w.spec, contract.ActionRecord).Owned(w.spec, "mine", false, &m))
	if res.OK || res.Error == nil || res.Error.Kind != contract.KindConflict {
		t.Fatalf("record over another owner's: %+v", res)
	}
}
