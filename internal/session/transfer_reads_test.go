package session

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Twelve clusters planned at once read their ownership notes with at most
// singleTransferReads GETs and one list of Ray's jobs, and each finds its
// own note there.
func TestTransferReadsShareOneList(t *testing.T) {
	taken := driver.TransferID("ns", "vc-7")
	note := rayclient.JobDetails{SubmissionID: taken, Status: rayclient.JobStatusSucceeded, Metadata: map[string]string{
		"raytf_transfer_cluster": "ns/vc-7", "raytf_transfer_from": "old", "raytf_transfer_to": "new"}}
	var mu sync.Mutex
	gets, lists := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/api/jobs/":
			lists++
			_ = json.NewEncoder(w).Encode([]rayclient.JobDetails{{SubmissionID: "raytf_other", Status: rayclient.JobStatusSucceeded}, note})
		case strings.HasPrefix(r.URL.Path, "/api/jobs/"):
			gets++
			if strings.TrimPrefix(r.URL.Path, "/api/jobs/") == taken {
				_ = json.NewEncoder(w).Encode(note)
				return
			}
			http.Error(w, "Job "+r.URL.Path+" does not exist", http.StatusNotFound) // as Ray answers
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	d := planReadsData(t, srv.URL)
	found := make([]*driver.Transfer, 12)
	var wg sync.WaitGroup
	for i := range found {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := d.ReadTransfer(context.Background(), "ns", fmt.Sprintf("vc-%d", i))
			if err != nil {
				t.Errorf("cluster %d: %v", i, err)
			}
			found[i] = tr
		}()
	}
	wg.Wait()
	if gets > singleTransferReads || lists != 1 {
		t.Errorf("%d GETs and %d lists, want at most %d GETs and one list", gets, lists, singleTransferReads)
	}
	for i, tr := range found {
		if want := i == 7; (tr != nil) != want || (want && !tr.TakenFrom("old")) {
			t.Errorf("cluster %d: note %+v", i, tr)
		}
	}
}
