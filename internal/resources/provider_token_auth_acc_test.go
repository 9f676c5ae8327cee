package resources_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

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
//   - with the token attribute, and separately with only RAY_AUTH_TOKEN or only
//     RAY_AUTH_TOKEN_PATH in the environment, it reads the topology and creates
//     and destroys a virtual cluster; with only ~/.ray/auth_token it reads the
//     topology;
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
	t.Setenv("RAY_AUTH_TOKEN_PATH", "")
	// No ~/.ray/auth_token of the machine's user may reach the provider: the
	// first step needs no token at all. (Set after StartAuthCluster, whose
	// script finds Ray under the real HOME.)
	home := filepath.Join(dir, "home")
	t.Setenv("HOME", home)
	authRay := func() *rayclient.Client { return acctest.AuthClient(t, token) }
	version, err := authRay().Version(context.Background())
	if err != nil {
		t.Fatalf("asking the token-authenticated Ray for its version: %v", err)
	}
	provider := func(tokenExpr string) acctest.Provider {
		return acctest.Provider{Address: acctest.AuthAddress, MaxRetries: acctest.Retries(1), Token: tokenExpr}
	}
	tokenFrom := func(file string) string { return fmt.Sprintf("trimspace(file(%q))", file) }
	cluster := func(name string) acctest.VirtualCluster {
		return acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 2}
	}
	// The single node of scripts/ray-cluster.sh start-auth.
	const authNodeIP = "127.0.0.30"
	// works applies config (the topology and cluster(name)) and checks both.
	works := func(name, config string) resource.TestStep {
		return resource.TestStep{
			Config: config,
			Check:  acctest.CheckGroupsAt(authRay, name, map[string]int{name + "-node0": 1}),
			ConfigStateChecks: []statecheck.StateCheck{
				expectDS(at("nodes"), knownvalue.ListSizeExact(1)),
				expectDS(at("nodes", 0, "node_ip"), knownvalue.StringExact(authNodeIP)),
				expectDS(at("total_gpus"), knownvalue.Int64Exact(2)),
				expectDS(at("total_cpus"), knownvalue.Int64Exact(4)),
				expectDS(at("ray_version"), knownvalue.StringExact(version.RayVersion)),
				expectVC(at("bundles", 0, "node_ip"), knownvalue.StringExact(authNodeIP)),
				acctest.ExpectStateLacks(token),
			},
		}
	}

	name := acctest.Name("auth")
	t.Run("token attribute", func(t *testing.T) {
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheckCLI(t) },
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			CheckDestroy:             acctest.CheckNoGroupsAt(authRay, name),
			Steps: []resource.TestStep{
				{
					Config:      acctest.HCL(provider(""), acctest.Topology{}),
					ExpectError: wrappedRE(`Ray rejected the credentials`, `401 Unauthorized`, `Missing authentication token`, `ray get-auth-token`),
				},
				{
					Config:      acctest.HCL(provider(tokenFrom(wrongFile)), acctest.Topology{}),
					ExpectError: wrappedRE(`403 Forbidden`, `Invalid authentication token`),
				},
				{
					// Rejected credentials fail the plan: nothing is submitted.
					Config:      acctest.HCL(provider(tokenFrom(wrongFile)), cluster(name)),
					ExpectError: wrappedRE(`403 Forbidden`, `Invalid authentication token`),
				},
				works(name, acctest.HCL(provider(tokenFrom(tokenFile)), acctest.Topology{}, cluster(name))),
			},
		})
	})

	// Ray's token sources after the attribute, in its order: RAY_AUTH_TOKEN, the
	// file RAY_AUTH_TOKEN_PATH names (its first line), then ~/.ray/auth_token.
	for _, src := range []struct{ env, value, prefix string }{
		{"RAY_AUTH_TOKEN", token, "authenv"},
		{"RAY_AUTH_TOKEN_PATH", tokenFile, "authpath"},
	} {
		envName := acctest.Name(src.prefix)
		t.Run(src.env, func(t *testing.T) {
			t.Setenv(src.env, src.value)
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheckCLI(t) },
				ProtoV6ProviderFactories: acctest.ProviderFactories,
				CheckDestroy:             acctest.CheckNoGroupsAt(authRay, envName),
				Steps: []resource.TestStep{
					works(envName, acctest.HCL(provider(""), acctest.Topology{}, cluster(envName))),
				},
			})
		})
	}
	t.Run("~/.ray/auth_token", func(t *testing.T) {
		if os.MkdirAll(filepath.Join(home, ".ray"), 0o700) != nil ||
			os.WriteFile(filepath.Join(home, ".ray", "auth_token"), []byte(token+"\n"), 0o600) != nil {
			t.Fatal("cannot write the home token file")
		}
		defer os.Remove(filepath.Join(home, ".ray", "auth_token"))
		resource.Test(t, resource.TestCase{
			PreCheck:                 func() { acctest.PreCheckCLI(t) },
			ProtoV6ProviderFactories: acctest.ProviderFactories,
			Steps: []resource.TestStep{{
				Config: acctest.HCL(provider(""), acctest.Topology{}),
				ConfigStateChecks: []statecheck.StateCheck{
					expectDS(at("nodes", 0, "node_ip"), knownvalue.StringExact(authNodeIP)),
				},
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
