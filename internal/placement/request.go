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

// ResizeRequest is the driver request that changes spec's per-node cluster
// to spec's shape in place: it creates the groups of spec that do not
// exist, reserving the new shape, and once they are ready removes remove
// (the groups of the nodes spec no longer has).
func ResizeRequest(spec clusterspec.Spec, owner, version string, remove []string) contract.Request {
	template := record.NewManifest(spec, owner, version, record.Placement{})
	r := contract.RequestFor(spec, contract.ActionResize).Owned(spec, owner, false, &template)
	r.RemoveGroups = remove
	return r
}
