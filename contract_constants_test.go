package main

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Contract values that must be spelled only where they are defined.
var (
	strayGoStrings = map[string]bool{
		clusterspec.DefaultNamespace: true, "PACK": true, "SPREAD": true, "STRICT_PACK": true, "STRICT_SPREAD": true,
		"nvlink_domain_": true, "CREATED": true, "ALIVE": true, "REMOVED": true, contract.StateMissing: true,
		"RESCHEDULING": true, "training": true, clusterspec.DefaultReadyTimeoutText: true, "_group_": true,
	}
	strayGoInts = map[string]bool{"1400": true, "1999": true, "180": true}
	// the driver (internal/driver/driverpy) gets every one of these from the request.
	strayPython = regexp.MustCompile(`terraform-ray|\b1400\b|\b1999\b|\b180\b|\bPACK\b|\bSPREAD\b|nvlink_domain_|` +
		`"MISSING"|"CREATED"|"REMOVED"|"unknown"|"_group_"|"node:"|"topo_rank" in\b|get\("topo_rank"`)
	// Where each contract value is defined (paths from the repository root).
	contractHomes = []string{"internal/clusterspec/", "internal/record/", "internal/contract/", "internal/topology/", "internal/raystate/"}
)

// The Python attach package (python/src) and the bench's Python scripts
// (bench/*.py) run where the Go constants cannot reach them. The package
// states each contract value once, in pythonHome, which must agree with Go;
// no other of these files may spell one.
const pythonHome = "python/src/raytf_attach/record.py"

var (
	// pythonHomeValues are the assignments pythonHome must carry.
	pythonHomeValues = map[string]string{"KV_NAMESPACE": record.KVNamespace, "DEFAULT_NAMESPACE": clusterspec.DefaultNamespace,
		"STATE_CREATED": raystate.PlacementGroupStateCreated, "NVLINK_DOMAIN_PREFIX": topology.NVLinkDomainPrefix,
		"TOPO_RANK_KEY": topology.TopoRankKey, "NVLINK_DOMAIN_UNKNOWN": topology.NVLinkDomainUnknown}
	// strayPythonCopy matches a contract value written as a literal: the
	// namespaces, Ray's CREATED state, the default port range and wait.
	strayPythonCopy = regexp.MustCompile(`["']` + regexp.QuoteMeta(clusterspec.DefaultNamespace) + `["']|["']` + regexp.QuoteMeta(record.KVNamespace) +
		`["']|["']CREATED["']|\b1400\b|\b1999\b|\b180(\.0)?\b`)
	// pythonPortTable is the package's port-band table: its numbers are the
	// bands themselves, checked against Go through testdata/port_ranges.json.
	pythonPortTable = "python/src/raytf_attach/ports.py"
)

// driverOwnConstants are the driver's only top-level numbers: its request
// format's version and Ray's gRPC status codes; every other value arrives
// in the request's contract.
var driverOwnConstants = map[string]bool{"REQUEST_VERSION": true, "STATUS_OK, STATUS_NOT_FOUND": true}

// TestDriverPyHasNoContractConstants scans the driver's modules
// (internal/driver/driverpy/*.py) for contract values and for top-level
// numeric constants of their own.
func TestDriverPyHasNoContractConstants(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(".", "internal/driver/driverpy/*.py"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no driver modules: %v", err)
	}
	numeric := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_, ]*?)\s*(?::[^=]+)?=\s*[-+]?[0-9][0-9., ]*(?:#.*)?$`)
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := "driverpy/" + filepath.Base(path)
		for i, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "#")
			if m := strayPython.FindString(code); m != "" {
				t.Errorf("%s:%d carries contract value %q; send it in the request (contract.Contract): %s", name, i+1, m, strings.TrimSpace(line))
			}
			if m := numeric.FindStringSubmatch(line); m != nil && !driverOwnConstants[m[1]] {
				t.Errorf("%s:%d keeps a constant of its own; send it in the request (contract.Contract): %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestGoHasNoStrayContractConstants scans the production Go code outside
// the contract's homes for string and integer literals that copy a
// contract value. Comments are not looked at.
func TestGoHasNoStrayContractConstants(t *testing.T) {
	root := "."
	for _, dir := range []string{"internal", "bench", "main.go"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			// internal/acctest is test support code (not built into the provider).
			if strings.HasPrefix(rel, "internal/acctest/") {
				return nil
			}
			for _, home := range contractHomes {
				if strings.HasPrefix(rel, home) {
					return nil
				}
			}
			scanGoFile(t, rel, path)
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

func scanGoFile(t *testing.T, rel, path string) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(rel, fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return
		}
		switch tok {
		case token.STRING:
			if v, err := strconv.Unquote(lit); err == nil && strayGoStrings[v] {
				t.Errorf("%s: literal %s copies a contract value; use the constant in its home package", fset.Position(pos), lit)
			}
		case token.INT:
			if strayGoInts[lit] {
				t.Errorf("%s: literal %s copies a contract value; use the constant in its home package", fset.Position(pos), lit)
			}
		}
	}
}

// TestPythonHasNoStrayContractConstants checks that the Python package's
// one home of the contract values agrees with Go, and that no other Python
// file of the package or the bench copies one (comments and docstrings are
// not looked at).
func TestPythonHasNoStrayContractConstants(t *testing.T) {
	root := "."
	home, err := os.ReadFile(filepath.Join(root, pythonHome))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range pythonHomeValues {
		m := regexp.MustCompile(`(?m)^` + name + ` = "([^"]*)"$`).FindSubmatch(home)
		if m == nil || string(m[1]) != want {
			t.Errorf("%s: %s must be %q (the Go value)", pythonHome, name, want)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "bench", "*.py"))
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(filepath.Join(root, "python", "src"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == pythonHome {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, code := range pythonCode(string(src)) {
			m := strayPythonCopy.FindString(code)
			switch {
			case m == "":
			case rel == pythonPortTable && !strings.ContainsAny(m, `"'`):
			default:
				t.Errorf("%s:%d copies contract value %s; read it from %s or the Go side: %s", rel, i+1, m, pythonHome, strings.TrimSpace(code))
			}
		}
	}
}

// pythonCode is src line by line with comments and triple-quoted strings
// (docstrings) blanked, so that only code is scanned.
func pythonCode(src string) []string {
	lines := strings.Split(src, "\n")
	inDoc := false
	for i, line := range lines {
		if n := strings.Count(line, `"""`); n > 0 || inDoc {
			if n%2 == 1 {
				inDoc = !inDoc
			}
			lines[i] = ""
			continue
		}
		code, _, _ := strings.Cut(line, "#")
		lines[i] = code
	}
	return lines
}
