package contract

import (
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// StateMissing is the state of a group Ray does not have; the other states
// are Ray's own (raystate.PlacementGroupState*).
const StateMissing = "MISSING"

// Driver actions.
const (
	ActionCreate  = "create"
	ActionDelete  = "delete"
	ActionInspect = "inspect"
	// ActionRecord rewrites the cluster's record (when the provider's rank
	// order differs from the driver's natural order).
	ActionRecord = "record"
	// ActionRead returns a cluster's record and tombstone and writes nothing
	// (the ray_virtual_cluster data source).
	ActionRead = "read"
	// ActionResize changes a per-node cluster's logical nodes in place: it
	// creates the groups the request lists that do not exist, waits for
	// them, and only then removes Request.RemoveGroups (issue #55).
	ActionResize = "resize"
	// ActionBatch runs the requests in Request.Batch in one driver job,
	// each with its own result (Result.Batch).
	ActionBatch = "batch"
)

// Error kinds the driver reports (ResultError.Kind, DriverError.Kind).
const (
	KindTimeout    = "timeout"
	KindInfeasible = "infeasible"
	KindConflict   = "conflict"
	KindInvalid    = "invalid"
	KindInternal   = "internal"
)

// Driver tuning, sent in every request so that driver.py has no constants.
const (
	driverPortTries         = 50  // random bind attempts per probe task
	driverPortRounds        = 8   // re-probe rounds to resolve per-node port collisions
	driverProbeBatch        = 256 // nodes probed at once (one task each in flight)
	driverMinProbeSeconds   = 60
	driverRemoveWaitSeconds = 60
	// A group removed while a create waits for it is created again at most
	// this often; after that the removal is reported instead of fought.
	driverMaxRecreates = 3
	// A delete removes one name at most this often (a name resolves to one
	// live group at a time; this stops one that keeps coming back).
	driverMaxRemovalsPerName = 16
	driverMinRemoveWait      = 10
	driverGCSCallSeconds     = 30
	driverProbeGPUFraction   = 0.01
	// A node claim's takeover key older than this was left by a run killed
	// mid-takeover, and is removed.
	driverTakeoverSeconds = 10
	// A create waits this long for the reservation lock, and a cluster Ray
	// places (or a create choosing a node one could land on) this long for
	// pending reservations to be placed, before it reports the holders; a
	// cluster Ray places waits at most driverPlaceWaitSeconds for Ray to
	// place its groups before it settles its reservation (no lock held).
	driverLockWaitSeconds    = 60
	driverPendingWaitSeconds = 60
	driverPlaceWaitSeconds   = 5
)

// RequestVersion is the driver request format (Request.Version).
const RequestVersion = 1

// DriverContract is the contract constants every request carries.
func DriverContract() Contract {
	return Contract{
		DomainPrefix:         topology.NVLinkDomainPrefix,
		DomainUnknown:        topology.NVLinkDomainUnknown,
		TopoRankKey:          topology.TopoRankKey,
		TopoRankUnknown:      topology.TopoRankUnknown,
		StateCreated:         raystate.PlacementGroupStateCreated,
		StateRemoved:         raystate.PlacementGroupStateRemoved,
		StateMissing:         StateMissing,
		GroupResourceMarker:  raystate.GroupResourceMarker,
		PortTries:            driverPortTries,
		PortRounds:           driverPortRounds,
		ProbeBatch:           driverProbeBatch,
		MinProbeSeconds:      driverMinProbeSeconds,
		RemoveWaitSeconds:    driverRemoveWaitSeconds,
		RankLabelDigits:      clusterspec.MaxRankLabelDigits,
		AmountUnit:           AmountUnit,
		MaxRecreates:         driverMaxRecreates,
		MaxRemovalsPerName:   driverMaxRemovalsPerName,
		MinRemoveWaitSeconds: driverMinRemoveWait,
		GCSCallSeconds:       driverGCSCallSeconds,
		ProbeGPUFraction:     driverProbeGPUFraction,
		TakeoverSeconds:      driverTakeoverSeconds,
		LockWaitSeconds:      driverLockWaitSeconds,
		PendingWaitSeconds:   driverPendingWaitSeconds,
		PlaceWaitSeconds:     driverPlaceWaitSeconds,
	}
}

// AmountUnit is Ray's resource unit as the driver gets it.
const AmountUnit = topology.ResourceUnit

// Limits of a driver request.
const (
	maxResourceAmount = 1e18
	maxRunIDLength    = 128
)
