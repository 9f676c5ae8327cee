// Package planning holds the plan's checks against a snapshot of the live
// cluster: the Snapshot of nodes and groups and the capacity it leaves
// (counting other tenants' groups), node choice for select_nodes
// (ChooseNodes, ChooseLabelledNodes, ChooseFreeNodes, DisjointChoices), segment,
// selector, topology-strategy and capacity feasibility (CheckCapacity,
// CheckSnapshotCapacity), and the wording of a shortage: which groups do not
// fit, on which nodes, and who holds them (ExplainShortage, HoldersReport).
//
// It does no I/O: internal/liveview fetches the Snapshot.
package planning
