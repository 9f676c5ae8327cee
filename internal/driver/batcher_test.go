package driver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
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
	// Its submission, not the whole run: the fake job's polls are slow on a loaded machine.
	f.mu.Lock()
	defer f.mu.Unlock()
	if waited := f.firstSubmit.Sub(start); waited >= BatchQuiet {
		t.Errorf("a lone request was submitted after %v: it waited for the batching window", waited)
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
