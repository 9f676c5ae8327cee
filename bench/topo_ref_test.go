package bench

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The Python reference and the Go functions agree on the synthetic inputs.
func TestTopologyRefOutputsMatch(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	rows, err := RunTopologyRef(python, t.TempDir(), []int{100, 1000}, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if !r.Match || r.Go <= 0 || r.Python <= 0 {
			t.Errorf("%s at %d nodes: match %t, go %v, python %v", r.Function, r.Nodes, r.Match, r.Go, r.Python)
		}
	}
	PrintTopologyRef(os.Stderr, rows)
}
