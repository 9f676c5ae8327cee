package driver

import (
	"os"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// The data source's read returns the record and tombstone untouched.
func TestDriverReadChangesNothing(t *testing.T) {
	w := newOwnershipWorld(t)
	w.setRecord("other")
	before, _ := os.ReadFile(w.kvFile)
	res := w.run(contract.ReadRequest(w.spec.Namespace, w.spec.Name))
	if !res.OK || res.Record == nil || res.Record.Owner != "other" || res.Record.CreatedAt != "2026-12-02T18:00:00Z" || res.Tombstone != nil {
		t.Fatalf("read: %+v %+v", res, res.Error)
	}
	if after, _ := os.ReadFile(w.kvFile); string(after) != string(before) {
		t.Fatalf("read wrote the KV: %s", after)
	}
	_ = os.Remove(w.kvFile)
	res = w.run(contract.ReadRequest(w.spec.Namespace, w.spec.Name))
	if !res.OK || res.Record != nil {
		t.Fatalf("read of a missing record: %+v %+v", res, res.Error)
	}
	if _, err := os.Stat(w.kvFile); err == nil {
		t.Fatal("read of a missing record wrote the KV")
	}
}

func TestReadRequestNeedsOwnership(t *testing.T) {
	req := contract.ReadRequest("ns", "vc")
	if err := req.Validate(); err != nil {
		t.Fatalf("read request: %v", err)
	}
	req.Ownership = nil
	if err := req.Validate(); err == nil {
		t.Fatal("a read without ownership validated")
	}
}

// A read naming groups reports those that do not live in its namespace:
// the plan's ownership check tells this namespace's groups from another's.
func TestDriverReadReportsGroupsOutsideTheNamespace(t *testing.T) {
	w := newOwnershipWorld(t)
	w.groups = []string{"vc-node0"}
	res := w.run(contract.ReadRequest(w.spec.Namespace, w.spec.Name, "vc-node0", "vc-unified"))
	if !res.OK || res.Record != nil || len(res.Missing) != 1 || res.Missing[0] != "vc-unified" {
		t.Fatalf("read with groups: %+v %+v", res, res.Error)
	}
}
