package record

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The cluster record ("manifest") the driver keeps in Ray's internal KV next
// to the groups: who owns the cluster and where it is placed. The attach
// helper and the virtual-cluster data source read it; field names match the
// resource's attributes.
const (
	// KVNamespace is the internal-KV namespace of the records.
	KVNamespace = "terraform-provider-ray"
	// ManifestSchemaVersion is the record format written by this provider:
	// 2 adds every declared argument (Manifest.Declared), so import can
	// restore the declaration. Version 1 records still read.
	ManifestSchemaVersion = 2
	ownerTokenBytes       = 16
	// OwnerPrefixLength is how much of an owner digest messages show.
	OwnerPrefixLength = 8
)

// RecordKey is the KV key of cluster name's record in Ray namespace ns.
func RecordKey(ns, name string) string { return "vc/" + ns + "/" + name }

// TombstoneKey is where delete notes who destroyed cluster name, so that
// another state that still lists it can say what happened.
func TombstoneKey(ns, name string) string { return "tombstone/" + ns + "/" + name }

// QuotaKey is where the quota of Ray namespace ns lives (ray_namespace_quota).
func QuotaKey(ns string) string { return "quota/" + ns }

// ReservationPrefix begins every reservation's key (ReservationKey).
const ReservationPrefix = "reservation/"

// ReservationKey is where cluster ns/name keeps what its bundles reserve
// on each node: one key per cluster, across namespaces, since namespaces
// share the nodes.
func ReservationKey(ns, name string) string { return ReservationPrefix + ns + "/" + name }

// ReservationLockKey is the one key every reserve and release takes first
// (written only when absent), so that a reservation is checked against
// the others and written as one step.
const ReservationLockKey = "reservation-lock"

// ReservationStaleSeconds is how long a reservation whose groups are all
// gone is still honoured: the create that wrote it makes its groups right
// after.
const ReservationStaleSeconds = 30

// ReservationLockStaleSeconds is how long the lock is honoured: a run holds
// it for one check-and-write of the KV, never while it waits for Ray, so an
// older lock was left by a killed run.
const ReservationLockStaleSeconds = 20

