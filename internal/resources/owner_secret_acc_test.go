package resources_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/drivertest"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Another state can read nothing, through the provider or from Ray, that
// lets it act as a cluster's owner: Ray's KV (record, reservation, quota,
// tombstone), its job records (driver jobs' entrypoints and logs, transfer
// and quota notes) and the data source hold only digests of owner tokens.
func TestAccOwnerSecret_notReadableFromRay(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	ctx := context.Background()
	name := acctest.Name("secret")
	ns := name + "-q"
	removeGroupsAtCleanup(t, name)
	quota := acctest.Block{Type: "resource", Labels: []string{"ray_namespace_quota", "team"},
		Attrs: []acctest.Attr{{Key: "namespace", Expr: acctest.Quote(ns)}, {Key: "gpus", Expr: "64"}}}
	owner := acctest.NewWorkDir(t, acctest.HCL(plainCluster(name), quota))
	t.Cleanup(func() { _, _ = owner.Run("destroy", "-auto-approve") })
	owner.MustRun("apply", "-auto-approve")
	tokens := stateTokens(t, owner)
	clusterTok, quotaTok := tokens[vcName], tokens["ray_namespace_quota.team"]
	if len(clusterTok) != 32 || len(quotaTok) != 32 {
		t.Fatalf("owner tokens in the state: %v", tokens)
	}
	noTokenInRay(t, "after the owner's apply", tokens)
	kv := acctest.ProviderKV(t)
	for key, tok := range map[string]string{record.RecordKey(clusterspec.DefaultNamespace, name): clusterTok,
		record.ReservationKey(clusterspec.DefaultNamespace, name): clusterTok, record.QuotaKey(ns): quotaTok} {
		var v struct {
			Owner string `json:"owner"`
		}
		if err := json.Unmarshal([]byte(kv[key]), &v); err != nil || v.Owner != record.OwnerDigest(tok) {
			t.Errorf("%s holds owner %q, want the digest %s (%v)", key, v.Owner, record.OwnerDigest(tok), err)
		}
	}
	if note, err := acctest.Client(t).GetJob(ctx, driver.QuotaNoteID(ns)); err != nil || note.Metadata["raytf_quota_owner"] != record.OwnerDigest(quotaTok) {
		t.Errorf("the quota note: %+v, %v", note, err)
	}

	// Through the provider: a second state's data source sees the digest.
	reader := acctest.NewWorkDir(t, readerConfig(name))
	if read := readFromSecondState(t, reader); read["owner_id"] != record.OwnerDigest(clusterTok) {
		t.Errorf("the data source's owner_id is %v, want the digest %s", read["owner_id"], record.OwnerDigest(clusterTok))
	}
	if data, err := os.ReadFile(reader.Dir + "/terraform.tfstate"); err != nil || strings.Contains(string(data), clusterTok) {
		t.Errorf("the reader's state holds the owner's token (or cannot be read: %v)", err)
	}

	// A third state takes the cluster over: the transfer note holds digests,
	// and still warns the former owner.
	taker := acctest.NewWorkDir(t, plainCluster(name).String())
	taker.MustRun("import", vcName, name)
	taker.MustRun("apply", "-auto-approve")
	t.Cleanup(func() { _, _ = taker.Run("destroy", "-auto-approve") })
	takerTok := stateOwner(t, taker)
	tokens["taker"] = takerTok
	noTokenInRay(t, "after the import's apply", tokens)
	note, err := acctest.Client(t).GetJob(ctx, driver.TransferID(clusterspec.DefaultNamespace, name))
	if err != nil || note.Metadata["raytf_transfer_from"] != record.OwnerDigest(clusterTok) || note.Metadata["raytf_transfer_to"] != record.OwnerDigest(takerTok) {
		t.Errorf("the transfer note: %+v, %v", note, err)
	}
	if out := strings.Join(strings.Fields(owner.MustRun("plan")), " "); !strings.Contains(out, "Virtual cluster imported by another state") ||
		!strings.Contains(out, "(owner "+record.OwnerPrefix(takerTok)+"…)") {
		t.Errorf("the former owner's plan does not warn, by the new owner's digest prefix:\n%s", out)
	}

	taker.MustRun("destroy", "-auto-approve")
	var tomb record.Tombstone
	if err := json.Unmarshal([]byte(acctest.ProviderKV(t)[record.TombstoneKey(clusterspec.DefaultNamespace, name)]), &tomb); err != nil ||
		tomb.DeletedBy != record.OwnerDigest(takerTok) || tomb.RecordOwner != record.OwnerDigest(takerTok) {
		t.Errorf("the tombstone: %+v, %v", tomb, err)
	}
	noTokenInRay(t, "after the destroy", tokens)
}

