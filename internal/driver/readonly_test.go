package driver

import (
	"context"
	"errors"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// A plan or refresh that would submit a write fails before anything
// reaches Ray: the job API is never called.
func TestReadOnlyRefusesWrites(t *testing.T) {
	spec := clusterspectest.ValidSpec()
	ctx := ReadOnly(context.Background(), "plan")
	api := &refusingAPI{t: t}
	b := NewBatcher(api, "python3", RunOptions{})
	for _, action := range []string{contract.ActionCreate, contract.ActionDelete} {
		if _, err := b.Run(ctx, contract.RequestFor(spec, action), nil); !errors.Is(err, ErrWriteInReadOnly) {
			t.Errorf("batcher ran a %s during a plan: %v", action, err)
		}
		if _, err := Run(ctx, api, "python3", contract.RequestFor(spec, action), RunOptions{}); !errors.Is(err, ErrWriteInReadOnly) {
			t.Errorf("Run ran a %s during a plan: %v", action, err)
		}
	}
	if err := RecordTransfer(ctx, api, Transfer{Namespace: spec.Namespace, Name: spec.Name, From: "a", To: "b"}); !errors.Is(err, ErrWriteInReadOnly) {
		t.Errorf("an ownership note was written during a plan: %v", err)
	}
	if err := DeleteTransfer(ctx, api, spec.Namespace, spec.Name); !errors.Is(err, ErrWriteInReadOnly) {
		t.Errorf("an ownership note was removed during a plan: %v", err)
	}
	if err := checkReadOnly(ctx, contract.ReadRequest(spec.Namespace, spec.Name)); err != nil {
		t.Errorf("a read was refused during a plan: %v", err)
	}
	if err := checkReadOnly(context.Background(), contract.RequestFor(spec, contract.ActionCreate)); err != nil {
		t.Errorf("a create was refused outside a read-only command: %v", err)
	}
}

// refusingAPI fails the test on any call: nothing may reach Ray.
type refusingAPI struct {
	JobAPI
	t *testing.T
}
