package session

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// singleTransferReads is how many clusters of one provider process read
// their ownership note with a GET of its own before the rest share one
// list of Ray's jobs. A GET is small and answers 404 for nearly every
// cluster; the list is one request for any number of clusters, but grows
// with every job Ray keeps, so a plan of one or two clusters skips it.
const singleTransferReads = 2

// transferReads shares the reading of ownership notes among the clusters
// this provider process plans.
type transferReads struct {
	mu    sync.Mutex
	asked int
	list  *transferList // nil until a cluster past singleTransferReads asks
}

// transferList is the one list of notes, read by the first cluster that
// needs it while the others wait.
type transferList struct {
	done  chan struct{}
	notes driver.Transfers
	err   error
}

// ReadTransfer returns the ownership note of the cluster name in namespace,
// nil when there is none.
func (d *Session) ReadTransfer(ctx context.Context, namespace, name string) (*driver.Transfer, error) {
	r := &d.transfers
	r.mu.Lock()
	r.asked++
	if r.asked <= singleTransferReads {
		r.mu.Unlock()
		return driver.ReadTransfer(ctx, d.Client, namespace, name)
	}
	l, first := r.list, r.list == nil
	if first {
		l = &transferList{done: make(chan struct{})}
		r.list = l
	}
	r.mu.Unlock()
	if first {
		l.notes, l.err = driver.ReadTransfers(ctx, d.Client)
		if l.err != nil { // the clusters waiting share this failure; later ones try again
			r.mu.Lock()
			r.list = nil
			r.mu.Unlock()
		}
		close(l.done)
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if l.err != nil {
		return nil, l.err
	}
	return l.notes.Of(namespace, name), nil
}

// TransferWarning warns the state owning cluster name in namespace with
// token owner when another state has imported it since: its destroy only
// forgets the cluster. The note is absent for nearly every cluster
// (ReadTransfer shares one read among many); a failed read warns nothing.
func (d *Session) TransferWarning(ctx context.Context, namespace, name, owner string) []clusterspec.Issue {
	if owner == "" {
		return nil
	}
	rctx, cancel := d.PlanReadContext(ctx)
	defer cancel()
	t, err := d.ReadTransfer(rctx, namespace, name)
	if err != nil {
		tflog.Debug(ctx, "cannot read the cluster's ownership note", map[string]any{"error": err.Error()})
		return nil
	}
	if t == nil || !t.TakenFrom(owner) {
		return nil
	}
	when := ""
	if !t.At.IsZero() {
		when = " at " + t.At.UTC().Format(time.RFC3339)
	}
	return []clusterspec.Issue{{Warning: true, Summary: "Virtual cluster imported by another state",
		Detail: fmt.Sprintf("Another Terraform state (owner %s…) imported %q in namespace %s%s and owns it now. Only that state may change "+
			"or destroy the cluster: this state's destroy only forgets it, and its placement groups stay. Remove it from this "+
			"configuration (a `removed` block with `destroy = false`, or `terraform state rm`), or, if this state should own "+
			"it, `terraform import` it back and `terraform apply` (the apply takes ownership; destroy it after to remove it).",
			record.OwnerPrefix(t.To), t.Name, t.Namespace, when)}}
}
