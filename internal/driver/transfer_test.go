package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

func TestTransferIDKeepsClustersApart(t *testing.T) {
	a, b := TransferID("ns", "vc"), TransferID("other", "vc")
	if a == b || a != TransferID("ns", "vc") {
		t.Fatalf("ids: %q %q", a, b)
	}
	long := TransferID("ns", strings.Repeat("x/", 80))
	if len(long) > 100 || strings.ContainsAny(long, "/ ") {
		t.Errorf("id %q is not a short, safe submission id", long)
	}
}

// A note is written, read back by the same cluster only, replaced by the
// next transfer, skipped by the cleanup of old driver records and deleted.
func TestTransferNoteRoundTrip(t *testing.T) {
	ctx := context.Background()
	api := newFake(nil)
	if got, err := ReadTransfer(ctx, api, "ns", "vc"); got != nil || err != nil {
		t.Fatalf("no note yet: %v, %v", got, err)
	}
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	if err := RecordTransfer(ctx, api, Transfer{Namespace: "ns", Name: "vc", From: "a", To: "b", At: at}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTransfer(ctx, api, "ns", "vc")
	if err != nil || got == nil || got.From != record.OwnerDigest("a") || got.To != record.OwnerDigest("b") || !got.At.Equal(at) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if other, err := ReadTransfer(ctx, api, "ns2", "vc"); other != nil || err != nil {
		t.Errorf("another namespace's cluster read the note: %+v, %v", other, err)
	}
	api.behavior = func(j *fakeJob) { // the note's job ends once stopped, as in Ray
		if j.stopped {
			j.details.Status = rayclient.JobStatusStopped
		}
	}
	if err := RecordTransfer(ctx, api, Transfer{Namespace: "ns", Name: "vc", From: "b", To: "c", At: at}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadTransfer(ctx, api, "ns", "vc"); got == nil || got.From != record.OwnerDigest("b") || got.To != record.OwnerDigest("c") {
		t.Fatalf("the second transfer did not replace the note: %+v", got)
	}
	j := api.jobs[TransferID("ns", "vc")].details
	j.EndTime = time.Now().Add(-time.Hour).UnixMilli()
	if !isNote(&j) {
		t.Error("the note is not told apart from driver records, whose cleanup would delete it")
	}
	if err := DeleteTransfer(ctx, api, "ns", "vc"); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadTransfer(ctx, api, "ns", "vc"); got != nil || err != nil {
		t.Errorf("note left after delete: %+v, %v", got, err)
	}
}

// One list of Ray's jobs finds the same notes as a GET per cluster, and
// only the cluster's own.
func TestReadTransfersFromOneList(t *testing.T) {
	ctx := context.Background()
	api := newFake(nil)
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tr := range []Transfer{{Namespace: "ns", Name: "vc", From: "a", To: "b", At: at}, {Namespace: "ns", Name: "w", From: "c", To: "d"}} {
		if err := RecordTransfer(ctx, api, tr); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := ReadTransfers(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"ns", "vc"}, {"ns", "w"}, {"ns2", "vc"}, {"ns", "none"}} {
		one, _ := ReadTransfer(ctx, api, c[0], c[1])
		listed := notes.Of(c[0], c[1])
		if (one == nil) != (listed == nil) || (one != nil && (one.From != listed.From || one.To != listed.To || !one.At.Equal(listed.At))) {
			t.Errorf("%s/%s: list %+v, GET %+v", c[0], c[1], listed, one)
		}
	}
	if notes.Of("ns", "vc") == nil || notes.Of("ns2", "vc") != nil {
		t.Errorf("notes %+v", notes)
	}
}

// A chain of imports (A to B, B to C) and a re-import by the same state keep
// warning every former owner, and never the owner of now.
func TestTransferWarnsEveryFormerOwner(t *testing.T) {
	ctx := context.Background()
	api := newFake(func(j *fakeJob) { // each note's job ends once stopped, as in Ray
		if j.stopped {
			j.details.Status = rayclient.JobStatusStopped
		}
	})
	for _, step := range [][2]string{{"a", "b"}, {"b", "c"}, {"c", "c2"}} {
		if err := RecordTransfer(ctx, api, Transfer{Namespace: "ns", Name: "vc", From: step[0], To: step[1]}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadTransfer(ctx, api, "ns", "vc")
	if err != nil || got == nil {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for owner, want := range map[string]bool{"a": true, "b": true, "c": true, "c2": false, "": false, "z": false} {
		if got.TakenFrom(owner) != want {
			t.Errorf("TakenFrom(%q) = %v, want %v (note %+v)", owner, !want, want, got)
		}
	}
	// Imported back by a: a owns it again and is not warned; the others are.
	if err := RecordTransfer(ctx, api, Transfer{Namespace: "ns", Name: "vc", From: "c2", To: "a"}); err != nil {
		t.Fatal(err)
	}
	got, _ = ReadTransfer(ctx, api, "ns", "vc")
	if got.TakenFrom("a") || !got.TakenFrom("b") || !got.TakenFrom("c2") {
		t.Errorf("after the import back: %+v", got)
	}
}

func TestTransferEarlierOwnersAreBounded(t *testing.T) {
	tr := Transfer{From: "x", To: "y"}
	old := &Transfer{From: "o0"}
	for i := 1; i < 20; i++ {
		old.Earlier = append(old.Earlier, "o"+strings.Repeat("i", i))
	}
	tr.carryEarlier(old)
	if len(tr.Earlier) != maxEarlierOwners || tr.Earlier[0] != "o0" {
		t.Errorf("earlier owners %v", tr.Earlier)
	}
}

// Ownership and quota notes are job records anyone can read: they keep only
// digests of the owners' tokens, and a note of an older version, which holds
// the tokens, still warns its former owner and is carried on as digests.
func TestNotesKeepOnlyDigests(t *testing.T) {
	ctx := context.Background()
	api := newFake(func(j *fakeJob) {
		if j.stopped {
			j.details.Status = rayclient.JobStatusStopped
		}
	})
	const tokA, tokB, tokC = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210", "00112233445566778899aabbccddeeff"
	if err := leaveNote(ctx, api, TransferID("ns", "vc"), map[string]string{metaCreatedBy: createdBy,
		metaTransferCluster: "ns/vc", metaTransferFrom: tokA, metaTransferTo: tokB}); err != nil { // an older version's note
		t.Fatal(err)
	}
	old, err := ReadTransfer(ctx, api, "ns", "vc")
	if err != nil || old == nil || !old.TakenFrom(tokA) || old.TakenFrom(tokB) {
		t.Fatalf("an older note: %+v, %v", old, err)
	}
	if err := RecordTransfer(ctx, api, Transfer{Namespace: "ns", Name: "vc", From: tokB, To: tokC}); err != nil {
		t.Fatal(err)
	}
	if err := RecordQuotaNote(ctx, api, QuotaNote{Namespace: "team", Owner: tokC, QuotaCaps: contract.QuotaCaps{Limits: map[string]float64{"GPU": 1}}}); err != nil {
		t.Fatal(err)
	}
	for id, j := range api.jobs {
		for k, v := range j.details.Metadata {
			for _, tok := range []string{tokA, tokB, tokC} {
				if strings.Contains(v, tok) {
					t.Errorf("job %s: metadata %s holds a token: %q", id, k, v)
				}
			}
		}
	}
	got, _ := ReadTransfer(ctx, api, "ns", "vc")
	if got == nil || !got.TakenFrom(tokA) || !got.TakenFrom(tokB) || got.TakenFrom(tokC) || got.TakenFrom(record.OwnerDigest(tokA)) {
		t.Errorf("the note after a second import: %+v", got)
	}
	if q, _ := ReadQuotaNote(ctx, api, "team"); q == nil || !record.OwnedBy(q.Owner, tokC) || q.Owner != record.OwnerDigest(tokC) {
		t.Errorf("the quota note: %+v", q)
	}
}
