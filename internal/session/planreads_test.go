package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

func planReadsData(t *testing.T, address string) *Session {
	t.Helper()
	client, err := rayclient.New(rayclient.Config{Address: address})
	if err != nil {
		t.Fatal(err)
	}
	d := New(client, "ns", "python", "test", nil)
	d.PlanTimeout = 7 * time.Second
	return d
}

// A refused connection or an HTTP error is not the plan's failure; a read
// that went unanswered is, and every later read of the process reports it
// at once (its context is already done).
func TestUnansweredPlanReads(t *testing.T) {
	d := planReadsData(t, "http://127.0.0.1:6379")
	refused := &rayclient.RequestError{Method: "GET", Path: "/api/version", Err: syscall.ECONNREFUSED}
	if e := d.Unanswered(refused); e != nil {
		t.Fatalf("refused: %v", e)
	}
	ctx, cancel := d.PlanReadContext(context.Background())
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 7*time.Second || ctx.Err() != nil {
		t.Fatalf("plan read context: deadline %v %v, err %v", dl, ok, ctx.Err())
	}
	silent := &rayclient.RequestError{Method: "GET", Path: "/api/v0/nodes", Attempts: 2, Err: context.DeadlineExceeded}
	e := d.Unanswered(silent)
	if e == nil {
		t.Fatal("a deadline was not the plan's failure")
	}
	msg := e.Error()
	for _, want := range []string{"Nothing answered at http://127.0.0.1:6379 within plan_timeout (7s)",
		"Tried: ray: GET /api/v0/nodes: giving up after 2 attempts", "connect_timeout 5s, request_timeout 30s",
		"port 6379 is Ray's GCS port", "listens on 8265", "`ray://host:10001` address is a Ray Client address", "raise the provider's plan_timeout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	later, cancel2 := d.PlanReadContext(context.Background())
	defer cancel2()
	if !errors.Is(later.Err(), context.Canceled) {
		t.Fatalf("a read after the failure got a live context: %v", later.Err())
	}
	if again := d.Unanswered(fmt.Errorf("wrapped: %w", later.Err())); again != e {
		t.Fatalf("a later read reported %v, want the first failure", again)
	}
}

// The Ray Client port comes first among the hints when the address uses it.
func TestUnansweredHintsRayClientPort(t *testing.T) {
	d := planReadsData(t, "http://head:10001")
	msg := d.Unanswered(context.DeadlineExceeded).Error()
	if strings.Index(msg, "Ray Client address") > strings.Index(msg, "GCS port") {
		t.Fatalf("the Ray Client hint is not first:\n%s", msg)
	}
}
