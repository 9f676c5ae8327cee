// Command standin serves a stand-in Ray dashboard (internal/standin) for
// manual runs, e.g. pointing a Terraform configuration's provider at 10,000
// NVL72 nodes:
//
//	go run ./bench/cmd/standin -listen 127.0.0.1:8299 -nodes 10000
//	curl 'http://127.0.0.1:8299/api/v0/nodes?detail=true&limit=2'
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8299", "address to serve on (port 0 picks a free one)")
	shape := standin.NVL72(10000)
	flag.IntVar(&shape.Nodes, "nodes", shape.Nodes, "alive nodes, head included")
	flag.IntVar(&shape.DomainSize, "domain-size", shape.DomainSize, "worker nodes per NVLink domain (0: no domains)")
	flag.Float64Var(&shape.GPUsPerNode, "gpus", shape.GPUsPerNode, "GPUs per worker node")
	flag.Float64Var(&shape.CPUsPerNode, "cpus", shape.CPUsPerNode, "CPUs per node")
	flag.Parse()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "stand-in Ray dashboard with %d nodes at http://%s\n", shape.Nodes, ln.Addr())
	log.Fatal(http.Serve(ln, standin.New(standin.Generate(shape))))
}
