package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// Every test the compat, gates and side suites of scripts/test.sh name exists: a
// renamed test would otherwise drop out of its Ray version cell without a
// sound (go test -run matches nothing and passes).
func TestVersionSuitesNameExistingTests(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	suites := map[string][]string{}
	for _, suite := range []string{"compat", "gates", "side"} {
		list := regexp.MustCompile(`(?s)\n` + suite + `_tests=\((.*?)\n\)`).FindSubmatch(script)
		if list == nil {
			t.Fatalf("scripts/test.sh has no %s_tests=( ... ) list", suite)
		}
		if suites[suite] = strings.Fields(string(list[1])); len(suites[suite]) == 0 {
			t.Fatalf("the %s_tests list is empty", suite)
		}
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range decl.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for suite, names := range suites {
		for _, n := range names {
			if !defined[n] {
				t.Errorf("scripts/test.sh's %s suite names %s, which no test file defines", suite, n)
			}
		}
	}
}

// The Ray versions of .ci/run's cells fall on both sides of every feature
// gate above the oldest supported Ray, and one of them (ray_mid) at or above
// the gate but older than ray_new, so the feature is exercised on a Ray
// near the release that brought it, not only on the newest. Moving a gate
// past ray_mid, or dropping a cell, fails here.
func TestCIRayVersionsStraddleEveryGate(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]clusterspec.RayVersion{}
	for _, m := range regexp.MustCompile(`(?m)^ray_(new|old|mid)=(\S+)`).FindAllSubmatch(script, -1) {
		v, err := clusterspec.ParseRayVersion(string(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		versions[string(m[1])] = v
	}
	if len(versions) != 3 {
		t.Fatalf(".ci/run sets %d of ray_new, ray_old, ray_mid", len(versions))
	}
	minimum, _ := clusterspec.ParseRayVersion(clusterspec.MinRayVersion)
	for _, g := range clusterspec.Gates {
		gate, _ := clusterspec.ParseRayVersion(g.Version)
		if !minimum.Less(gate) {
			continue // every supported Ray has it
		}
		if !versions["old"].Less(gate) || versions["mid"].Less(gate) || !versions["mid"].Less(versions["new"]) {
			t.Errorf("gate %s %s (Ray %s): want ray_old < gate <= ray_mid < ray_new in .ci/run, have %v", g.Attribute, g.Feature, g.Version, versions)
		}
	}
}
