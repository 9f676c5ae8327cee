package driver

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// TestAccDriverDirectGCS: record and delete reach the GCS without ray.init,
// and keep the ownership rules there: another owner's delete touches
// nothing, the owner's delete removes the groups and leaves a tombstone.
// What they wrote is read back through ray (inspect), the other path.
func TestAccDriverDirectGCS(t *testing.T) {
	e := newAccEnv(t)
	spec := vcluster.Spec{Name: e.prefix + "direct", Namespace: e.ns, BundleCtPerNode: []int{1, 1},
		MaxColocatedWorkerGroups: 1}.WithDefaults()
	owned := func(action, owner string, m *vcluster.Manifest) vcluster.Request {
		return spec.Request(action).Owned(spec, owner, false, m)
	}
	m := vcluster.NewManifest(spec, "owner-a", "test", vcluster.Placement{})
	if tr := e.mustRun(t, owned(vcluster.ActionCreate, "owner-a", &m)); len(tr.res.Groups) != 2 {
		t.Fatalf("create = %+v", tr.res)
	}

	m.ProviderVersion = "test-rewritten"
	tr := e.mustRun(t, owned(vcluster.ActionRecord, "owner-a", &m))
	if tr.connect != "gcs" {
		t.Errorf("record connected through %q, want the direct GCS path", tr.connect)
	}
	tr = e.mustRun(t, owned(vcluster.ActionInspect, "owner-a", nil))
	if r := tr.res.Record; r == nil || r.Owner != "owner-a" || r.ProviderVersion != "test-rewritten" {
		t.Fatalf("record read through ray after the direct record = %+v", r)
	}

	tr = e.mustRun(t, owned(vcluster.ActionDelete, "owner-b", nil))
	if tr.connect != "gcs" || tr.res.OtherOwner == nil || tr.res.OtherOwner.Owner != "owner-a" || len(tr.res.Removed) != 0 {
		t.Fatalf("delete by another owner (through %q) = %+v", tr.connect, tr.res)
	}
	if live := e.livePGs(t); len(live) != 2 {
		t.Fatalf("another owner's delete left %d of 2 groups: %v", len(live), mapKeys(live))
	}

	tr = e.mustRun(t, owned(vcluster.ActionDelete, "owner-a", nil))
	if tr.connect != "gcs" || len(tr.res.Removed) != 2 {
		t.Fatalf("owner's delete (through %q) = %+v", tr.connect, tr.res)
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Fatalf("still live after the owner's delete: %v", mapKeys(live))
	}
	tr = e.mustRun(t, owned(vcluster.ActionInspect, "owner-a", nil))
	if tr.res.Record != nil || tr.res.Tombstone == nil || tr.res.Tombstone.DeletedBy != "owner-a" || tr.res.Tombstone.RecordOwner != "owner-a" {
		t.Fatalf("after delete: record %+v, tombstone %+v", tr.res.Record, tr.res.Tombstone)
	}
}
