package raystate

import (
	"encoding/json"
	"fmt"
)

// Node is a row of GET /api/v0/nodes (ray.util.state.common.NodeState).
type Node struct {
	NodeID         string             `json:"node_id"`
	NodeIP         string             `json:"node_ip"`
	IsHeadNode     bool               `json:"is_head_node"`
	State          string             `json:"state"`
	StateMessage   string             `json:"state_message"`
	NodeName       string             `json:"node_name"`
	ResourcesTotal map[string]float64 `json:"resources_total"`
	Labels         map[string]string  `json:"labels"`
	// StartTimeMs and EndTimeMs are detail columns (ListOptions.Detail);
	// EndTimeMs is 0 while the node is alive.
	StartTimeMs int64 `json:"start_time_ms"`
	EndTimeMs   int64 `json:"end_time_ms"`
}

// Node states.
const (
	NodeStateAlive = "ALIVE"
	NodeStateDead  = "DEAD"
)

// Placement group states.
const (
	PlacementGroupStatePending      = "PENDING"
	PlacementGroupStatePrepared     = "PREPARED"
	PlacementGroupStateCreated      = "CREATED"
	PlacementGroupStateRemoved      = "REMOVED"
	PlacementGroupStateRescheduling = "RESCHEDULING"
)

// Bundle is one bundle of a placement group. On the wire Ray sends
//
//	{"bundle_id": {"placement_group_id": "...", "bundle_index": 0},
//	 "unit_resources": {"CPU": 1.0}, "node_id": "...", "label_selector": {}}
type Bundle struct {
	// BundleID is synthesized as "<placement_group_id>:<bundle_index>"; Ray
	// itself sends a {placement_group_id, bundle_index} object.
	BundleID         string
	PlacementGroupID string
	BundleIndex      int
	// NodeID is the node the bundle is placed on ("" if not placed).
	NodeID        string
	UnitResources map[string]float64
	LabelSelector map[string]string
}

type wireBundle struct {
	BundleID *struct {
		PlacementGroupID string `json:"placement_group_id"`
		BundleIndex      int    `json:"bundle_index"`
	} `json:"bundle_id"`
	NodeID        string             `json:"node_id"`
	UnitResources map[string]float64 `json:"unit_resources"`
	LabelSelector map[string]string  `json:"label_selector"`
}

// UnmarshalJSON decodes Ray's bundle shape.
func (b *Bundle) UnmarshalJSON(data []byte) error {
	var w wireBundle
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*b = Bundle{NodeID: w.NodeID, UnitResources: w.UnitResources, LabelSelector: w.LabelSelector}
	if w.BundleID != nil {
		b.PlacementGroupID = w.BundleID.PlacementGroupID
		b.BundleIndex = w.BundleID.BundleIndex
		b.BundleID = fmt.Sprintf("%s:%d", b.PlacementGroupID, b.BundleIndex)
	}
	return nil
}

// MarshalJSON encodes the bundle in Ray's shape.
func (b Bundle) MarshalJSON() ([]byte, error) {
	w := wireBundle{NodeID: b.NodeID, UnitResources: b.UnitResources, LabelSelector: b.LabelSelector}
	w.BundleID = &struct {
		PlacementGroupID string `json:"placement_group_id"`
		BundleIndex      int    `json:"bundle_index"`
	}{b.PlacementGroupID, b.BundleIndex}
	return json.Marshal(w)
}

// PlacementGroup is a row of GET /api/v0/placement_groups
// (ray.util.state.common.PlacementGroupState). Bundles, IsDetached, Stats
// and the topology fields are detail columns: they are only populated with
// ListOptions.Detail.
type PlacementGroup struct {
	PlacementGroupID string         `json:"placement_group_id"`
	Name             string         `json:"name"`
	CreatorJobID     string         `json:"creator_job_id"`
	State            string         `json:"state"`
	Bundles          []Bundle       `json:"bundles"`
	IsDetached       bool           `json:"is_detached"`
	Stats            map[string]any `json:"stats"`
	// TopologyStrategy maps a topology label key to a placement strategy
	// (experimental in Ray).
	TopologyStrategy map[string]string `json:"topology_strategy"`
	// TopologyAssignments maps a topology label key to the selected value
	// (experimental in Ray).
	TopologyAssignments map[string]string `json:"topology_assignments"`
}
