package driver

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// The driver's read (record and tombstone untouched, the groups outside its
// namespace): driverpy/tests/test_ownership.py.
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
