package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goPackage is the part of `go list -json` the package map needs.
type goPackage struct {
	ImportPath, Doc                    string
	Imports, TestImports, XTestImports []string
}

// mapRow is one row of DESIGN.md's package map.
type mapRow struct {
	imports, testImports []string
}

// DESIGN.md's package map lists exactly the import edges `go list` reports
// between the module's packages (production and test-only separately), its
// rows are in layer order (no production import points at a row above), and
// every package has a doc comment, which DESIGN.md sends readers to.
func TestDesignPackageMap(t *testing.T) {
	design, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	order, rows := parsePackageMap(t, string(design))
	layer := map[string]int{}
	for i, p := range order {
		layer[p] = i
	}

	listed := goListPackages(t)
	var names []string
	for name := range listed {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := listed[name]
		row, ok := rows[name]
		if !ok {
			t.Errorf("DESIGN.md's package map has no row for %s", name)
			continue
		}
		if p.Doc == "" {
			t.Errorf("%s has no package doc comment (DESIGN.md sends readers to it)", name)
		}
		prod := ownImports(name, p.Imports)
		var test []string
		for _, imp := range ownImports(name, append(slices.Clone(p.TestImports), p.XTestImports...)) {
			if !slices.Contains(prod, imp) && !slices.Contains(test, imp) {
				test = append(test, imp)
			}
		}
		slices.Sort(test)
		compareEdges(t, name, "", prod, row.imports)
		compareEdges(t, name, " (tests only)", test, row.testImports)
		for _, imp := range prod {
			if l, ok := layer[imp]; ok && l <= layer[name] {
				t.Errorf("upward import %s -> %s: DESIGN.md lists %s in a row above %s", name, imp, imp, name)
			}
		}
	}
	for _, name := range order {
		if _, ok := listed[name]; !ok {
			t.Errorf("DESIGN.md's package map has a row for %s, which go list does not know", name)
		}
	}
}

func compareEdges(t *testing.T, from, kind string, got, documented []string) {
	t.Helper()
	for _, imp := range got {
		if !slices.Contains(documented, imp) {
			t.Errorf("edge %s -> %s%s is in go list but not in DESIGN.md's package map", from, imp, kind)
		}
	}
	for _, imp := range documented {
		if !slices.Contains(got, imp) {
			t.Errorf("edge %s -> %s%s is in DESIGN.md's package map but not in go list", from, imp, kind)
		}
	}
}

// goListPackages returns the module's packages by their short name ("main",
// "bench", "internal/driver", ...).
func goListPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Doc,Imports,TestImports,XTestImports", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs[shortName(p.ImportPath)] = p
	}
	return pkgs
}

const modulePath = "github.com/ray-infra/terraform-provider-ray"

func shortName(importPath string) string {
	if importPath == modulePath {
		return "main"
	}
	return strings.TrimPrefix(importPath, modulePath+"/")
}

// ownImports keeps the module's own packages, short-named, sorted, without self.
func ownImports(self string, imports []string) []string {
	var out []string
	for _, imp := range imports {
		if imp != modulePath && !strings.HasPrefix(imp, modulePath+"/") {
			continue
		}
		if s := shortName(imp); s != self && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

var quoted = regexp.MustCompile("`([^`]+)`")

// parsePackageMap reads the table between <!-- package-map --> and
// <!-- /package-map -->: rows in order, and each row's two import lists.
func parsePackageMap(t *testing.T, design string) ([]string, map[string]mapRow) {
	t.Helper()
	_, rest, ok := strings.Cut(design, "<!-- package-map -->")
	table, _, ok2 := strings.Cut(rest, "<!-- /package-map -->")
	if !ok || !ok2 {
		t.Fatal("DESIGN.md has no <!-- package-map --> ... <!-- /package-map --> table")
	}
	var order []string
	rows := map[string]mapRow{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("package map row %q: want 3 cells", line)
		}
		name := quoted.FindStringSubmatch(cells[0])
		if name == nil {
			continue // the header and its rule
		}
		if _, dup := rows[name[1]]; dup {
			t.Errorf("package map lists %s twice", name[1])
		}
		order = append(order, name[1])
		rows[name[1]] = mapRow{imports: quotedNames(cells[1]), testImports: quotedNames(cells[2])}
	}
	return order, rows
}

func quotedNames(cell string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}
