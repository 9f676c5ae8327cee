// Package acctest holds what the acceptance tests share: provider factories,
// pre-checks, checks that ask the real Ray cluster, not Terraform state, and
// the HCL builder every test configuration is written with (hcl.go).
package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/provider"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// ProviderFactories serves the provider in-process to the Terraform CLI.
var ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"ray": func() (tfprotov6.ProviderServer, error) { return provider.NewProtocol6Server("test")(), nil },
}

// Client is a client for the test cluster.
func Client(t testing.TB) *rayclient.Client {
	t.Helper()
	c, err := rayclient.New(rayclient.Config{Address: plainray.Address()})
	if err != nil {
		t.Fatalf("ray client: %v", err)
	}
	return c
}

// PreCheckCLI prepares, for this test only, what a test that drives the CLI
// needs and no import should set up: terraform-plugin-testing's default
// provider namespace "-" is a legacy address that OpenTofu rejects, so it
// becomes "hashicorp" (what an unqualified `provider "ray"` means); and an
// empty CLI configuration keeps the CLI from warning about a missing one
// (~/.terraformrc, or a TF_CLI_CONFIG_FILE that does not exist).
func PreCheckCLI(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC_PROVIDER_NAMESPACE") == "" {
		t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "hashicorp")
	}
	if _, err := os.Stat(os.Getenv("TF_CLI_CONFIG_FILE")); err != nil {
		rc := filepath.Join(t.TempDir(), "empty.tfrc")
		if err := os.WriteFile(rc, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TF_CLI_CONFIG_FILE", rc)
	}
}

// PreCheck skips without TF_ACC and fails fast with a clear message when no
// local Ray answers.
func PreCheck(t *testing.T) {
	t.Helper()
	PreCheckCLI(t)
	// Tests that look at Ray before resource.Test call this first; like
	// resource.Test, they are acceptance tests only with TF_ACC set.
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (make testacc)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := Client(t).Version(ctx)
	if err != nil {
		t.Fatalf("no Ray dashboard at %s (start one with scripts/ray-cluster.sh start): %v", plainray.Address(), err)
	}
	t.Logf("Ray %s at %s (session %s)", v.RayVersion, plainray.Address(), v.SessionName)
}

// Name returns a unique cluster name for one test.
func Name(prefix string) string {
	return fmt.Sprintf("acc-%s-%s", prefix, acctest.RandString(6))
}

// LiveGroups lists the non-removed placement groups whose names start with prefix.
func LiveGroups(ctx context.Context, c *rayclient.Client, prefix string) ([]raystate.PlacementGroup, error) {
	all, err := c.ListPlacementGroups(ctx, rayclient.ListOptions{
		Filters: []rayclient.Filter{rayclient.Ne("state", raystate.PlacementGroupStateRemoved)}, Detail: true})
	if err != nil {
		return nil, err
	}
	var out []raystate.PlacementGroup
	for _, g := range all {
		if strings.HasPrefix(g.Name, prefix+"-") {
			out = append(out, g)
		}
	}
	return out, nil
}
