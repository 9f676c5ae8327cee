package driver

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// TestAccDriverDirectGCS: record and delete reach the GCS without ray.init,
// and keep the ownership rules there: another owner's delete touches
// nothing, the owner's delete removes the groups and leaves a tombstone.
// What they wrote is read back through ray (inspect), the other path.
func TestAccDriverDirectGCS(t *testing.T) {
	e := newAccEnv(t)
	spec := clusterspec.Spec{Name: e.prefix + "direct", Namespace: e.ns, BundleCtPerNode: []int{1, 1},
		MaxColocatedWorkerGroups: 1}.WithDefaults()
	owned := func(action, owner string, m *record.Manifest) contract.Request {
		return contract.RequestFor(spec, action).Owned(spec, owner, false, m)
	}
	m := record.NewManifest(spec, "owner-a", "test", record.Placement{})
	if tr := e.mustRun(t, owned(contract.ActionCreate, "owner-a", &m)); len(tr.res.Groups) != 2 {
		t.Fatalf("create = %+v", tr.res)
	}

	m.ProviderVersion = "test-rewritten"
	tr := e.mustRun(t, owned(contract.ActionRecord, "owner-a", &m))
	if tr.connect != "gcs" {
		t.Errorf("record connected through %q, want the direct GCS path", tr.connect)
	}
	tr = e.mustRun(t, owned(contract.ActionInspect, "owner-a", nil))
	if r := tr.res.Record; r == nil || r.Owner != record.OwnerDigest("owner-a") || r.ProviderVersion != "test-rewritten" {
		t.Fatalf("record read through ray after the direct record = %+v", r)
	}

	tr = e.mustRun(t, owned(contract.ActionDelete, "owner-b", nil))
	if tr.connect != "gcs" || tr.res.OtherOwner == nil || tr.res.OtherOwner.Owner != record.OwnerDigest("owner-a") || len(tr.res.Removed) != 0 {
		t.Fatalf("delete by another owner (through %q) = %+v", tr.connect, tr.res)
	}
	if live := e.livePGs(t); len(live) != 2 {
		t.Fatalf("another owner's delete left %d of 2 groups: %v", len(live), mapKeys(live))
	}

	tr = e.mustRun(t, owned(contract.ActionDelete, "owner-a", nil))
	if tr.connect != "gcs" || len(tr.res.Removed) != 2 {
		t.Fatalf("owner's delete (through %q) = %+v", tr.connect, tr.res)
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Fatalf("still live after the owner's delete: %v", mapKeys(live))
	}
	tr = e.mustRun(t, owned(contract.ActionInspect, "owner-a", nil))
	if tr.res.Record != nil || tr.res.Tombstone == nil || tr.res.Tombstone.DeletedBy != record.OwnerDigest("owner-a") || tr.res.Tombstone.RecordOwner != record.OwnerDigest("owner-a") {
		t.Fatalf("after delete: record %+v, tombstone %+v", tr.res.Record, tr.res.Tombstone)
	}
}
