package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const (
	// resourcesPkg is the framework layer bench must not measure through.
	resourcesPkg = modulePath + "/internal/resources"
	// providerPkg is the provider as Terraform sees it: the one way bench
	// may reach resources (the in-process provider of the data-source plan
	// rows, minprovider's real schemas).
	providerPkg = modulePath + "/internal/provider"
)

// The bench measures the provider through the pure packages (clusterspec,
// contract, placement, planning, ...), liveview and the driver, not through
// the framework layer: an adapter API widened for bench/ is how the contract
// got spread over four layers once. Checked transitively: no import path
// from a bench package reaches internal/resources except through
// internal/provider.
func TestBenchReachesResourcesOnlyThroughTheProvider(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
	}
	via := map[string]string{} // package -> the package that imported it first
	var queue []string
	for p := range imports {
		if strings.HasPrefix(p, modulePath+"/bench") {
			via[p], queue = "", append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == resourcesPkg {
			t.Fatalf("bench reaches %s not through %s: %s", resourcesPkg, providerPkg, importChain(via, p))
		}
		if p == providerPkg {
			continue
		}
		for _, q := range imports[p] {
			if _, seen := via[q]; !seen && strings.HasPrefix(q, modulePath) {
				via[q], queue = p, append(queue, q)
			}
		}
	}
}

// importChain is the path by which the walk reached p.
func importChain(via map[string]string, p string) string {
	chain := []string{p}
	for via[p] != "" {
		p = via[p]
		chain = append([]string{p}, chain...)
	}
	return strings.Join(chain, " -> ")
}
