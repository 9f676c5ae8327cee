package acctest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CLI is a Terraform-compatible command line installed on this machine.
type CLI struct {
	Name, Path string
}

// CLIs lists the installed CLIs the tests can drive, each once:
// TF_ACC_TERRAFORM_PATH, then terraform on PATH, then OpenTofu from TOFU
// (scripts/env.sh sets it) or tofu on PATH.
func CLIs() []CLI {
	candidates := []string{os.Getenv("TF_ACC_TERRAFORM_PATH")}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	candidates = append(candidates, os.Getenv("TOFU"))
	var out []CLI
	seen := map[string]bool{}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		resolved, err := filepath.EvalSymlinks(p)
		if err != nil || seen[resolved] {
			continue
		}
		if info, err := os.Stat(resolved); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		seen[resolved] = true
		name := "terraform"
		if strings.Contains(filepath.Base(resolved), "tofu") {
			name = "opentofu"
		}
		out = append(out, CLI{Name: name, Path: resolved})
	}
	return out
}

// EachCLI runs test as one subtest per installed CLI, named for it, with
// TF_ACC_TERRAFORM_PATH pointing at that CLI. Without any CLI the test is
// skipped: terraform-plugin-testing would otherwise download Terraform.
func EachCLI(t *testing.T, test func(t *testing.T)) {
	t.Helper()
	clis := CLIs()
	if len(clis) == 0 {
		t.Skip("no Terraform or OpenTofu CLI installed (set TF_ACC_TERRAFORM_PATH or TOFU)")
	}
	for _, cli := range clis {
		t.Run(cli.Name, func(t *testing.T) {
			t.Setenv("TF_ACC_TERRAFORM_PATH", cli.Path)
			test(t)
		})
	}
}

// SkipWithoutQuery skips a test of list resources (terraform query,
// .tfquery.hcl) unless TF_ACC_TERRAFORM_PATH is Terraform 1.14 or newer:
// older Terraform and OpenTofu (1.12 here) have no list resources.
func SkipWithoutQuery(t *testing.T) {
	t.Helper()
	cli := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if cli == "" {
		t.Skip("TF_ACC_TERRAFORM_PATH is not set: terraform query needs Terraform >= 1.14")
	}
	if strings.Contains(filepath.Base(cli), "tofu") {
		t.Skipf("%s is OpenTofu, which has no list resources (terraform query): run with Terraform >= 1.14", cli)
	}
	out, err := exec.Command(cli, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", cli, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	// Warnings (e.g. about the CLI configuration) may come first on stdout.
	if i := strings.IndexByte(string(out), '{'); i < 0 || json.Unmarshal(out[i:], &v) != nil {
		t.Fatalf("%s version -json printed no version:\n%s", cli, out)
	}
	if strings.Contains(string(out), "opentofu") {
		t.Skipf("%s is OpenTofu %s, which has no list resources (terraform query): run with Terraform >= 1.14", cli, v.Version)
	}
	var major, minor int
	if _, err := fmt.Sscanf(v.Version, "%d.%d", &major, &minor); err != nil || major < 1 || (major == 1 && minor < 14) {
		t.Skipf("%s is Terraform %s: list resources (terraform query) need Terraform >= 1.14", cli, v.Version)
	}
}
