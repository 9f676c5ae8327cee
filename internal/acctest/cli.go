package acctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
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
// .tfquery.hcl) unless TF_ACC_TERRAFORM_PATH is Terraform 1.14 or newer
// (plugin-testing's tfversion.SkipBelow): older Terraform and OpenTofu
// (1.12 here) have no list resources.
func SkipWithoutQuery(t *testing.T) {
	t.Helper()
	cli := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if cli == "" {
		t.Skip("TF_ACC_TERRAFORM_PATH is not set: terraform query needs Terraform >= 1.14")
	}
	if out, _ := exec.Command(cli, "version").Output(); strings.Contains(strings.ToLower(string(out)), "opentofu") {
		t.Skipf("%s is OpenTofu, which has no list resources (terraform query): run with Terraform >= 1.14", cli)
	}
	tf, err := tfexec.NewTerraform(t.TempDir(), cli)
	if err != nil {
		t.Fatalf("%s: %v", cli, err)
	}
	v, _, err := tf.Version(t.Context(), true)
	if err != nil {
		t.Fatalf("%s version: %v", cli, err)
	}
	var resp tfversion.CheckTerraformVersionResponse
	tfversion.SkipBelow(tfversion.Version1_14_0).CheckTerraformVersion(t.Context(),
		tfversion.CheckTerraformVersionRequest{TerraformVersion: v}, &resp)
	if resp.Skip != "" {
		t.Skip(resp.Skip)
	}
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
}
