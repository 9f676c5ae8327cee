// Package devprovider builds the provider from this repository for a real
// Terraform or OpenTofu CLI (tests that need a second working directory, and
// the benchmarks), through scripts/dev-provider.sh, the one copy of that step.
package devprovider

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Install builds the provider of the repository at root into dir/bin and
// writes a CLI configuration whose dev_overrides use it; it returns the
// configuration's path, for TF_CLI_CONFIG_FILE.
func Install(ctx context.Context, root, dir string) (string, error) {
	return InstallPackage(ctx, root, dir, ".")
}

// InstallPackage is Install with another main package of the module (pkg,
// e.g. "./bench/cmd/minprovider") built in the provider's place.
func InstallPackage(ctx context.Context, root, dir, pkg string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "dev-provider.sh"), dir, pkg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("scripts/dev-provider.sh %s %s: %w\n%s", dir, pkg, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}
