package clusterspec

import (
	"fmt"
	"time"

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
)
