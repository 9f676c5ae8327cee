package acctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// AuthAddress is the dashboard of the token-authenticated cluster of
// scripts/ray-cluster.sh start-auth.
const AuthAddress = "http://127.0.0.1:8266"

// StartAuthCluster starts the single-node, token-authenticated Ray of
// scripts/ray-cluster.sh start-auth with a fresh random token, returns the
// token, and stops that cluster (only that one) when the test ends. The test
// is skipped when RAY_TF_SKIP_AUTH is set (and not 0) or the cluster cannot start.
func StartAuthCluster(t *testing.T) string {
	t.Helper()
	if skipSet("RAY_TF_SKIP_AUTH") {
		t.Skip("RAY_TF_SKIP_AUTH is set: not starting the token-authenticated Ray")
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	token := "raytf-acc-" + hex.EncodeToString(b[:])
	// A leftover cluster would hold another token.
	if _, err := ClusterScript(t, 2*time.Minute, "stop-auth"); err != nil {
		t.Skipf("cannot stop a leftover token-authenticated Ray: %v", err)
	}
	t.Cleanup(func() {
		if _, err := ClusterScript(t, 2*time.Minute, "stop-auth"); err != nil {
			t.Errorf("stopping the token-authenticated Ray: %v", err)
		}
	})
	t.Setenv("RAY_TF_AUTH_TOKEN", token)
	_, err := ClusterScript(t, 3*time.Minute, "start-auth")
	if err != nil {
		t.Skipf("the token-authenticated Ray (scripts/ray-cluster.sh start-auth) did not start, skipping: %v", err)
	}
	out, err := ClusterScript(t, time.Minute, "auth-token")
	if err != nil || strings.TrimSpace(out) != token {
		t.Fatalf("scripts/ray-cluster.sh auth-token did not return the token it was given (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := rayclient.New(rayclient.Config{Address: AuthAddress, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(ctx); err != nil {
		t.Fatalf("the token-authenticated Ray rejects its own token: %v", err)
	}
	return token
}

// AuthClient is a client for the token-authenticated cluster.
func AuthClient(t testing.TB, token string) *rayclient.Client {
	t.Helper()
	c, err := rayclient.New(rayclient.Config{Address: AuthAddress, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// skipSet reports whether a RAY_TF_SKIP_* switch is on: set, and not "0".
func skipSet(name string) bool {
	v := os.Getenv(name)
	return v != "" && v != "0"
}
