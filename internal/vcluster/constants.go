package vcluster

import (
	"fmt"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Provider defaults.
const (
	// DefaultNamespace is the Ray namespace of the placement groups.
	DefaultNamespace = "terraform-ray"
	// DefaultPythonExecutable runs the embedded driver inside the Ray job.
	DefaultPythonExecutable = "python"
	// DefaultOperationTimeout bounds one create, read, update or delete.
	DefaultOperationTimeout = 10 * time.Minute
)

// Defaults of the reference's RayVirtualCluster constructor.
const (
	DefaultUseGPUs                  = true
	DefaultNumGPUsPerNode           = 8
	DefaultMaxColocatedWorkerGroups = 1
	DefaultUseUnifiedPG             = false
	// DefaultStrategy is the unified group's placement_group_strategy.
	DefaultStrategy = topology.StrategySpread
	// PerNodeStrategy is the strategy of every per-node group.
	PerNodeStrategy = topology.StrategyPack
	// DefaultReadyTimeoutSeconds is the reference's 3-minute wait for groups.
	DefaultReadyTimeoutSeconds = 180
)

// DefaultReadyTimeout is DefaultReadyTimeoutSeconds as a duration, and
// DefaultReadyTimeoutText its configuration spelling ("180s").
var (
	DefaultReadyTimeout     = DefaultReadyTimeoutSeconds * time.Second
	DefaultReadyTimeoutText = fmt.Sprintf("%ds", DefaultReadyTimeoutSeconds)
)

// DefaultPorts is the probed port range (the reference's master port range).
var DefaultPorts = topology.DefaultMasterPortRange

// Limits of a Spec (not in the reference; they keep requests and plans small).
// MaxLogicalNodes is one per-node placement group per entry: 16,384 holds the
// largest RL runs (2,048 nodes x 8 GPUs, even written one entry per GPU) and
// every path over the list is linear (TestSpecPipelineLinear); the limit
// stays so that an imported "<name>-node<i>" cannot size a list by i.
const (
	MaxLogicalNodes       = 16384
	MaxBundlesPerNode     = 4096
	MaxGPUsPerNode        = 4096
	MaxColocatedGroups    = 1024
	MaxWorldSize          = 1 << 20
	MaxNameLength         = 100
	LinuxEphemeralPortLow = 32768
	MinPort               = 1
	MaxPortRangeHigh      = topology.MaxPortRangeHigh
	maxResourceAmount     = 1e18
	maxRunIDLength        = 128
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

// Ray resource-name conventions the driver and the snapshot rely on.
const (
	// GroupResourceMarker appears in the per-placement-group resources Ray
	// adds to nodes (e.g. CPU_group_<id>), which are not node capacity.
	GroupResourceMarker = "_group_"
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
		GroupResourceMarker:  GroupResourceMarker,
		PortTries:            driverPortTries,
		PortRounds:           driverPortRounds,
		ProbeBatch:           driverProbeBatch,
		MinProbeSeconds:      driverMinProbeSeconds,
		RemoveWaitSeconds:    driverRemoveWaitSeconds,
		RankLabelDigits:      maxRankLabelDigits,
		AmountUnit:           AmountUnit,
		MaxRecreates:         driverMaxRecreates,
		MaxRemovalsPerName:   driverMaxRemovalsPerName,
		MinRemoveWaitSeconds: driverMinRemoveWait,
		GCSCallSeconds:       driverGCSCallSeconds,
		ProbeGPUFraction:     driverProbeGPUFraction,
	}
}
