package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

var updateDesign = flag.Bool("update-design", false, "rewrite DESIGN.md's shared-rules table from SharedRules")

// sharedRulesTable renders SharedRules as DESIGN.md's table.
func sharedRulesTable() string {
	var b strings.Builder
	b.WriteString("| rule | Go | Python | parity tests |\n| --- | --- | --- | --- |\n")
	for _, r := range contract.SharedRules {
		tests := make([]string, len(r.Tests))
		for i, test := range r.Tests {
			tests[i] = "`" + test + "`"
		}
		b.WriteString("| " + r.Rule + " | `" + r.Go + "` | `" + r.Python + "` | " + strings.Join(tests, ", ") + " |\n")
	}
	return b.String()
}

// DESIGN.md's table of rules in two languages is SharedRules, rendered:
// `go test . -run TestDesignListsSharedRules -update-design`
// rewrites it after SharedRules changes.
func TestDesignListsSharedRules(t *testing.T) {
	path := filepath.Join(".", "DESIGN.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- shared-rules: generated from contract.SharedRules -->\n", "<!-- /shared-rules -->"
	before, rest, ok := strings.Cut(string(raw), open)
	table, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("DESIGN.md has no %q ... %q block", strings.TrimSpace(open), end)
	}
	want := sharedRulesTable()
	if table == want {
		return
	}
	if *updateDesign {
		if err := os.WriteFile(path, []byte(before+open+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have := strings.Split(table, "\n")
	for i, line := range strings.Split(want, "\n") {
		if i >= len(have) || have[i] != line {
			t.Fatalf("DESIGN.md's shared-rules table differs from contract.SharedRules at row %d:\n have %q\n want %q\n(rerun with -update-design to regenerate it)", i+1, at(have, i), line)
		}
	}
	t.Fatalf("DESIGN.md's shared-rules table has %d lines, SharedRules renders %d (rerun with -update-design)", len(have), len(strings.Split(want, "\n")))
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(no row)"
}
