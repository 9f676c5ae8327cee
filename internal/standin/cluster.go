// Package standin is a stand-in Ray dashboard: an http.Handler that answers
// the parts of the dashboard API the provider reads (/api/version,
// /api/v0/nodes, /api/v0/placement_groups) with the JSON shapes a real Ray
// 2.60 dashboard sends, for clusters of any size. It exists for benchmarks and
// tests at sizes the local Ray cluster cannot reach (e.g. 10,000 nodes in
// NVL72 racks); it schedules nothing and runs no jobs.
package standin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Rows are the client's own state-API types (raystate.Node,
// raystate.PlacementGroup): the stand-in renders them with Ray's field names
// and formatting (render.go), so there is one definition of each row.
type (
	Node           = raystate.Node
	PlacementGroup = raystate.PlacementGroup
	Bundle         = raystate.Bundle
)

// Label keys and resource names the generated nodes carry. NodeIDLabel is the
// label Ray itself sets on every node; DomainLabel and RankLabel mirror the
// custom resources as scripts/ray-cluster.sh labels the local test cluster.
const (
	NodeIDLabel        = "ray.io/node-id"
	AcceleratorLabel   = "ray.io/accelerator-type"
	DomainLabel        = clusterspectest.DomainLabel
	RankLabel          = clusterspectest.RankLabel
	domainResourceName = topology.NVLinkDomainPrefix
	topoRankResource   = topology.TopoRankKey
	aliveState         = raystate.NodeStateAlive
	bootTimeMs         = int64(1796234892100)
)

// Shape describes a generated cluster.
type Shape struct {
	// Nodes is the number of alive nodes, head included.
	Nodes int
	// DomainSize is the number of worker nodes per NVLink domain (72 for
	// NVL72-sized domains); 0 means no NVLink domain resources at all.
	DomainSize int
	// GPUsPerNode and CPUsPerNode are each worker's GPU and CPU resources.
	GPUsPerNode, CPUsPerNode float64
	// Head adds a head node first (no GPUs, no domain, topo_rank 1, as
	// ray.sub pins it); workers then get topo_rank 2, 3, ...
	Head bool
	// Accelerator is the ray.io/accelerator-type label of GPU nodes ("" for none).
	Accelerator string
}

// NVL72 is n alive nodes: a head node and n-1 GPU workers with 4 GPUs each in
// NVLink domains of 72 nodes (10,000 nodes are 139 domains, the last one
// partial).
func NVL72(n int) Shape {
	return Shape{Nodes: n, DomainSize: 72, GPUsPerNode: 4, CPUsPerNode: 72, Head: true, Accelerator: "GB200"}
}

// hexID is a deterministic hex id of the given byte length.
func hexID(kind string, i, bytes int) string {
	var out []byte
	for block := 0; len(out) < bytes; block++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d/%d", kind, i, block)))
		out = append(out, sum[:]...)
	}
	return hex.EncodeToString(out[:bytes])
}

// DomainUUID is the ClusterUUID of domain d, formatted as nvidia-smi prints it.
func DomainUUID(d int) string {
	h := hexID("domain", d, 16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// DomainResource is the per-node resource key of domain d.
func DomainResource(d int) string { return domainResourceName + DomainUUID(d) }

// NodeID is the 28-byte hex id of the i-th generated node.
func NodeID(i int) string { return hexID("node", i, 28) }

// Generate builds the nodes of a shape. Node i (0-based) has IP
// 10.<i/65536>.<i/256%256>.<i%256>, topo_rank i+1, and, for workers, domain
// (worker index / DomainSize).
func Generate(s Shape) []Node {
	nodes := make([]Node, 0, s.Nodes)
	for i := 0; i < s.Nodes; i++ {
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		id := NodeID(i)
		head := s.Head && i == 0
		res := map[string]float64{
			"CPU":                 s.CPUsPerNode,
			"memory":              float64(int64(512) << 30),
			"object_store_memory": float64(int64(64) << 30),
			"node:" + ip:          1,
			topoRankResource:      float64(i + 1),
		}
		labels := map[string]string{NodeIDLabel: id, RankLabel: fmt.Sprint(i + 1)}
		if head {
			res["node:__internal_head__"] = 1
		} else {
			if s.GPUsPerNode > 0 {
				res["GPU"] = s.GPUsPerNode
				if s.Accelerator != "" {
					labels[AcceleratorLabel] = s.Accelerator
				}
			}
			if s.DomainSize > 0 {
				worker := i
				if s.Head {
					worker--
				}
				d := worker / s.DomainSize
				res[DomainResource(d)] = 1
				labels[DomainLabel] = DomainUUID(d)
			}
		}
		nodes = append(nodes, Node{
			NodeID: id, NodeIP: ip, IsHeadNode: head, State: aliveState, NodeName: ip,
			ResourcesTotal: res, Labels: labels, StartTimeMs: bootTimeMs + int64(i)*10,
		})
	}
	return nodes
}
