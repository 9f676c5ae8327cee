package clusterspec

import (
	"cmp"
)

// Capacity checks (capacity_check): what the plan and the apply compare a
// cluster with before any placement group is created.
const (
	// CapacityFree checks the resources free now: a cluster that does not fit
	// what other placement groups leave fails the plan.
	CapacityFree = "free"
	// CapacityTotal is the reference's rule: only a cluster the alive nodes'
	// total resources can never hold fails; the apply waits ready_timeout
	// for Ray to place the groups.
	CapacityTotal = "total"
	// CapacityNone checks no capacity at all (autoscaling clusters, where a
	// pending placement group is what makes Ray add nodes); the apply waits.
	CapacityNone = "none"
	// DefaultCapacityCheck is the provider's default.
	DefaultCapacityCheck = CapacityFree
	// AttrCapacityCheck names the attribute (resource and provider).
	AttrCapacityCheck = "capacity_check"
)

// CapacityChecks lists the valid capacity_check values.
var CapacityChecks = []string{CapacityFree, CapacityTotal, CapacityNone}

// CapacityMode is CapacityCheck, or DefaultCapacityCheck when unset.
func (s Spec) CapacityMode() string { return cmp.Or(s.CapacityCheck, DefaultCapacityCheck) }
