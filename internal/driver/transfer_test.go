package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
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
	if err != nil || got == nil || got.From != "a" || got.To != "b" || !got.At.Equal(at) {
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
	if got, _ := ReadTransfer(ctx, api, "ns", "vc"); got == nil || got.From != "b" || got.To != "c" {
		t.Fatalf("the second transfer did not replace the note: %+v", got)
	}
	j := api.jobs[TransferID("ns", "vc")].details
	j.EndTime = time.Now().Add(-time.Hour).UnixMilli()
	if !isTransferNote(&j) {
		t.Error("the note is not told apart from driver records, whose cleanup would delete it")
	}
	DeleteTransfer(ctx, api, "ns", "vc")
	if got, err := ReadTransfer(ctx, api, "ns", "vc"); got != nil || err != nil {
		t.Errorf("note left after delete: %+v, %v", got, err)
	}
}
