// Package topology is a pure-Go model of NeMo-RL's virtual-cluster topology
// logic (nemo_rl.distributed.virtual_cluster): NVLink-domain segment
// selection, topology-aware bundle ordering, placement-group shapes, port
// ranges and a static feasibility check against live node resources.
//
// The package performs no I/O. Ordering follows the Python reference exactly:
// dict insertion order is modelled with ordered slices, and the results of
// Python's stable sorts are reproduced with linear passes (counting sorts
// over topo_rank, positions as tie-breakers) where the inputs allow, so that
// 10,000-node inputs cost milliseconds and a bounded number of allocations.
package topology
