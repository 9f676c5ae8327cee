package driver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// Batching bounds. Terraform starts the operations of independent
// resources together (-parallelism, default 10), so they reach the
// provider within milliseconds of each other; a Ray job costs a supervisor
// actor, a driver process and Ray's import (1.3-1.6 s on an idle head), so
// a wave of operations shares one job.
const (
	// BatchQuiet closes a wave when no request joined it for this long.
	BatchQuiet = 200 * time.Millisecond
	// BatchBound closes a wave at the latest this long after its first request.
	BatchBound = 2 * time.Second
	// batchTrickle replaces BatchQuiet while another wave runs: the writes
	// Terraform starts as earlier ones finish (-parallelism) arrive a few
	// hundred ms apart, and a job costs more than gathering them.
	batchTrickle = 600 * time.Millisecond
	// BatchMax closes a wave at once when it holds this many requests.
	BatchMax = 64
	// batchSettle is how long a wave lingers once every operation in
	// progress has a request in it, for operations about to start.
	batchSettle = 20 * time.Millisecond
)

// Batcher runs driver requests that arrive close together in one Ray job
// (contract.BatchRequest): requests of one namespace share a wave, which
// launches as soon as every operation in progress (Hold) has its request
// in a wave, or when no request joined for BatchQuiet, at most BatchBound
// after the first. So a lone apply waits for nothing. Each request still
// gets its own result and error, and a failing one is undone alone by the
// driver. A wave of one runs as a plain Run.
//
// A request whose context ends waits for its wave: the driver bounds every
// request by its ready timeout, and stopping the job would undo the other
// requests too. The job is stopped when every request's context has ended
// (Terraform's cancel), and each request then gets what the driver kept or
// removed for it.
type Batcher struct {
	api    JobAPI
	python string
	opts   RunOptions

	mu   sync.Mutex
	open map[string]*wave // by namespace
	// active counts operations in progress (Hold), waiting the requests in
	// open waves, running those in launched waves not yet answered.
	active, waiting, running int
}

// Hold marks one resource operation in progress until release is called:
// a wave does not wait for more requests once every operation in progress
// has one in a wave.
func (b *Batcher) Hold() (release func()) {
	b.mu.Lock()
	b.active++
	b.scheduleLocked()
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.active--
			b.scheduleLocked()
		})
	}
}

// NewBatcher returns a Batcher that submits to api with python and opts
// (OnProgress is per request, see Run).
func NewBatcher(api JobAPI, python string, opts RunOptions) *Batcher {
	return &Batcher{api: api, python: python, opts: opts, open: map[string]*wave{}}
}

// Reconfigure makes b submit to api with python and opts from now on (the
// provider's Configure, once the client is known).
func (b *Batcher) Reconfigure(api JobAPI, python string, opts RunOptions) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.api, b.python, b.opts = api, python, opts
}

type member struct {
	ctx        context.Context
	req        contract.Request
	onProgress func(Progress)
	done       chan outcome
}

type outcome struct {
	res *contract.Result
	err error
}

type wave struct {
	members []*member
	first   time.Time
	timer   *time.Timer
}

// Run runs req, batched with the requests that arrive with it, and
// returns its own result as driver.Run does. onProgress (may be nil)
// receives req's progress lines.
func (b *Batcher) Run(ctx context.Context, req contract.Request, onProgress func(Progress)) (*contract.Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := checkReadOnly(ctx, req); err != nil {
		return nil, err
	}
	m := &member{ctx: ctx, req: req, onProgress: onProgress, done: make(chan outcome, 1)}
	b.join(m)
	o := <-m.done
	return o.res, o.err
}

func (b *Batcher) join(m *member) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ns := m.req.Namespace
	w := b.open[ns]
	if w == nil {
		w = &wave{first: time.Now()}
		b.open[ns] = w
		w.timer = time.AfterFunc(BatchQuiet, func() { b.close(ns, w) })
	}
	w.members = append(w.members, m)
	b.waiting++
	if len(w.members) >= BatchMax {
		b.launchLocked(ns, w)
		return
	}
	b.scheduleLocked()
}

