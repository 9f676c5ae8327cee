package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// Guarantee: requests that arrive together share one Ray job; a request
// that cannot be placed fails alone and leaves nothing, the others' groups
// are created, and no job record is left. A stop during a batch undoes
// every unfinished request. (That a finished request is answered before
// the batch ends is TestBatcherAnswersFinishedRequestBeforeTheBatchEnds.)
func TestAccBatcherOneJobPerWave(t *testing.T) {
	e := newAccEnv(t)
	api := &hookAPI{JobAPI: e.client}
	b := NewBatcher(api, e.python, RunOptions{PollInterval: 100 * time.Millisecond, BackgroundCleanup: true})
	specs := []contract.Request{e.cpuSpec("a", 60), e.cpuSpec("b", 60), e.neverFits(8), e.cpuSpec("c", 60)}
	runs := runConcurrently(context.Background(), b, specs, nil)
	results, errs := runs.results, runs.errs
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
	}
	if !contract.IsKind(errs[2], contract.KindTimeout, contract.KindInfeasible) {
		t.Errorf("infeasible request: %+v %v", results[2], errs[2])
	}
	live := e.livePGs(t)
	if len(live) != 3 || live[e.prefix+"lost"].Name != "" {
		t.Errorf("live groups: %v, want a, b and c only", mapKeys(live))
	}

	// Deletes of the three, together: one job again.
	api = &hookAPI{JobAPI: e.client}
	b = NewBatcher(api, e.python, RunOptions{PollInterval: 100 * time.Millisecond})
	var dels []contract.Request
	for _, name := range []string{"a", "b", "c"} {
		dels = append(dels, e.spec(contract.ActionDelete, contract.RequestGroup{Name: name}))
	}
	runs = runConcurrently(context.Background(), b, dels, nil)
	for i, res := range runs.results {
		if runs.errs[i] != nil || len(res.Removed) != 1 {
			t.Errorf("delete %s: %+v %v", dels[i].Groups[0].Name, res, runs.errs[i])
		}
	}
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
	time.AfterFunc(6*time.Second, cancel)
	stopped := runConcurrently(ctx, b, []contract.Request{e.neverFits(60), e.cpuSpec("d", 60)}, nil).errs
	if stopped[0] == nil {
		t.Error("the cancelled infeasible request reported success")
	}
	if live := e.livePGs(t); len(live) > 1 || (len(live) == 1 && live[e.prefix+"d"].Name == "") {
		t.Errorf("after the stop: %v (only the finished d may stay)", mapKeys(live))
	}
}
