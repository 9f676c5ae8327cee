package driver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// A record this process could not finish deleting is handed off with the
// dashboard's address and credentials; the hand-off process deletes it
// once settled and again after Ray writes it back.
func TestHandOffDeletesUnfinishedRecords(t *testing.T) {
	var mu sync.Mutex
	deletes := map[string]int{}
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/jobs/"), "/")
		mu.Lock()
		defer mu.Unlock()
		auth = r.Header.Get("Authorization")
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			job := map[string]any{"submission_id": id, "status": "SUCCEEDED", "type": "SUBMISSION"}
			if strings.HasPrefix(id, transferPrefix) { // a live note, as a later import leaves it
				job["metadata"] = map[string]string{metaTransferTo: "new-owner"}
			}
			_ = json.NewEncoder(w).Encode(job)
		case http.MethodDelete:
			deletes[id]++
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]bool{"deleted": true})
		}
	}))
	defer srv.Close()
	client, err := rayclient.New(rayclient.Config{Address: srv.URL, Token: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { untrackRecord("raytf_delete_b_2"); untrackRecord(transferPrefix + "x_1") })
	finished := trackRecord(client, "raytf_create_a_1")
	trackRecord(client, "raytf_delete_b_2")
	trackRecord(client, transferPrefix+"x_1")
	finished()
	pending := pendingHandOffs()
	if len(pending) != 1 || len(pending[0].IDs) != 2 || pending[0].IDs[0] != "raytf_delete_b_2" || pending[0].Token != "secret-token" {
		t.Fatalf("pending hand-offs: %+v", pending)
	}
	handOffTiming = RunTiming{RecordSettle: time.Millisecond, WriteBackCheck: time.Millisecond, TerminalWait: time.Second}
	defer func() { handOffTiming = DefaultRunTiming() }()
	payload, _ := json.Marshal(pending[0])
	if err := FinishHandedOff(bytes.NewReader(payload)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if deletes["raytf_delete_b_2"] != 2 || deletes["raytf_create_a_1"] != 0 || deletes[transferPrefix+"x_1"] != 0 {
		t.Errorf("deletes: %v, want the unfinished record deleted twice (settled, then after a write-back) and the live note kept", deletes)
	}
	if auth != "Bearer secret-token" {
		t.Errorf("the hand-off did not use the provider's credentials: %q", auth)
	}
}
