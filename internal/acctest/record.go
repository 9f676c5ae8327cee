package acctest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// recordScript reads one key of Ray's internal KV with plain ray calls (not
// the provider's driver) and prints it, or "null" when it is absent.
const recordScript = `from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
raw = internal_kv._internal_kv_get(spec["key"], namespace=spec["kv_namespace"])
print(raw.decode() if raw is not None else "null")
`

// ReadRecord returns the cluster record the provider keeps in Ray's KV for
// name in the default namespace, read out of band; nil when there is none.
func ReadRecord(t *testing.T, name string) *record.Manifest {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "reading the record of "+name, recordScript, map[string]any{"address": plainray.GCSAddress(),
		"key": record.RecordKey(clusterspec.DefaultNamespace, name), "kv_namespace": record.KVNamespace})
	lines := strings.Split(out, "\n")
	var m *record.Manifest
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("record of %s: %v\n%s", name, err, out)
	}
	return m
}

// reservationsScript prints every reservation in the provider's KV
// namespace as one JSON object, read with plain ray calls.
const reservationsScript = `import json
from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
out = {}
for key in internal_kv._internal_kv_list(spec["prefix"], namespace=spec["kv_namespace"]) or []:
    key = key.decode()
    if "/takeover/" in key:
        continue
    raw = internal_kv._internal_kv_get(key, namespace=spec["kv_namespace"])
    value = json.loads(raw) if raw else {}
    out[key[len(spec["prefix"]):]] = {"nodes": value.get("nodes") or {}, "groups": value.get("groups") or [],
                                      "owner": value.get("owner") or "", "group_ids": value.get("group_ids") or []}
print(json.dumps(out))
`

// Reservation is one cluster's reservation as Ray's KV holds it.
type Reservation struct {
	Nodes    map[string]map[string]float64 `json:"nodes"`
	Groups   []string                      `json:"groups"`
	Owner    string                        `json:"owner"`
	GroupIDs []string                      `json:"group_ids"`
}

// Reservations lists the reservations in Ray's KV ("<namespace>/<cluster>"
// -> reservation) of the clusters whose name starts with prefix.
func Reservations(t *testing.T, prefix string) map[string]Reservation {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "reading the reservations", reservationsScript, map[string]any{"address": plainray.GCSAddress(),
		"prefix": record.ReservationPrefix, "kv_namespace": record.KVNamespace})
	lines := strings.Split(out, "\n")
	all := map[string]Reservation{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &all); err != nil {
		t.Fatalf("reservations: %v\n%s", err, out)
	}
	got := map[string]Reservation{}
	for key, r := range all {
		if _, name, _ := strings.Cut(key, "/"); strings.HasPrefix(name, prefix) {
			got[key] = r
		}
	}
	return got
}

// writeKVScript writes one key of Ray's internal KV (value null: deletes
// it) with plain ray calls (not the provider's driver).
const writeKVScript = `import json
from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
if spec["value"] is None:
    internal_kv._internal_kv_del(spec["key"], namespace=spec["kv_namespace"])
else:
    internal_kv._internal_kv_put(spec["key"], json.dumps(spec["value"]), overwrite=True, namespace=spec["kv_namespace"])
print("ok")
`

// WriteReservation writes value as the reservation of cluster name in the
// default namespace, out of band, as a killed apply leaves one; nil value
// deletes it.
func WriteReservation(t *testing.T, name string, value map[string]any) {
	t.Helper()
	plainray.Run(t, 2*time.Minute, "writing the reservation of "+name, writeKVScript, map[string]any{"address": plainray.GCSAddress(),
		"key": record.ReservationKey(clusterspec.DefaultNamespace, name), "kv_namespace": record.KVNamespace, "value": value})
}

// Quota is a namespace's quota as Ray's KV holds it.
type Quota struct {
	Namespace string             `json:"namespace"`
	Owner     string             `json:"owner"`
	Limits    map[string]float64 `json:"limits"`
	// LabelLimits as the KV holds them: {"labels": ..., "limits": ...}.
	LabelLimits []struct {
		Labels map[string]string  `json:"labels"`
		Limits map[string]float64 `json:"limits"`
	} `json:"label_limits"`
}

// ReadQuota returns the quota the provider keeps in Ray's KV for Ray
// namespace ns, read out of band; nil when there is none.
func ReadQuota(t *testing.T, ns string) *Quota {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "reading the quota of "+ns, recordScript, map[string]any{"address": plainray.GCSAddress(),
		"key": record.QuotaKey(ns), "kv_namespace": record.KVNamespace})
	lines := strings.Split(out, "\n")
	var q *Quota
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &q); err != nil {
		t.Fatalf("quota of %s: %v\n%s", ns, err, out)
	}
	return q
}

// providerKVScript prints every key of the provider's KV namespace with its
// raw value, read with plain ray calls.
const providerKVScript = `import json
from ray.experimental import internal_kv
ray.init(address=spec["address"], log_to_driver=False)
out = {}
for key in internal_kv._internal_kv_list("", namespace=spec["kv_namespace"]) or []:
    raw = internal_kv._internal_kv_get(key, namespace=spec["kv_namespace"])
    out[key.decode()] = raw.decode() if raw is not None else ""
print(json.dumps(out))
`

// ProviderKV returns every key of the provider's KV namespace (records,
// reservations, tombstones, quotas, the lock) with its raw value, as any
// Ray client can read them.
func ProviderKV(t *testing.T) map[string]string {
	t.Helper()
	out := plainray.Run(t, 2*time.Minute, "reading the provider's KV", providerKVScript, map[string]any{"address": plainray.GCSAddress(),
		"kv_namespace": record.KVNamespace})
	lines := strings.Split(out, "\n")
	all := map[string]string{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &all); err != nil {
		t.Fatalf("provider KV: %v\n%s", err, out)
	}
	return all
}

// WriteKV writes value under key of the provider's KV namespace, out of
// band (as an older provider version wrote it); nil value deletes it.
func WriteKV(t *testing.T, key string, value map[string]any) {
	t.Helper()
	plainray.Run(t, 2*time.Minute, "writing "+key, writeKVScript, map[string]any{"address": plainray.GCSAddress(),
		"key": key, "kv_namespace": record.KVNamespace, "value": value})
}
