package main

import (
	"os"
	"regexp"
	"testing"
)

// The release workflow installs GoReleaser itself (goreleaser-action); it
// must be the version `make release-check` and CI run from the tools module.
func TestReleaseWorkflowRunsThePinnedGoReleaser(t *testing.T) {
	mod, err := os.ReadFile("tools/goreleaser/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	workflow, err := os.ReadFile(".github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`(?m)^\s*github\.com/goreleaser/goreleaser/v2 (v\S+)`).FindSubmatch(mod)
	used := regexp.MustCompile(`(?m)^\s*version: (v\S+)\s*$`).FindSubmatch(workflow)
	if pinned == nil || used == nil {
		t.Fatalf("no GoReleaser version found: tools/goreleaser/go.mod %q, release.yml %q", pinned, used)
	}
	if string(pinned[1]) != string(used[1]) {
		t.Errorf("release.yml runs GoReleaser %s, tools/goreleaser/go.mod pins %s", used[1], pinned[1])
	}
}