// scheduleLocked sets when the open waves launch: after batchSettle when
// every operation in progress has its request in a wave and no other wave
// is running, else when none joined for the quiet window, within the
// bound. While a wave runs, the operations Terraform starts as earlier ones
// finish arrive one by one (-parallelism): the window gathers them into
// one job instead of one job each.
func (b *Batcher) scheduleLocked() {
	for _, w := range b.open {
		wait := BatchQuiet
		switch {
		case b.running > 0:
			wait = batchTrickle
		case b.waiting >= b.active:
			wait = batchSettle
		}
		w.timer.Reset(max(0, min(wait, BatchBound-time.Since(w.first))))
	}
}

func (b *Batcher) launchLocked(ns string, w *wave) {
	w.timer.Stop()
	delete(b.open, ns)
	b.waiting -= len(w.members)
	b.running += len(w.members)
	go b.launch(w)
}

// close launches w unless it was launched already (a timer reset after it
// fired calls close again).
func (b *Batcher) close(ns string, w *wave) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[ns] == w {
		b.launchLocked(ns, w)
	}
}

// answer hands m its outcome.
func (b *Batcher) answer(m *member, o outcome) {
	b.mu.Lock()
	b.running--
	b.mu.Unlock()
	m.done <- o
}

func (b *Batcher) launch(w *wave) {
	b.mu.Lock()
	api, python, opts := b.api, b.python, b.opts
	b.mu.Unlock()
	if len(w.members) == 1 {
		m := w.members[0]
		opts.OnProgress = m.onProgress
		res, err := Run(m.ctx, api, python, m.req, opts)
		b.answer(m, outcome{res, err})
		return
	}
	reqs := make([]contract.Request, len(w.members))
	for i, m := range w.members {
		reqs[i] = m.req
	}
	ctx, cancel := allDone(w.members)
	defer cancel()
	answered := make([]bool, len(w.members))
	// Progress reaches Run's caller on its goroutine, one line at a time.
	opts.OnProgress = func(p Progress) {
		i, ok := batchIndex(p.RunID)
		if !ok || i >= len(w.members) || answered[i] {
			return
		}
		m := w.members[i]
		if p.Phase == PhaseResult && p.Result != nil {
			// A request that finished does not wait for the rest of its wave.
			p.Result.WordError()
			answered[i] = true
			b.answer(m, outcome{p.Result, p.Result.Err()})
			return
		}
		if m.onProgress != nil {
			m.onProgress(p)
		}
	}
	res, err := Run(ctx, api, python, contract.BatchRequest(reqs), opts)
	for i, m := range w.members {
		if !answered[i] {
			b.answer(m, batchOutcome(res, err, i, len(w.members)))
		}
	}
}

// allDone is a context that ends when every member's context has ended;
// it keeps the first member's values (for logging).
func allDone(members []*member) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(members[0].ctx))
	go func() {
		for _, m := range members {
			select {
			case <-m.ctx.Done():
			case <-ctx.Done():
				return
			}
		}
		cancel()
	}()
	return ctx, cancel
}

// batchIndex is the request index of a batch run id "<run id>.<index>".
func batchIndex(runID string) (int, bool) {
	dot := strings.LastIndexByte(runID, '.')
	if dot < 0 {
		return 0, false
	}
	i, err := strconv.Atoi(runID[dot+1:])
	return i, err == nil && i >= 0
}

// batchOutcome is request i's share of a batch's result: its own result
// and error, plus the batch's error when the job was interrupted (as Run
// returns a result together with the cancellation).
func batchOutcome(res *contract.Result, err error, i, n int) outcome {
	if res == nil || len(res.Batch) != n {
		if err == nil {
			err = errors.New("ray placement group driver: the batch's result does not list every request")
		}
		return outcome{nil, err}
	}
	sub := res.Batch[i]
	own := sub.Err()
	var driverErr *contract.DriverError
	if own == nil && err != nil && !errors.As(err, &driverErr) {
		own = err
	}
	return outcome{&sub, own}
}
