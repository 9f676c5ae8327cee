package driver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// Guarantee: requests that arrive together share one Ray job; a request
// that cannot be placed fails alone and leaves nothing, the others' groups
// are created, a finished request does not wait for the slow one, and no
// job record is left. A stop during a batch undoes every unfinished request.
func TestAccBatcherOneJobPerWave(t *testing.T) {
	e := newAccEnv(t)
	api := &hookAPI{JobAPI: e.client}
	b := NewBatcher(api, e.python, RunOptions{PollInterval: 100 * time.Millisecond, BackgroundCleanup: true})
	specs := []vcluster.Request{e.cpuSpec("a", 60), e.cpuSpec("b", 60), e.neverFits(8), e.cpuSpec("c", 60)}
	results := make([]*vcluster.Result, len(specs))
	errs := make([]error, len(specs))
	took := make([]time.Duration, len(specs))
	start := time.Now()
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		release := b.Hold()
		go func() {
			defer wg.Done()
			defer release()
			results[i], errs[i] = b.Run(context.Background(), spec, nil)
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	if subs := api.submits(); len(subs) != 1 || !strings.HasPrefix(subs[0].SubmissionID, "raytf_batch_") {
		t.Fatalf("submissions: %d, want one batch job", len(subs))
	}
	for i, name := range []string{"a", "b", "", "c"} {
		if name == "" {
			continue
		}
		if errs[i] != nil || !results[i].OK || len(results[i].Groups) != 1 || !results[i].Groups[0].Created {
			t.Errorf("create %s: %+v %v", name, results[i], errs[i])
		}
		if took[i] >= took[2] {
			t.Errorf("create %s answered after %v, not before the infeasible request (%v)", name, took[i], took[2])
		}
	}
	if !vcluster.IsKind(errs[2], vcluster.KindTimeout, vcluster.KindInfeasible) {
		t.Errorf("infeasible request: %+v %v", results[2], errs[2])
	}
	live := e.livePGs(t)
	if len(live) != 3 || live[e.prefix+"lost"].Name != "" {
		t.Errorf("live groups: %v, want a, b and c only", mapKeys(live))
	}

	// Deletes of the three, together: one job again.
	api = &hookAPI{JobAPI: e.client}
	b = NewBatcher(api, e.python, RunOptions{PollInterval: 100 * time.Millisecond})
	wg = sync.WaitGroup{}
	for _, name := range []string{"a", "b", "c"} {
		wg.Add(1)
		release := b.Hold()
		go func() {
			defer wg.Done()
			defer release()
			del := e.spec(vcluster.ActionDelete, vcluster.RequestGroup{Name: name})
			if res, err := b.Run(context.Background(), del, nil); err != nil || len(res.Removed) != 1 {
				t.Errorf("delete %s: %+v %v", name, res, err)
			}
		}()
	}
	wg.Wait()
	if subs := api.submits(); len(subs) != 1 {
		t.Errorf("delete submissions: %d, want one", len(subs))
	}
	if live := e.livePGs(t); len(live) != 0 {
		t.Errorf("groups left: %v", mapKeys(live))
	}
	time.Sleep(8 * time.Second) // as TestAccRunnerLeavesNoJobRecords: write-backs come within ~2 s
	if left := e.jobRecords(t); len(left) != 0 {
		t.Errorf("job records left: %v", left)
	}

	// Cancelling every request of a wave stops its job: the unfinished
	// request's groups are removed, and each caller learns so.
	api = &hookAPI{JobAPI: e.client}
	b = NewBatcher(api, e.python, RunOptions{PollInterval: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	wg = sync.WaitGroup{}
	stopped := make([]error, 2)
	for i, spec := range []vcluster.Request{e.neverFits(60), e.cpuSpec("d", 60)} {
		wg.Add(1)
		release := b.Hold()
		go func() {
			defer wg.Done()
			defer release()
			_, stopped[i] = b.Run(ctx, spec, nil)
		}()
	}
	time.Sleep(6 * time.Second)
	cancel()
	wg.Wait()
	if stopped[0] == nil {
		t.Error("the cancelled infeasible request reported success")
	}
	if live := e.livePGs(t); len(live) > 1 || (len(live) == 1 && live[e.prefix+"d"].Name == "") {
		t.Errorf("after the stop: %v (only the finished d may stay)", mapKeys(live))
	}
}
