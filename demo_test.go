package main

import (
	"os"
	"regexp"
	"testing"
)

// make demo prints the quickstart's outputs with scripts/show_placement.py;
// an output renamed in the example must not break the README's first
// command silently (it did once: the script still read "selection").
func TestDemoReadsQuickstartOutputs(t *testing.T) {
	tf, err := os.ReadFile("examples/quickstart/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("scripts/show_placement.py")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^output "([^"]+)"`).FindAllStringSubmatch(string(tf), -1) {
		declared[m[1]] = true
	}
	used := regexp.MustCompile(`out\["([^"]+)"\]`).FindAllStringSubmatch(string(script), -1)
	if len(used) == 0 {
		t.Fatal("show_placement.py reads no outputs")
	}
	for _, m := range used {
		if !declared[m[1]] {
			t.Errorf("show_placement.py reads output %q, which examples/quickstart does not declare", m[1])
		}
	}
}
