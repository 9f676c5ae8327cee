package session

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// DefaultPlanTimeout is the provider's plan_timeout when unset.
const DefaultPlanTimeout = 30 * time.Second

// Well-known Ray ports that are not the dashboard's, for the hints of an
// address that does not answer.
const (
	gcsPort       = "6379"
	rayClientPort = "10001"
	dashboardPort = "8265"
)

// planReads remembers, for one provider process, the first plan-time read
// Ray did not answer.
type planReads struct {
	mu         sync.Mutex
	unanswered *NoAnswerError
}

// PlanReadContext bounds one plan-time read (a plan check, a refresh, a
// data source read) by plan_timeout. Once a read went unanswered, the
// contexts it hands out are already done: the other reads of this process
// fail at once with the same error instead of waiting again.
func (d *Session) PlanReadContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d.planTimeout())
	d.planReads.mu.Lock()
	failed := d.planReads.unanswered != nil
	d.planReads.mu.Unlock()
	if failed {
		cancel()
	}
	return ctx, cancel
}

func (d *Session) planTimeout() time.Duration {
	if d.PlanTimeout <= 0 {
		return DefaultPlanTimeout
	}
	return d.PlanTimeout
}

// Unanswered turns the error of a read bounded by PlanReadContext into the
// plan's failure when Ray did not answer in time (nil otherwise: a refused
// connection or an HTTP error is the caller's to report). After the first
// such failure every read of the process reports it.
func (d *Session) Unanswered(err error) *NoAnswerError {
	d.planReads.mu.Lock()
	defer d.planReads.mu.Unlock()
	if d.planReads.unanswered != nil {
		return d.planReads.unanswered
	}
	if err == nil || !rayclient.IsNoAnswer(err) {
		return nil
	}
	connect, request := d.Client.Timeouts()
	d.planReads.unanswered = &NoAnswerError{address: d.Client.Address(), limit: d.planTimeout(), connect: connect,
		request: request, err: err}
	return d.planReads.unanswered
}

// NoAnswerError is a plan-time read Ray did not answer within plan_timeout.
type NoAnswerError struct {
	address          string
	limit            time.Duration
	connect, request time.Duration
	err              error
}

func (e *NoAnswerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Nothing answered at %s within plan_timeout (%s), so the plan cannot be checked against Ray.\n\n", e.address, e.limit)
	fmt.Fprintf(&b, "Tried: %v\n(each HTTP attempt: connect_timeout %s, request_timeout %s)\n\n", e.err, e.connect, e.request)
	b.WriteString("The provider's address must be the Ray dashboard's HTTP address, e.g. http://<head node>:" + dashboardPort + ":\n")
	port := ""
	if u, err := url.Parse(e.address); err == nil {
		port = u.Port()
	}
	hints := []string{
		"port " + gcsPort + " is Ray's GCS port (the address `ray start` prints for workers), which does not speak HTTP; " +
			"the dashboard listens on " + dashboardPort + " unless `ray start --head --dashboard-port` says otherwise",
		"a `ray://host:" + rayClientPort + "` address is a Ray Client address, not the dashboard's",
		"a proxy, port-forward or load balancer that accepts connections but has nothing behind it looks the same",
	}
	if port == rayClientPort {
		hints[0], hints[1] = hints[1], hints[0]
	}
	for _, h := range hints {
		b.WriteString("  - " + h + "\n")
	}
	b.WriteString("\nIf the dashboard is only slow to answer (a very large cluster), raise the provider's plan_timeout.")
	return b.String()
}
