package placement

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// CreateRequest is the driver request that creates spec's groups for the
// state with owner token owner: the groups, the contract constants, the
// node claims, and the record the driver writes before the first group
// (provider version version), filled with the placement it observes.
func CreateRequest(spec clusterspec.Spec, owner, version string) contract.Request {
	template := record.NewManifest(spec, owner, version, record.Placement{})
	return contract.RequestFor(spec, contract.ActionCreate).Owned(spec, owner, false, &template)
}

// DeleteRequest removes spec's groups when the record names owner (or,
// with owner "", when there is no record); another state's are left.
func DeleteRequest(spec clusterspec.Spec, owner string) contract.Request {
	return contract.RequestFor(spec, contract.ActionDelete).Owned(spec, owner, false, nil)
}
