package contract_test

import (
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Writes is what keeps plans and refreshes from changing Ray
// (driver.ReadOnly): only reads and inspects that write no record are
// read-only.
func TestRequestWrites(t *testing.T) {
	spec := clusterspectest.ValidSpec()
	manifest := record.NewManifest(spec, "owner-a", "test", record.Placement{})
	inspect := contract.RequestFor(spec, contract.ActionInspect)
	cases := []struct {
		name string
		req  contract.Request
		want bool
	}{
		{"read", contract.ReadRequest(spec.Namespace, spec.Name), false},
		{"bare inspect", inspect, false},
		{"inspect with ownership, nothing to write", inspect.Owned(spec, "owner-a", false, nil), false},
		{"inspect that writes the record", inspect.Owned(spec, "owner-a", false, &manifest), true},
		{"inspect that claims (import's apply)", inspect.Owned(spec, "owner-a", true, nil), true},
		{"create", contract.RequestFor(spec, contract.ActionCreate), true},
		{"delete", contract.RequestFor(spec, contract.ActionDelete), true},
		{"record", contract.RequestFor(spec, contract.ActionRecord).Owned(spec, "owner-a", false, &manifest), true},
		{"batch of reads", contract.BatchRequest([]contract.Request{contract.ReadRequest(spec.Namespace, "a"), inspect}), false},
		{"batch with a create", contract.BatchRequest([]contract.Request{inspect, contract.RequestFor(spec, contract.ActionCreate)}), true},
	}
	for _, c := range cases {
		if got := c.req.Writes(); got != c.want {
			t.Errorf("%s: Writes() = %v, want %v", c.name, got, c.want)
		}
	}
}
