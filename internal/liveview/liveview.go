package liveview

import (
	"context"
	"sync"

	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// LiveView is what one provider process reads of the live cluster: the
// placement-group list that every Read, import and plan check shares, and
// the snapshot (nodes + groups) the plan checks share. Refreshing N clusters
// costs one HTTP call instead of N.
//
// Why this cannot hide drift: each Terraform or OpenTofu CLI run (plan,
// apply, refresh, import) starts its own provider process with a new
// LiveView, so the list is first fetched after that run began and is never
// carried into another run. Within a run only the provider's own writes
// change the groups it manages, and every driver job calls InvalidateGroups,
// so the next reader lists again.
type LiveView struct {
	client *rayclient.Client

	groupsMu sync.Mutex
	groups   *groupListCall // nil: nothing listed since the last invalidate

	snapMu   sync.Mutex
	snapshot *planning.Snapshot
}

// groupListCall is one list request; concurrent readers wait for the same one.
type groupListCall struct {
	done   chan struct{}
	groups []raystate.PlacementGroup
	err    error
}

// NewLiveView starts an empty view of the cluster client talks to.
func NewLiveView(client *rayclient.Client) *LiveView { return &LiveView{client: client} }

// Groups returns the shared list of placement groups that are not removed,
// listing once if needed. Callers must not modify the returned slice. A
// failed list is not kept: the next caller tries again.
func (v *LiveView) Groups(ctx context.Context) ([]raystate.PlacementGroup, error) {
	v.groupsMu.Lock()
	call := v.groups
	if call == nil {
		call = &groupListCall{done: make(chan struct{})}
		v.groups = call
		v.groupsMu.Unlock()
		call.groups, call.err = ListLiveGroups(ctx, v.client)
		close(call.done)
		if call.err != nil {
			v.groupsMu.Lock()
			if v.groups == call {
				v.groups = nil
			}
			v.groupsMu.Unlock()
		}
		return call.groups, call.err
	}
	v.groupsMu.Unlock()
	select {
	case <-call.done:
		return call.groups, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// InvalidateGroups must follow every write of placement groups (create,
// update, delete, import: any driver job). Readers already waiting on a list
// in flight still get it (it was requested before the write ended); later
// readers list again.
func (v *LiveView) InvalidateGroups() {
	v.groupsMu.Lock()
	v.groups = nil
	v.groupsMu.Unlock()
}

// Snapshot returns the nodes and groups, taken once per view so that
// planning many clusters costs two HTTP calls in all (one when a refresh
// already listed the groups). It is not retaken after this process's own
// writes: the plan's capacity claims already count the clusters planned
// before, and a fresher view would count them twice.
func (v *LiveView) Snapshot(ctx context.Context) (*planning.Snapshot, error) {
	v.snapMu.Lock()
	defer v.snapMu.Unlock()
	if v.snapshot != nil {
		return v.snapshot, nil
	}
	nodes, err := ListAliveNodes(ctx, v.client)
	if err != nil {
		return nil, err
	}
	groups, err := v.Groups(ctx)
	if err != nil {
		return nil, err
	}
	v.snapshot = &planning.Snapshot{Nodes: nodes, Groups: groups}
	return v.snapshot, nil
}
