package acctest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// recordScript reads one key of Ray's internal KV with plain ray calls (not
// the provider's driver) and prints it, or "null" when it is absent.
const recordScript = `import base64, json, sys
import ray
from ray.experimental import internal_kv
spec = json.loads(base64.b64decode(sys.argv[1]))
ray.init(address=spec["address"], log_to_driver=False)
raw = internal_kv._internal_kv_get(spec["key"], namespace=spec["kv_namespace"])
print(raw.decode() if raw is not None else "null")
`

// ReadRecord returns the cluster record the provider keeps in Ray's KV for
// name in the default namespace, read out of band; nil when there is none.
func ReadRecord(t *testing.T, name string) *vcluster.Manifest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := rayPython(ctx, t, recordScript, map[string]any{"address": GCSAddress(),
		"key": vcluster.RecordKey(vcluster.DefaultNamespace, name), "kv_namespace": vcluster.KVNamespace})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reading the record of %s: %v\n%s", name, err, tail(stderr.String()))
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var m *vcluster.Manifest
	if err := json.Unmarshal(lines[len(lines)-1], &m); err != nil {
		t.Fatalf("record of %s: %v\n%s", name, err, stdout.String())
	}
	return m
}