// NewOwnerToken returns a fresh random owner token for a state.
func NewOwnerToken() (string, error) {
	b := make([]byte, ownerTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating an owner token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Manifest is the record of one cluster (schema_version 2; a version 1
// record has no Declared fields).
type Manifest struct {
	SchemaVersion            int              `json:"schema_version"`
	Name                     string           `json:"name"`
	Namespace                string           `json:"namespace"`
	Owner                    string           `json:"owner"`
	CreatedAt                string           `json:"created_at"`
	UpdatedAt                string           `json:"updated_at"`
	ProviderVersion          string           `json:"provider_version"`
	UseGPUs                  bool             `json:"use_gpus"`
	NumGPUsPerNode           int              `json:"num_gpus_per_node"`
	MaxColocatedWorkerGroups int              `json:"max_colocated_worker_groups"`
	UseUnifiedPG             bool             `json:"use_unified_pg"`
	PlacementGroupStrategy   string           `json:"placement_group_strategy"`
	BundleCtPerNodeList      []int            `json:"bundle_ct_per_node_list"`
	Groups                   []ManifestGroup  `json:"groups"`
	Bundles                  []ManifestBundle `json:"bundles"`
	SortedBundleIndices      []int            `json:"sorted_bundle_indices"`
	MasterAddress            string           `json:"master_address"`
	MasterPort               int              `json:"master_port"`
	PortRangeLow             int              `json:"port_range_low"`
	PortRangeHigh            int              `json:"port_range_high"`
	Declared
}

// Declared is what a configuration declared beyond the fields version 1
// already recorded (with them, every argument of ray_virtual_cluster):
// null where the configuration left an argument unset (an empty list stays
// empty). Import restores a declaration from it.
type Declared struct {
	SegmentSize             *int                        `json:"segment_size"`
	NodeResourceConstraints []map[string]float64        `json:"node_resource_constraints"`
	ReadyTimeout            string                      `json:"ready_timeout,omitempty"`
	SelectNodes             bool                        `json:"select_nodes,omitempty"`
	ExclusiveNodes          bool                        `json:"exclusive_nodes,omitempty"`
	Pinning                 string                      `json:"pinning,omitempty"`
	SelectedNodeIDs         []string                    `json:"selected_node_ids"`
	ExcludeNodeIDs          []string                    `json:"exclude_node_ids"`
	NodeLabelSelectors      []map[string]string         `json:"node_label_selectors"`
	TopologyStrategy        map[string]string           `json:"topology_strategy"`
	TopologyLabels          *clusterspec.TopologySource `json:"topology_labels,omitempty"`
	// CapacityCheck is the capacity_check argument.
	CapacityCheck string `json:"capacity_check,omitempty"`
}

// HasDeclaration reports whether the record holds the declaration (schema
// version 2 and later).
func (m *Manifest) HasDeclaration() bool { return m != nil && m.SchemaVersion >= 2 }

// ManifestGroup is one placement group of the record.
type ManifestGroup struct {
	Name        string `json:"name"`
	ID          string `json:"id"`
	NodeIndex   int    `json:"node_index"`
	BundleCount int    `json:"bundle_count"`
	Strategy    string `json:"strategy"`
}

// ManifestBundle is one bundle of the record, in rank order.
type ManifestBundle struct {
	Rank           int    `json:"rank"`
	PlacementGroup string `json:"placement_group"`
	BundleIndex    int    `json:"bundle_index"`
	GlobalIndex    int    `json:"global_index"`
	NodeID         string `json:"node_id"`
	NodeIP         string `json:"node_ip"`
	GPUID          *int   `json:"gpu_id"`
	NVLinkDomain   string `json:"nvlink_domain"`
	TopoRank       int    `json:"topo_rank"`
	Port           int    `json:"port"`
}

// Tombstone is what delete leaves behind: which owner destroyed the cluster
// and whose record it removed.
type Tombstone struct {
	DeletedBy     string `json:"deleted_by"`
	DeletedAt     string `json:"deleted_at"`
	RecordOwner   string `json:"record_owner"`
	RecordCreated string `json:"record_created_at"`
}

// NewManifest is the record of spec owned by owner (a token: the record
// keeps only its digest), placed as p (an empty
// Placement gives the template the driver fills in). The driver stamps
// created_at and updated_at.
func NewManifest(spec clusterspec.Spec, owner, providerVersion string, p Placement) Manifest {
	spec = spec.WithDefaults()
	m := Manifest{
		SchemaVersion: ManifestSchemaVersion, Name: spec.Name, Namespace: spec.Namespace, Owner: OwnerDigest(owner),
		ProviderVersion: providerVersion, UseGPUs: spec.UseGPUs, NumGPUsPerNode: spec.NumGPUsPerNode,
		MaxColocatedWorkerGroups: spec.MaxColocatedWorkerGroups, UseUnifiedPG: spec.UseUnifiedPG,
		PlacementGroupStrategy: spec.Strategy, BundleCtPerNodeList: append([]int{}, spec.BundleCtPerNode...),
		Groups: []ManifestGroup{}, Bundles: []ManifestBundle{}, SortedBundleIndices: p.SortedBundleIndices(),
		MasterAddress: p.MasterAddress, MasterPort: p.MasterPort,
		PortRangeLow: spec.Ports.Low, PortRangeHigh: spec.Ports.High,
		Declared: Declared{
			SegmentSize: spec.SegmentSize, SelectNodes: spec.SelectNodes, ExclusiveNodes: spec.ExclusiveNodes, Pinning: spec.Pinning,
			SelectedNodeIDs: spec.SelectedNodeIDs, ExcludeNodeIDs: spec.ExcludeNodeIDs,
			NodeLabelSelectors: spec.NodeLabelSelectors, TopologyStrategy: spec.TopologyStrategy,
			ReadyTimeout: spec.ReadyTimeoutText,
		},
	}
	if spec.Topology != (clusterspec.TopologySource{}) {
		m.TopologyLabels = &spec.Topology
	}
	if spec.NodeResourceConstraints != nil {
		m.NodeResourceConstraints = make([]map[string]float64, len(spec.NodeResourceConstraints))
		for i, c := range spec.NodeResourceConstraints {
			m.NodeResourceConstraints[i] = c
		}
	}
	placed := map[string]PlacedGroup{}
	for _, g := range p.Groups {
		placed[g.Want.Name] = g
	}
	for _, g := range spec.Groups() {
		mg := ManifestGroup{Name: g.Name, NodeIndex: g.NodeIndex, BundleCount: len(g.Bundles), Strategy: g.Strategy}
		if pg, ok := placed[g.Name]; ok {
			mg.ID, mg.BundleCount, mg.Strategy = pg.ID, pg.BundleCount, pg.Strategy
		}
		m.Groups = append(m.Groups, mg)
	}
	for _, b := range p.Bundles {
		m.Bundles = append(m.Bundles, ManifestBundle{Rank: b.Rank, PlacementGroup: b.Group, BundleIndex: b.BundleIndex,
			GlobalIndex: b.GlobalIndex, NodeID: b.NodeID, NodeIP: b.NodeIP, GPUID: b.GPUID,
			NVLinkDomain: b.NVLinkDomain, TopoRank: b.TopoRank, Port: b.Port})
	}
	return m
}

// OtherOwner describes the owner of a record that is not this state's.
type OtherOwner struct {
	Owner     string `json:"owner"`
	CreatedAt string `json:"created_at"`
	// HasRecord is false for groups without any record.
	HasRecord bool `json:"has_record,omitempty"`
}

// Describe names the other owner for a message.
func (o OtherOwner) Describe() string {
	if o.Owner == "" {
		return "groups without an ownership record (created outside this provider)"
	}
	s := "another Terraform state (owner " + OwnerPrefix(o.Owner) + "…"
	if o.CreatedAt != "" {
		s += ", created " + o.CreatedAt
	}
	return s + ")"
}

// DeclaredSpec is the declaration the record keeps, and the arguments it
// does not keep (a version 1 record lacks everything in Declared).
func (m *Manifest) DeclaredSpec() (spec clusterspec.Spec, unrecovered []string) {
	spec = clusterspec.Spec{
		Name: m.Name, Namespace: m.Namespace, BundleCtPerNode: append([]int{}, m.BundleCtPerNodeList...),
		UseGPUs: m.UseGPUs, NumGPUsPerNode: m.NumGPUsPerNode, MaxColocatedWorkerGroups: m.MaxColocatedWorkerGroups,
		Strategy: m.PlacementGroupStrategy, UseUnifiedPG: m.UseUnifiedPG,
		Ports: topology.PortRange{Low: m.PortRangeLow, High: m.PortRangeHigh},
	}
	if !m.HasDeclaration() {
		return spec, []string{clusterspec.AttrSegmentSize, clusterspec.AttrNodeResourceConstraints, clusterspec.AttrSelectNodes, clusterspec.AttrPinning, clusterspec.AttrSelectedNodeIDs,
			clusterspec.AttrExcludeNodeIDs, clusterspec.AttrNodeLabelSelectors, clusterspec.AttrTopologyStrategy, clusterspec.AttrTopologyLabels, clusterspec.AttrReadyTimeout}
	}
	d := m.Declared
	spec.SegmentSize, spec.SelectNodes, spec.Pinning, spec.ExclusiveNodes = d.SegmentSize, d.SelectNodes, d.Pinning, d.ExclusiveNodes
	spec.SelectedNodeIDs, spec.ExcludeNodeIDs = d.SelectedNodeIDs, d.ExcludeNodeIDs
	spec.NodeLabelSelectors, spec.TopologyStrategy = d.NodeLabelSelectors, d.TopologyStrategy
	spec.ReadyTimeoutText = d.ReadyTimeout
	if t, err := time.ParseDuration(d.ReadyTimeout); err == nil {
		spec.ReadyTimeout = t
	}
	if d.TopologyLabels != nil {
		spec.Topology = *d.TopologyLabels
	}
	if d.NodeResourceConstraints != nil {
		spec.NodeResourceConstraints = make([]topology.Resources, len(d.NodeResourceConstraints))
		for i, c := range d.NodeResourceConstraints {
			spec.NodeResourceConstraints[i] = c
		}
	}
	return spec, nil
}
