package session

import (
	"context"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
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
