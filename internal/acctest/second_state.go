package acctest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/devprovider"
)

// WorkDir is a Terraform working directory of its own, run with the real CLI
// (TF_ACC_TERRAFORM_PATH) and the provider built from this repository through
// a dev_overrides CLI configuration: a second state beside the one
// resource.Test manages, as a second infra repository would have.
type WorkDir struct {
	t   *testing.T
	Dir string
	env []string
	cli string
}

var (
	providerOnce sync.Once
	providerRC   string
	providerErr  error
)

// providerCLIConfig builds the provider once per test process and returns
// the CLI configuration that uses it (internal/devprovider).
func providerCLIConfig(t *testing.T) string {
	t.Helper()
	providerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "raytf-provider-bin-") //nolint:usetesting // shared by every test of the process, outlives the first
		if err != nil {
			providerErr = err
			return
		}
		providerRC, providerErr = devprovider.Install(context.Background(), RepoRoot(t), dir)
	})
	if providerErr != nil {
		t.Fatalf("building the provider for a second working directory: %v", providerErr)
	}
	return providerRC
}

// NewWorkDir creates a working directory holding config (main.tf; the
// required_providers block is added).
func NewWorkDir(t *testing.T, config string) *WorkDir {
	t.Helper()
	cli := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if cli == "" {
		t.Skip("TF_ACC_TERRAFORM_PATH is not set: a second working directory needs the CLI binary")
	}
	rc := providerCLIConfig(t)
	dir := t.TempDir()
	env := []string{"TF_CLI_CONFIG_FILE=" + rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "RAY_ADDRESS=" + plainray.Address()}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "HOME" || strings.HasPrefix(k, "RAY_AUTH") {
			env = append(env, kv)
		}
	}
	w := &WorkDir{t: t, Dir: filepath.Join(dir, "work"), env: env, cli: cli}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w.SetConfig(config)
	return w
}

// NewWorkDirDestroyed is NewWorkDir whose state is destroyed when the test
// ends, whatever it holds then.
func NewWorkDirDestroyed(t *testing.T, config string) *WorkDir {
	t.Helper()
	w := NewWorkDir(t, config)
	t.Cleanup(func() { _, _ = w.Run("destroy", "-auto-approve") })
	return w
}

// SetConfig replaces the directory's configuration.
func (w *WorkDir) SetConfig(config string) {
	w.t.Helper()
	// The full address: OpenTofu reads a bare "ray-infra/ray" as registry.opentofu.org's.
	text := "terraform {\n  required_providers {\n    ray = { source = \"registry.terraform.io/ray-infra/ray\" }\n  }\n}\n" + config
	if err := os.WriteFile(filepath.Join(w.Dir, "main.tf"), []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// LogProviderTo writes the provider's INFO log of every later command to
// path (TF_LOG_PROVIDER, TF_LOG_PATH), for a test that waits for a step
// only the log shows.
func (w *WorkDir) LogProviderTo(path string) {
	w.env = append(w.env, "TF_LOG_PROVIDER=INFO", "TF_LOG_PATH="+path)
}

// Run runs the CLI with args (-no-color added) and returns its combined
// output; err is set when the CLI exits non-zero.
func (w *WorkDir) Run(args ...string) (string, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	full := append([]string{args[0], "-no-color"}, args[1:]...)
	cmd := exec.CommandContext(ctx, w.cli, full...)
	cmd.Dir, cmd.Env = w.Dir, w.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	w.t.Logf("%s %s (%s, %s):\n%s", filepath.Base(w.cli), strings.Join(args, " "), filepath.Base(filepath.Dir(w.Dir)),
		time.Since(start).Round(100*time.Millisecond), out.String())
	return out.String(), err
}

// MustRun is Run failing the test on a non-zero exit.
func (w *WorkDir) MustRun(args ...string) string {
	w.t.Helper()
	out, err := w.Run(args...)
	if err != nil {
		w.t.Fatalf("%s %s failed: %v", filepath.Base(w.cli), strings.Join(args, " "), err)
	}
	return out
}
