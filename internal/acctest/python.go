package acctest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rayPython returns a command running script with the Ray virtualenv's python
// (RAY_BIN) as a plain Ray driver, outside the provider: the script gets its
// input as base64 JSON in sys.argv[1] and connects to the GCS itself, so
// RAY_ADDRESS (the dashboard, for the provider) is not passed on.
func rayPython(ctx context.Context, t testing.TB, script string, input any) *exec.Cmd {
	t.Helper()
	bin := os.Getenv("RAY_BIN")
	if bin == "" {
		t.Fatal("RAY_BIN is not set (source scripts/env.sh)")
	}
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "python"), "-c", script, base64.StdEncoding.EncodeToString(raw))
	for _, kv := range scriptEnv() {
		if !strings.HasPrefix(kv, "RAY_ADDRESS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// runRayPython runs script to the end (rayPython) within timeout and returns
// its trimmed stdout; a failure fails the test with what and stderr's tail.
func runRayPython(t testing.TB, timeout time.Duration, what, script string, input any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := rayPython(ctx, t, script, input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, tail(stderr.String()))
	}
	return strings.TrimSpace(stdout.String())
}
