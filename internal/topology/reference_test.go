package topology_test

import (
	"os/exec"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/topology/topologyref"
)

// The Go topology maths and a plain-Python version of the reference's
// (topologyref/topology_ref.py) agree on synthetic NVL72 clusters.
func TestTopologyMatchesPythonReference(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	for _, n := range []int{100, 1000} {
		in, err := topologyref.NewInputs(n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := in.Run()
		if err != nil {
			t.Fatal(err)
		}
		py, err := topologyref.RunPython(python, t.TempDir(), in, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range topologyref.Match(got, py) {
			if !ok {
				t.Errorf("%s at %d nodes: Go and the Python reference differ", topologyref.Functions[i], n)
			}
		}
	}
}