// stateTokens returns every owner_id in w's local state, by resource address.
func stateTokens(t *testing.T, w *acctest.WorkDir) map[string]string {
	t.Helper()
	out := map[string]string{}
	for addr, owner := range stateOwners(t, w) {
		if owner != "" {
			out[addr] = owner
		}
	}
	return out
}

// noTokenInRay fails when any of tokens is in the provider's KV or in any
// job record Ray keeps: metadata, entrypoint (the driver's request, decoded)
// or logs.
func noTokenInRay(t *testing.T, when string, tokens map[string]string) {
	t.Helper()
	var places []string
	seen := map[string]string{}
	for key, value := range acctest.ProviderKV(t) {
		seen["KV "+key] = value
	}
	c := acctest.Client(t)
	jobs, err := c.ListJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		raw, _ := json.Marshal(j)
		logs, _ := c.GetJobLogs(context.Background(), j.SubmissionID)
		seen["job "+j.SubmissionID] = string(raw) + "\n" + entrypointRequest(j.Entrypoint) + "\n" + logs
	}
	for place, text := range seen {
		for who, tok := range tokens {
			if strings.Contains(text, tok) {
				places = append(places, place+" holds the token of "+who)
			}
		}
	}
	if len(places) > 0 {
		t.Errorf("%s, Ray holds owner tokens:\n%s", when, strings.Join(places, "\n"))
	}
}

// entrypointRequest decodes the request a driver job's entrypoint carries
// (its last word: zlib-compressed JSON in base85); "" for other jobs.
func entrypointRequest(ep string) string {
	ep = strings.TrimSuffix(strings.TrimSpace(ep), "'")
	raw, err := drivertest.DecodeSpecArg(ep[strings.LastIndex(ep, "'")+1:])
	if err != nil {
		return ""
	}
	return string(raw)
}

// A cluster whose record and reservation an older version wrote with the
// plain token is still its owner's: the owner's next update rewrites both
// with the digest, and its destroy (comparing the stored token as its
// digest) removes the groups and releases the reservation.
func TestAccOwnerSecret_plainTokenRecordStillOwned(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("plaintok")
	removeGroupsAtCleanup(t, name)
	owner := acctest.NewWorkDir(t, plainCluster(name).String())
	t.Cleanup(func() { _, _ = owner.Run("destroy", "-auto-approve") })
	owner.MustRun("apply", "-auto-approve")
	tok := stateOwner(t, owner)
	recordKey, resvKey := record.RecordKey(clusterspec.DefaultNamespace, name), record.ReservationKey(clusterspec.DefaultNamespace, name)
	owners := func() map[string]string {
		kv, out := acctest.ProviderKV(t), map[string]string{}
		for _, key := range []string{recordKey, resvKey} {
			var v struct {
				Owner string `json:"owner"`
			}
			if kv[key] != "" {
				if err := json.Unmarshal([]byte(kv[key]), &v); err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				out[key] = v.Owner
			}
		}
		return out
	}
	asOlderVersions := func() { // the plain token, as before digests
		kv := acctest.ProviderKV(t)
		for _, key := range []string{recordKey, resvKey} {
			var v map[string]any
			if err := json.Unmarshal([]byte(kv[key]), &v); err != nil || v["owner"] != record.OwnerDigest(tok) {
				t.Fatalf("%s: %v (%v)", key, kv[key], err)
			}
			v["owner"] = tok
			acctest.WriteKV(t, key, v)
		}
	}
	asOlderVersions()

	c := plainCluster(name)
	c.ReadyTimeout = "7m"
	owner.SetConfig(c.String())
	out := strings.Join(strings.Fields(owner.MustRun("apply", "-auto-approve")), " ")
	if strings.Contains(out, "another Terraform state") || !strings.Contains(out, "0 added, 1 changed, 0 destroyed") {
		t.Errorf("the owner's update of its plain-token cluster:\n%s", out)
	}
	if got := owners(); got[recordKey] != record.OwnerDigest(tok) || got[resvKey] != record.OwnerDigest(tok) {
		t.Errorf("after the update, Ray's owners are %v, want the digest %s", got, record.OwnerDigest(tok))
	}
	noTokenInRay(t, "after the update", map[string]string{"the owner": tok})

	asOlderVersions()
	owner.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
		t.Error(err)
	}
	if got := owners(); len(got) != 0 {
		t.Errorf("the destroy left %v", got)
	}
	var tomb record.Tombstone
	if err := json.Unmarshal([]byte(acctest.ProviderKV(t)[record.TombstoneKey(clusterspec.DefaultNamespace, name)]), &tomb); err != nil ||
		tomb.DeletedBy != record.OwnerDigest(tok) || tomb.RecordOwner != record.OwnerDigest(tok) {
		t.Errorf("the tombstone: %+v, %v", tomb, err)
	}
}
