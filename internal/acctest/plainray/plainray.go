// Package plainray reaches the local test cluster the way an operator
// would: its addresses, its Ray virtualenv's python and scripts of plain ray
// calls, never the provider's driver, so that a driver bug cannot sit on both
// sides of a test. It imports nothing of the provider, so the driver's own
// tests use it as well as acctest.
package plainray

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Address is the dashboard of the test cluster (scripts/env.sh's RAY_ADDRESS).
func Address() string {
	if a := os.Getenv("RAY_ADDRESS"); a != "" {
		return a
	}
	return "http://127.0.0.1:8265"
}

// GCSAddress is the GCS of the test cluster (scripts/ray-cluster.sh's
// RAY_TF_IP_BASE and RAY_TF_GCS_PORT, so a side cluster works too).
func GCSAddress() string {
	port := os.Getenv("RAY_TF_GCS_PORT")
	if port == "" {
		port = "6379"
	}
	return HostIP(0) + ":" + port
}

// HostIP is the loopback address of the test cluster's node at offset from
// its head (scripts/ray-cluster.sh numbers them from RAY_TF_IP_BASE, CI 10).
func HostIP(offset int) string {
	base := 10
	if v, err := strconv.Atoi(os.Getenv("RAY_TF_IP_BASE")); err == nil {
		base = v
	}
	return "127.0.0." + strconv.Itoa(base+offset)
}

// Python is the Ray virtualenv's interpreter (RAY_BIN, set by scripts/env.sh).
func Python(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("RAY_BIN")
	if bin == "" {
		t.Fatal("RAY_BIN is not set (source scripts/env.sh)")
	}
	return filepath.Join(bin, "python")
}

// Env is the environment for scripts and Ray processes the tests start:
// the test's own, without the auth and Terraform log settings meant for the
// provider under test.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "TF_LOG", "TF_LOG_PATH", "TF_ACC_LOG_PATH", "TF_LOG_PATH_MASK":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// inputPrelude decodes what Command encodes: every script starts with ray
// imported and its input in spec.
const inputPrelude = `import base64, json, sys
import ray
spec = json.loads(base64.b64decode(sys.argv[1]))
`

// Command returns a command running script (after inputPrelude) with the
// Ray virtualenv's python as a plain Ray driver; input reaches it as spec.
// The script connects to the GCS itself, so RAY_ADDRESS (the dashboard, for
// the provider) is not passed on.
func Command(ctx context.Context, t testing.TB, script string, input any) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, Python(t), "-c", inputPrelude+script, base64.StdEncoding.EncodeToString(raw))
	for _, kv := range Env() {
		if !strings.HasPrefix(kv, "RAY_ADDRESS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// Run runs script to the end (Command) within timeout and returns its
// trimmed stdout; a failure fails the test with what and stderr's tail.
func Run(t testing.TB, timeout time.Duration, what, script string, input any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := Command(ctx, t, script, input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, Tail(stderr.String()))
	}
	return strings.TrimSpace(stdout.String())
}

// Tail is the last 20 lines of s, for failure messages.
func Tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
