package resources_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// TestAccSecurity_tokenAuth runs the provider against a second, single-node
// Ray with token authentication (RAY_AUTH_MODE=token), which the test starts
// and stops itself (scripts/ray-cluster.sh start-auth / stop-auth; skipped
// with RAY_TF_SKIP_AUTH=1 or when that cluster cannot start):
//
//   - without a token the data source fails with Ray's 401, with a wrong
//     token with Ray's 403, and an apply with a wrong token creates nothing;
//   - with the token attribute, and separately with only RAY_AUTH_TOKEN in
//     the environment, it reads the topology and creates and destroys a
//     virtual cluster;
//   - the token appears in no attribute of the Terraform state, and nowhere
//     in the TRACE logs of the provider and the CLI.
func TestAccSecurity_tokenAuth(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	token := acctest.StartAuthCluster(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "tf-trace.log")
	// The configurations read the tokens from files, so that the test
	// framework's own logging of each configuration does not show them: any
	// occurrence in the log is then the provider's, the SDK's or the CLI's.
	tokenFile, wrongFile := filepath.Join(dir, "token"), filepath.Join(dir, "wrong-token")
	const wrong = "raytf-wrong-token-5d41402abc4b2a76"
	if os.WriteFile(tokenFile, []byte(token+"\n"), 0o600) != nil || os.WriteFile(wrongFile, []byte(wrong), 0o600) != nil {
		t.Fatal("cannot write the token files")
	}
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath) // provider (tflog) and CLI logs, all levels
	t.Setenv("RAY_AUTH_TOKEN", "")
	authRay := func() *rayclient.Client { return acctest.AuthClient(t, token) }
	provider := func(tokenLine string) string {
		return fmt.Sprintf(`
provider "ray" {
  address     = %q
  max_retries = 1
  %s
}
`, acctest.AuthAddress, tokenLine)
	}
	cluster := func(name string) string {
		return fmt.Sprintf(`
data "ray_cluster_topology" "t" { include_nodes = true }

resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1]
  num_gpus_per_node       = 2
}`, name)
	}
	const ds = "data.ray_cluster_topology.t"
	works := func(name string) resource.TestCheckFunc {
		return resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(ds, "nodes.#", "1"),
			resource.TestCheckResourceAttr(ds, "nodes.0.node_ip", "127.0.0.30"),
			resource.TestCheckResourceAttr(ds, "total_gpus", "2"),
			resource.TestCheckResourceAttr(ds, "total_cpus", "4"),
			resource.TestCheckResourceAttr(ds, "ray_version", "2.60.0"),
			acctest.CheckExactGroupsAt(authRay, name, map[string]int{name + "-node0": 1}),
			resource.TestCheckResourceAttr(vcAuth, "bundles.0.node_ip", "127.0.0.30"),
			acctest.CheckStateLacks(token),
		)
	}

	name := acctest.Name("auth")
	t.Run("token attribute", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			CheckDestroy:             acctest.CheckNoGroupsAt(authRay, name),
			Steps: []resource.TestStep{
				{
					Config:      provider("") + `data "ray_cluster_topology" "t" {}`,
					ExpectError: wrappedRE(`Ray rejected the credentials`, `401 Unauthorized`, `Missing authentication token`, `ray get-auth-token`),
				},
				{
					Config:      provider(fmt.Sprintf("token = trimspace(file(%q))", wrongFile)) + `data "ray_cluster_topology" "t" {}`,
					ExpectError: wrappedRE(`403 Forbidden`, `Invalid authentication token`),
				},
				{
					// Rejected credentials fail the plan: nothing is submitted.
					Config: provider(fmt.Sprintf("token = trimspace(file(%q))", wrongFile)) + fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1]
  num_gpus_per_node       = 2
}`, name),
					ExpectError: wrappedRE(`403 Forbidden`, `Invalid authentication token`),
				},
				{
					Config: provider(fmt.Sprintf("token = trimspace(file(%q))", tokenFile)) + cluster(name),
					Check:  works(name),
				},
			},
		})
	})

	envName := acctest.Name("authenv")
	t.Run("RAY_AUTH_TOKEN", func(t *testing.T) {
		t.Setenv("RAY_AUTH_TOKEN", token)
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			CheckDestroy:             acctest.CheckNoGroupsAt(authRay, envName),
			Steps: []resource.TestStep{{
				Config: provider("") + cluster(envName),
				Check:  works(envName),
			}},
		})
	})

	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("reading the TRACE log: %v", err)
	}
	t.Logf("TRACE log: %d bytes", len(logs))
	for _, want := range []string{"configured Ray client", "submitting placement-group driver job", "ray: sending request"} {
		if !bytes.Contains(logs, []byte(want)) {
			t.Errorf("the TRACE log lacks %q: provider logs were not captured", want)
		}
	}
	if i := bytes.Index(logs, []byte(token)); i >= 0 {
		lo, hi := max(0, i-300), min(len(logs), i+len(token)+100)
		t.Errorf("the token appears in the TRACE log:\n%s", bytes.ReplaceAll(logs[lo:hi], []byte(token), []byte("<TOKEN>")))
	}
	if bytes.Contains(logs, []byte(wrong)) {
		t.Errorf("the wrong token appears in the TRACE log")
	}
}

const vcAuth = "ray_virtual_cluster.t"
