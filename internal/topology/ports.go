package topology

import "fmt"

// MaxPortRangeHigh is the largest exclusive upper bound (port 65535 usable).
const MaxPortRangeHigh = 65536

// PortRange is a half-open port range [Low, High), as used by
// _bind_socket_in_range (randint(low, high-1)).
type PortRange struct {
	Low, High int
}

// DefaultMasterPortRange is RayVirtualCluster's fallback master port range.
var DefaultMasterPortRange = PortRange{DefaultMasterPortRangeLow, DefaultMasterPortRangeHigh}

// PortProblem is one violated rule of a port range: the bound at fault
// (port_range_low or port_range_high) and why.
type PortProblem struct {
	Field, Message string
}

// Problems lists every violated rule (1 <= Low < High <= 65536).
func (r PortRange) Problems() []PortProblem {
	var out []PortProblem
	if r.Low < 1 {
		out = append(out, PortProblem{"port_range_low", fmt.Sprintf("port_range_low (%d) must be >= 1", r.Low)})
	}
	if r.High > MaxPortRangeHigh {
		out = append(out, PortProblem{"port_range_high", fmt.Sprintf("port_range_high (%d) must be <= %d (the range is exclusive of port_range_high)", r.High, MaxPortRangeHigh)})
	}
	if r.Low >= r.High {
		out = append(out, PortProblem{"port_range_high", fmt.Sprintf("port_range_low (%d) must be lower than port_range_high (%d)", r.Low, r.High)})
	}
	return out
}

// Validate checks 1 <= Low < High <= 65536; errors wrap ErrInvalidArgument.
func (r PortRange) Validate() error {
	if p := r.Problems(); len(p) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, p[0].Message)
	}
	return nil
}

// Size is the number of ports in the range (0 if empty or inverted).
func (r PortRange) Size() int { return max(0, r.High-r.Low) }

// Contains reports whether Low <= port < High.
func (r PortRange) Contains(port int) bool { return port >= r.Low && port < r.High }

// Overlaps reports whether the two half-open ranges share a port.
func (r PortRange) Overlaps(o PortRange) bool {
	return max(r.Low, o.Low) < min(r.High, o.High)
}

// String renders the range as "[low, high)".
func (r PortRange) String() string { return fmt.Sprintf("[%d, %d)", r.Low, r.High) }

// VLLMEnginePortRange is engine i's rendezvous block
// [7000+i*100, 7000+(i+1)*100).
func VLLMEnginePortRange(engineIndex int) PortRange {
	lo := DefaultVLLMPortRangeLow + engineIndex*DefaultVLLMPortsPerEngine
	return PortRange{lo, lo + DefaultVLLMPortsPerEngine}
}

// NamedPortRange is a documented default port band. Within names the band
// it is carved out of ("" for a top-level band): the reference nests the
// Dynamo bands in the generation band and the SGLang bands in the vLLM band,
// since only one generation backend runs at a time.
type NamedPortRange struct {
	Name        string
	Range       PortRange
	Within      string
	Description string
}

// DefaultPortRanges returns the reference's default bands in port order
// (as of ReferenceRevision). "vllm" is the whole rendezvous band [7000, 9000)
// (20 engine blocks), not engine 0's block.
func DefaultPortRanges() []NamedPortRange {
	return []NamedPortRange{
		{"dynamo_control", PortRange{DefaultDynamoControlPortRangeLow, DefaultDynamoControlPortRangeHigh}, "", "Dynamo etcd/NATS control plane, allocated on the driver's node"},
		{"master", DefaultMasterPortRange, "", "master address / TCPStore rendezvous (cluster.master_port_range_low/high)"},
		{"generation", PortRange{DefaultGenerationPortRangeLow, DefaultGenerationPortRangeHigh}, "", "shared generation range (policy.generation.port_range_low/high)"},
		{"dynamo_http", PortRange{DefaultDynamoHTTPPortRangeLow, DefaultDynamoHTTPPortRangeHigh}, "generation", "Dynamo frontend and token-wrapper HTTP endpoints"},
		{"dynamo_system", PortRange{DefaultDynamoSystemPortRangeLow, DefaultDynamoSystemPortRangeHigh}, "generation", "Dynamo worker system endpoints, chosen per node"},
		{"gym", PortRange{DefaultGymPortRangeLow, DefaultGymPortRangeHigh}, "", "NeMo Gym HTTP servers (env.nemo_gym.port_range_low/high)"},
		{"generation_router", PortRange{DefaultGenerationRouterPortRangeLow, DefaultGenerationRouterPortRangeHigh}, "", "single-controller generation router, one port per run (async_rl.generation_router.port_range_low/high)"},
		{"vllm", PortRange{DefaultVLLMPortRangeLow, DefaultVLLMPortRangeHigh}, "", "vLLM engine rendezvous, 100 ports per engine (VLLM_PORT)"},
		{"sglang_router", PortRange{DefaultSGLangRouterPortRangeLow, DefaultSGLangRouterPortRangeHigh}, "vllm", "SGLang router (fixed in the reference)"},
		{"sglang_prometheus", PortRange{DefaultSGLangPrometheusPortRangeLow, DefaultSGLangPrometheusPortRangeHigh}, "vllm", "SGLang Prometheus metrics (fixed in the reference)"},
	}
}
