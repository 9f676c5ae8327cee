package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// finishBatch ends a batch job of n requests: request i fails when
// failing[i], the others succeed; request 1 reports progress first.
func finishBatch(n int, failing map[int]bool) func(j *fakeJob) {
	return func(j *fakeJob) {
		if j.polls < 2 {
			return
		}
		j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"waiting","ready":1,"total":1,"run_id":"%s.1"}`+"\n", j.runID))
		subs := make([]string, n)
		for i := range subs {
			line := strings.TrimSpace(resultLine(fmt.Sprintf("%s.%d", j.runID, i), !failing[i], ""))
			subs[i] = strings.TrimPrefix(line, resultMarker+" ")
		}
		j.log(fmt.Sprintf("\nRAYTF_RESULT {\"ok\": true, \"action\": \"batch\", \"error\": null, \"groups\": [], \"removed\": [], "+
			"\"missing\": [], \"ray_version\": \"2.60.0\", \"run_id\": %q, \"batch\": [%s]}\n", j.runID, strings.Join(subs, ",")))
		j.end(rayclient.JobStatusSucceeded)
	}
}

// concurrentRuns are the outcomes of runConcurrently, by request.
type concurrentRuns struct {
	results []*contract.Result
	errs    []error
	took    []time.Duration // until each request was answered
}

// runConcurrently runs specs as concurrent resource operations do: each
// holds the batcher from before its request until after its answer.
func runConcurrently(ctx context.Context, b *Batcher, specs []contract.Request, onProgress func(int, Progress)) concurrentRuns {
	out := concurrentRuns{make([]*contract.Result, len(specs)), make([]error, len(specs)), make([]time.Duration, len(specs))}
	start := time.Now()
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		release := b.Hold()
		go func() {
			defer wg.Done()
			defer release()
			out.results[i], out.errs[i] = b.Run(ctx, spec, func(p Progress) {
				if onProgress != nil {
					onProgress(i, p)
				}
			})
			out.took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

// Guarantee: requests that arrive together run as one job, each with its
// own result, error and progress.
func TestBatcherRunsConcurrentRequestsInOneJob(t *testing.T) {
	f := newFake(finishBatch(3, map[int]bool{1: true}))
	b := NewBatcher(f, "python", fastOpts)
	var mu sync.Mutex
	progressOf := map[int]int{}
	runs := runConcurrently(context.Background(), b, []contract.Request{createSpec("a"), createSpec("b"), createSpec("c")}, func(i int, p Progress) {
		mu.Lock()
		progressOf[i]++
		mu.Unlock()
	})
	results, errs := runs.results, runs.errs
	ids := f.submitted()
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "raytf_batch_") {
		t.Fatalf("submissions = %v, want one batch job", ids)
	}
	// The members' order in the batch is their arrival order, so find each
	// one's result by its failure.
	failed := 0
	for i := range results {
		if results[i] == nil {
			t.Fatalf("request %d: no result (%v)", i, errs[i])
		}
		if errs[i] != nil {
			failed++
			if !contract.IsKind(errs[i], contract.KindTimeout) || results[i].OK {
				t.Errorf("request %d: %+v %v", i, results[i], errs[i])
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d requests failed, want 1: %v", failed, errs)
	}
	if total := progressOf[0] + progressOf[1] + progressOf[2]; total != 1 {
		t.Errorf("progress lines delivered: %v, want one (to the batch's request 1)", progressOf)
	}
}

// Guarantee: a request whose result the driver reported is answered while
// the rest of its batch still runs.
func TestBatcherAnswersFinishedRequestBeforeTheBatchEnds(t *testing.T) {
	finish := finishBatch(2, nil)
	f := newFake(func(j *fakeJob) {
		if j.polls == 2 {
			line := strings.TrimSpace(resultLine(j.runID+".0", true, ""))
			j.log(fmt.Sprintf(`RAYTF_PROGRESS {"phase":"result","run_id":"%s.0","result":%s}`+"\n", j.runID,
				strings.TrimPrefix(line, resultMarker+" ")))
		}
		if j.polls >= 12 {
			finish(j)
		}
	})
	b := NewBatcher(f, "python", fastOpts)
	runs := runConcurrently(context.Background(), b, []contract.Request{createSpec("a"), createSpec("b")}, nil)
	if runs.errs[0] != nil || runs.errs[1] != nil {
		t.Fatal(runs.errs)
	}
	early, late := runs.took[0], runs.took[1]
	if runs.results[0].RunID != "" && !strings.HasSuffix(runs.results[0].RunID, ".0") {
		early, late = late, early
	}
	// Order, not time: the early answer came before the job's end (poll 12).
	if early >= late {
		t.Errorf("request .0 answered at %v, the rest of the batch at %v", early, late)
	}
}

// Guarantee: a request alone in its wave runs as before, a plain job, and
// waits for no window when no other operation is in progress.
func TestBatcherLoneRequestRunsPlain(t *testing.T) {
	f := newFake(succeedAfter(2))
	b := NewBatcher(f, "python", fastOpts)
	release := b.Hold()
	start := time.Now()
	res, err := b.Run(context.Background(), createSpec("g"), nil)
	release()
	if err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
	if ids := f.submitted(); len(ids) != 1 || !strings.HasPrefix(ids[0], "raytf_create_g_") {
		t.Errorf("submissions = %v", ids)
	}
	if took := time.Since(start); took >= BatchQuiet {
		t.Errorf("a lone request took %v: it waited for the batching window", took)
	}
}

// Guarantee: an operation in progress that never sends a request holds a
// wave back for the quiet window only.
func TestBatcherQuietWindowBoundsTheWait(t *testing.T) {
	f := newFake(succeedAfter(2))
	b := NewBatcher(f, "python", fastOpts)
	idle := b.Hold() // e.g. a refresh that needs no driver job
	defer idle()
	release := b.Hold()
	start := time.Now()
	res, err := b.Run(context.Background(), createSpec("g"), nil)
	release()
	if err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
	if took := time.Since(start); took < BatchQuiet || took > BatchBound+time.Second {
		t.Errorf("took %v, want the quiet window (%v) and not much more", took, BatchQuiet)
	}
}

// Guarantee: an invalid request fails at once and never joins a wave.
func TestBatcherRejectsInvalidRequest(t *testing.T) {
	f := newFake(nil)
	bad := createSpec("g")
	bad.Version = 0
	if _, err := NewBatcher(f, "python", fastOpts).Run(context.Background(), bad, nil); err == nil {
		t.Fatal("invalid request accepted")
	}
	if len(f.submitted()) != 0 {
		t.Error("submitted a job")
	}
}

// Guarantee: driver.py runs a batch's requests each to its own result (the
// stub "ray" of the ownership tests): a non-owner's delete leaves the
// groups alone, the owner's record rewrite succeeds, and a malformed
// request fails alone.
func TestDriverRunsBatchRequestsSeparately(t *testing.T) {
	w := newOwnershipWorld(t)
	w.groups = []string{"vc-node0"}
	w.setRecord("other")
	m := record.NewManifest(w.spec, "other", "test", record.Placement{})
	batch := contract.BatchRequest([]contract.Request{
		contract.RequestFor(w.spec, contract.ActionDelete).Owned(w.spec, "mine", false, nil),
		contract.RequestFor(w.spec, contract.ActionRecord).Owned(w.spec, "other", false, &m),
		contract.RequestFor(w.spec, contract.ActionDelete),
	})
	batch.RunID = "b1"
	if err := batch.Validate(); err != nil {
		t.Fatal(err)
	}
	// Spoil the third request after validation, as a driver of another
	// version would see it.
	var raw map[string]any
	encoded, _ := json.Marshal(batch)
	_ = json.Unmarshal(encoded, &raw)
	raw["batch"].([]any)[2].(map[string]any)["version"] = 99
	encoded, _ = json.Marshal(raw)
	res := w.runRaw(encoded)
	if !res.OK || res.Action != contract.ActionBatch || len(res.Batch) != 3 {
		t.Fatalf("batch result: %+v %+v", res, res.Error)
	}
	for i, sub := range res.Batch {
		if sub.RunID != fmt.Sprintf("b1.%d", i) {
			t.Errorf("request %d reports under run id %q", i, sub.RunID)
		}
	}
	if sub := res.Batch[0]; !sub.OK || sub.OtherOwner == nil || sub.OtherOwner.Owner != "other" || len(sub.Removed) != 0 {
		t.Errorf("non-owner's delete: %+v %+v", sub, sub.Error)
	}
	if sub := res.Batch[1]; !sub.OK || sub.Record == nil || sub.Record.Owner != "other" {
		t.Errorf("owner's record: %+v %+v", sub, sub.Error)
	}
	if sub := res.Batch[2]; sub.OK || sub.Error == nil || sub.Error.Kind != contract.KindInvalid || !strings.Contains(sub.Error.Message, "99") {
		t.Errorf("malformed request: %+v %+v", sub, sub.Error)
	}
}

// Guarantee: when the batch cannot reach Ray (ray.init fails), every
// request reports that failure as its own.
func TestDriverBatchReportsConnectFailureForEachRequest(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	batch := contract.BatchRequest([]contract.Request{createSpec("a"), createSpec("b")})
	batch.RunID = "b2"
	raw, _ := json.Marshal(batch)
	cmd := exec.Command(py, "-c", bootstrapCode(), EncodeSpecArg(raw))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+writeRayStub(t))
	out, _ := cmd.CombinedOutput()
	res, err := ParseResult(string(out), "")
	if err != nil || res.OK || len(res.Batch) != 2 {
		t.Fatalf("%v %+v\n%s", err, res, out)
	}
	for i, sub := range res.Batch {
		if sub.OK || sub.Error == nil || !strings.Contains(sub.Error.Message, "no cluster here") {
			t.Errorf("request %d: %+v %+v", i, sub, sub.Error)
		}
	}
}
