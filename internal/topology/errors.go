package topology

import "errors"

// ErrInvalidArgument marks ValueError-parity failures; errors wrap it.
var ErrInvalidArgument = errors.New("invalid argument")

// ErrResourceInsufficient matches any *ResourceInsufficientError via errors.Is.
var ErrResourceInsufficient = errors.New("insufficient resources")

// DomainCount is the node count of one NVLink domain.
type DomainCount struct {
	Domain string
	Nodes  int
}

// ResourceInsufficientError mirrors the reference ResourceInsufficientError.
// The structured fields are filled by SelectSegmentNodes.
type ResourceInsufficientError struct {
	Message           string
	SegmentsNeeded    int
	SegmentsAvailable int
	SegmentSize       int
	NodesNeeded       int
	// DomainNodeCounts lists known domains in the reference's summary order
	// (stable-sorted by minimum topo_rank).
	DomainNodeCounts []DomainCount
	// UnknownNodes counts nodes skipped for lacking NVLink domain info.
	UnknownNodes int
}

func (e *ResourceInsufficientError) Error() string { return e.Message }

// Is reports whether target is ErrResourceInsufficient.
func (e *ResourceInsufficientError) Is(target error) bool { return target == ErrResourceInsufficient }
