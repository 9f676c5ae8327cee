package resources

import (
	"context"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// liveGroupCache holds the one placement-group list that every
// ray_virtual_cluster Read, import and plan check of this provider process
// shares, so refreshing N clusters costs one HTTP call instead of N.
//
// Why this cannot hide drift: each Terraform or OpenTofu CLI run (plan,
// apply, refresh, import) starts its own provider process and configures a
// new ProviderData, so the list is first fetched after that run began and is
// never carried into another run. Within a run only the provider's own
// writes change the groups it manages, and every driver job drops the list
// (invalidate), so the next reader lists again.
type liveGroupCache struct {
	mu   sync.Mutex
	call *liveGroupCall // nil: nothing listed since the last invalidate
}

// liveGroupCall is one list request; concurrent readers wait for the same one.
type liveGroupCall struct {
	done   chan struct{}
	groups []rayclient.PlacementGroup
	err    error
}

// get returns the shared list, listing once if needed. Callers must not
// modify the returned slice. A failed list is not kept: the next caller
// tries again.
func (c *liveGroupCache) get(ctx context.Context, client *rayclient.Client) ([]rayclient.PlacementGroup, error) {
	c.mu.Lock()
	call := c.call
	if call == nil {
		call = &liveGroupCall{done: make(chan struct{})}
		c.call = call
		c.mu.Unlock()
		call.groups, call.err = vcluster.ListLiveGroups(ctx, client)
		close(call.done)
		if call.err != nil {
			c.mu.Lock()
			if c.call == call {
				c.call = nil
			}
			c.mu.Unlock()
		}
		return call.groups, call.err
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.groups, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// invalidate drops the list after a write. Readers already waiting on a list
// in flight still get it (it was requested before the write ended); later
// readers list again.
func (c *liveGroupCache) invalidate() {
	c.mu.Lock()
	c.call = nil
	c.mu.Unlock()
}

// LiveGroups is the placement-group list shared by this provider process
// (see liveGroupCache): one HTTP call per plan or refresh, however many
// clusters the state holds.
func (d *ProviderData) LiveGroups(ctx context.Context) ([]rayclient.PlacementGroup, error) {
	return d.liveGroups.get(ctx, d.Client)
}

// InvalidateLiveGroups must follow every write of placement groups (create,
// update, delete, import: any driver job) so that later reads see it.
func (d *ProviderData) InvalidateLiveGroups() { d.liveGroups.invalidate() }
