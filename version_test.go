package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// versionRepo is a git repository in a temp dir holding scripts/version.sh.
type versionRepo struct {
	t       *testing.T
	dir     string
	changes int
	env     []string // extra environment of the next commands, e.g. the commit's time
}

func newVersionRepo(t *testing.T) *versionRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	script, err := os.ReadFile("scripts/version.sh")
	if err != nil {
		t.Fatal(err)
	}
	r := &versionRepo{t: t, dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(r.dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "scripts/version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("init", "-q")
	return r
}

func (r *versionRepo) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	cmd.Env = append(cmd.Env, r.env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// must runs name in the repository and fails the test when it fails.
func (r *versionRepo) must(name string, args ...string) string {
	r.t.Helper()
	out, err := r.run(name, args...)
	if err != nil {
		r.t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
	return out
}

func (r *versionRepo) git(args ...string) string {
	r.t.Helper()
	return r.must("git", args...)
}

// commit writes CHANGELOG.md with the given heading (and a line that changes every time) and
// commits it at the given committer time (RFC 3339, any zone).
func (r *versionRepo) commit(heading, when string) string {
	r.t.Helper()
	r.write(heading)
	r.git("add", "-A")
	r.env = []string{"GIT_COMMITTER_DATE=" + when}
	defer func() { r.env = nil }()
	r.git("commit", "-q", "-m", heading)
	return r.git("rev-parse", "HEAD")
}

func (r *versionRepo) write(heading string) {
	r.t.Helper()
	r.changes++
	body := "# Changelog\n\n## " + heading + "\n\n* change " + strings.Repeat("x", r.changes) + "\n"
	if err := os.WriteFile(filepath.Join(r.dir, "CHANGELOG.md"), []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *versionRepo) version(args ...string) string {
	r.t.Helper()
	return r.must("scripts/version.sh", args...)
}

// scripts/version.sh: a vX.Y.Z tag's release, else a pre-release of the version under way
// (CHANGELOG.md's (Unreleased) heading, else the newest released one bumped in patch) numbered by
// the commit's UTC time and naming the commit; from HEAD, whatever the working tree holds.
func TestVersionScript(t *testing.T) {
	r := newVersionRepo(t)
	first := r.commit("0.1.0 (Unreleased)", "2026-12-07T18:55:00+01:00")
	if got, want := r.version(), "0.1.0-dev.20261207175500+"+first[:12]; got != want {
		t.Errorf("untagged, no tag anywhere: %q, want %q", got, want)
	}
	second := r.commit("0.1.0 (Unreleased)", "2026-12-08T09:00:01Z")
	if got, want := r.version(), "0.1.0-dev.20261208090001+"+second[:12]; got != want {
		t.Errorf("second commit: %q, want %q", got, want)
	}
	r.commit("0.1.0 (March 2, 2027)", "2027-03-02T10:00:00Z")
	r.git("tag", "v0.1.0")
	if got := r.version(); got != "0.1.0" {
		t.Errorf("on tag v0.1.0: %q, want 0.1.0", got)
	}
	r.write("9.9.9 (Unreleased)") // uncommitted: not the commit's version
	if got := r.version(); got != "0.1.0" {
		t.Errorf("on tag v0.1.0 with a dirty CHANGELOG.md: %q, want 0.1.0", got)
	}
	after := r.commit("0.1.0 (March 2, 2027)", "2027-03-02T11:00:00Z")
	if got, want := r.version(), "0.1.1-dev.20270302110000+"+after[:12]; got != want {
		t.Errorf("a commit after the release: %q, want %q", got, want)
	}
	next := r.commit("0.2.0 (Unreleased)", "2027-03-03T00:00:00-08:00")
	if got, want := r.version(), "0.2.0-dev.20270303080000+"+next[:12]; got != want {
		t.Errorf("with 0.2.0 (Unreleased): %q, want %q", got, want)
	}
	if got := r.version("--changelog"); got != "0.2.0" {
		t.Errorf("--changelog: %q, want 0.2.0", got)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+-dev\.\d{14}\+[0-9a-f]{12}$`).MatchString(r.version()) {
		t.Errorf("%q is not X.Y.Z-dev.YYYYMMDDHHMMSS+<12 hex>", r.version())
	}
	r.git("tag", "v0.3.0")
	if out, err := r.run("scripts/version.sh"); err == nil || !strings.Contains(out, "CHANGELOG.md's newest version is 0.2.0") {
		t.Errorf("tag v0.3.0 on a 0.2.0 CHANGELOG: %q, %v; want an error naming both", out, err)
	}
}

// A shallow clone (CI's default checkout) names a commit as a full clone does: a lock file written
// from a laptop's build finds the CI-built mirror's zip.
func TestVersionScriptShallowClone(t *testing.T) {
	r := newVersionRepo(t)
	for i, when := range []string{"2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z", "2026-12-07T17:55:00Z"} {
		r.commit("0.1.0 (Unreleased)", when)
		if i == 0 {
			r.git("tag", "v0.0.9") // an older tag a shallow clone does not reach
		}
	}
	full := r.version()
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.git("clone", "-q", "--depth", "1", "file://"+r.dir, shallow)
	if n := r.git("-C", shallow, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("the clone holds %s commits, want a shallow one", n)
	}
	got, err := exec.Command(filepath.Join(shallow, "scripts/version.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("version.sh in the shallow clone: %v: %s", err, got)
	}
	if strings.TrimSpace(string(got)) != full || !strings.Contains(full, "-dev.20261207175500+") {
		t.Errorf("shallow clone: %q, full clone: %q; want both X.Y.Z-dev.20261207175500+<sha>", got, full)
	}
}
