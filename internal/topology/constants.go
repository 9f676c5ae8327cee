package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Ray custom-resource keys and sentinels (mirroring the reference module).
const (
	// NVLinkDomainPrefix prefixes the per-node resource "nvlink_domain_<ClusterUUID>".
	NVLinkDomainPrefix = "nvlink_domain_"
	// TopoRankKey is the per-node resource holding the SLURM topological rank.
	TopoRankKey = "topo_rank"
	// NVLinkDomainUnknown is the domain of a node without NVLink info.
	NVLinkDomainUnknown = "unknown"
	// TopoRankUnknown is the rank of a node without topo_rank info.
	TopoRankUnknown = -1
	// DomainConstraintAmount is the amount used to pin a bundle to a domain.
	DomainConstraintAmount = 0.001
)

// ReferenceRevision is the NeMo-RL commit whose virtual_cluster.py port
// layout DefaultPortRanges follows (python/tests/testdata/port_ranges.json
// holds the same table and revision for both languages' tests).
const ReferenceRevision = "7ea279abfbeb698b092856d0dab61e7cf39bc909"

// Default port ranges (half-open [Low, High), as in the reference).
const (
	DefaultDynamoControlPortRangeLow     = 1313
	DefaultDynamoControlPortRangeHigh    = 1400
	DefaultGenerationPortRangeLow        = 3000
	DefaultGenerationPortRangeHigh       = 4999
	DefaultDynamoHTTPPortRangeLow        = 3000
	DefaultDynamoHTTPPortRangeHigh       = 4000
	DefaultDynamoSystemPortRangeLow      = 4000
	DefaultDynamoSystemPortRangeHigh     = 4100
	DefaultGymPortRangeLow               = 5000
	DefaultGymPortRangeHigh              = 5999
	DefaultGenerationRouterPortRangeLow  = 6000
	DefaultGenerationRouterPortRangeHigh = 6099
	DefaultVLLMPortRangeLow              = 7000
	DefaultVLLMPortsPerEngine            = 100
	// DefaultVLLMPortRangeHigh is not a reference constant: the reference
	// layout comment reserves 7000-8999 for vLLM, i.e. [7000, 9000).
	DefaultVLLMPortRangeHigh             = 9000
	DefaultSGLangRouterPortRangeLow      = 8600
	DefaultSGLangRouterPortRangeHigh     = 8799
	DefaultSGLangPrometheusPortRangeLow  = 8800
	DefaultSGLangPrometheusPortRangeHigh = 8999
	DefaultMasterPortRangeLow            = 1400
	DefaultMasterPortRangeHigh           = 1999
)

// Placement-group strategies accepted by Ray.
const (
	StrategyPack         = "PACK"
	StrategySpread       = "SPREAD"
	StrategyStrictPack   = "STRICT_PACK"
	StrategyStrictSpread = "STRICT_SPREAD"
)

// Strategies lists the valid strategies in a fixed order.
var Strategies = []string{StrategyPack, StrategySpread, StrategyStrictPack, StrategyStrictSpread}

// DefaultRole is prepare_segment_topology's default role label.
const DefaultRole = "training"

// CheckStrategy is the one check of a placement-group strategy (schema,
// Spec, driver request and feasibility all call it): nil when Ray accepts s.
// A strategy in the wrong case gets the hint of the right one.
func CheckStrategy(s string) error {
	if slices.Contains(Strategies, s) {
		return nil
	}
	why := fmt.Sprintf("%q must be one of %s", s, strings.Join(Strategies, ", "))
	if up := strings.ToUpper(strings.TrimSpace(s)); slices.Contains(Strategies, up) {
		why += fmt.Sprintf("; did you mean %q?", up)
	}
	return errors.New(why)
}
