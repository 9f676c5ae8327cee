package resources

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// queuePollInterval is how long a cluster that queues for nodes
// (capacity_check = "total") waits before it chooses again.
const queuePollInterval = 2 * time.Second

// place chooses the cluster's nodes (select_nodes) and creates its groups.
// The choice becomes final in the driver, which claims every chosen node in
// Ray's KV before it creates a group: a cluster that loses the race for a
// node learns every claim and its holder, chooses again among the other
// nodes and tries again; when none fits, capacity_check = "total" queues
// (chooses again as holders' groups go) until ready_timeout, other modes
// fail at once naming the holders. Errors of choice go to diags; the
// driver's error is returned.
func (r *virtualClusterResource) place(ctx context.Context, m *virtualClusterModel, spec *clusterspec.Spec,
	snap *planning.Snapshot, owner string, diags *diag.Diagnostics) (*contract.Result, error) {
	key := spec.Namespace + "/" + spec.Name
	claimed := map[string]contract.NodeHolder{} // nodes other clusters' claims hold, as the driver reported them
	queueUntil := time.Now().Add(spec.ReadyTimeout)
	var collided time.Time
	for {
		if spec.SelectNodes {
			spec.SelectedNodeIDs, spec.SelectedNodeDomains = nil, nil
			snap.Claims = claimDescriptions(claimed)
			var choice diag.Diagnostics
			if !r.selectNodes(ctx, m, spec, snap, !collided.IsZero(), &choice) {
				if len(claimed) == 0 {
					diags.Append(choice...)
					return nil, nil
				}
				if spec.CapacityMode() == clusterspec.CapacityTotal && time.Now().Add(queuePollInterval).Before(queueUntil) {
					tflog.Info(ctx, "queueing for nodes other clusters hold", map[string]any{"cluster": key, "holders": len(claimed)})
					if snap = r.waitAndSnapshot(ctx, diags); snap == nil {
						return nil, nil
					}
					forgetGone(claimed, snap) // a holder whose groups are gone has left
					continue
				}
				tflog.Info(ctx, "no nodes left after a lost race", map[string]any{"cluster": key,
					"seconds_since_collision": time.Since(collided).Seconds()})
				diags.AddAttributeError(path.Root(clusterspec.AttrSelectNodes), "Other clusters took the nodes",
					lostRaceDetail(*spec, claimed, choice))
				return nil, nil
			}
		}
		if checkLive(*spec, snap, nil, diags); diags.HasError() {
			r.data.ForgetChosen(key)
			return nil, nil
		}
		attempt := *spec
		if !collided.IsZero() { // the queue and the wait share ready_timeout
			attempt.ReadyTimeout = max(time.Until(queueUntil), time.Second)
		}
		template := record.NewManifest(*spec, owner, r.data.Version, record.Placement{})
		res, err := r.runDriver(ctx, contract.RequestFor(attempt, contract.ActionCreate).Owned(attempt, owner, false, &template))
		holders, all := nodesClaimed(res, err)
		if holders == nil {
			return res, err
		}
		r.data.ForgetChosen(key)
		if collided.IsZero() {
			collided = time.Now()
		}
		for _, h := range append(all, holders...) {
			claimed[h.NodeID] = h
		}
		tflog.Info(ctx, "lost the race for nodes: choosing again", map[string]any{"cluster": key, "holders": contract.DescribeHolders(holders)})
		if snap = r.freshSnapshot(ctx, diags); snap == nil {
			return nil, nil
		}
	}
}

// nodesClaimed returns the holders of the nodes it wanted and every claim
// of another cluster when the create failed because other clusters had
// claimed its nodes first; nil holders otherwise.
func nodesClaimed(res *contract.Result, err error) (holders, claimed []contract.NodeHolder) {
	if err == nil || res == nil || res.Error == nil || res.Error.Code != contract.CodeNodesClaimed {
		return nil, nil
	}
	f := res.Error.Facts
	if f.Holders == nil {
		f.Holders = []contract.NodeHolder{}
	}
	return f.Holders, f.Claimed
}

// forgetGone drops the claims whose cluster has no group in snap any more:
// it was destroyed, and its delete released the claim (or the claim is
// stale, which the next claimant takes over).
func forgetGone(claimed map[string]contract.NodeHolder, snap *planning.Snapshot) {
	live := map[string]bool{}
	for _, g := range snap.Groups {
		live[g.Name] = true
	}
	for id, h := range claimed {
		if !slices.ContainsFunc(h.Groups, func(name string) bool { return live[name] }) {
			delete(claimed, id)
		}
	}
}

// claimDescriptions names each claimed node's holder for node choice.
func claimDescriptions(claimed map[string]contract.NodeHolder) map[string]string {
	out := make(map[string]string, len(claimed))
	for id, h := range claimed {
		out[id] = "another cluster"
		if h.Cluster != "" {
			out[id] = fmt.Sprintf("cluster %q", h.Cluster)
		}
	}
	return out
}

// freshSnapshot reads nodes and groups again (other clusters just placed).
func (r *virtualClusterResource) freshSnapshot(ctx context.Context, diags *diag.Diagnostics) *planning.Snapshot {
	r.data.Live.InvalidateGroups()
	snap, err := liveview.FetchSnapshot(ctx, r.data.Client)
	if err != nil {
		addDashboardError(diags, r.data.Client.Address(), err)
		return nil
	}
	return snap
}

// waitAndSnapshot waits queuePollInterval, then reads the cluster again.
func (r *virtualClusterResource) waitAndSnapshot(ctx context.Context, diags *diag.Diagnostics) *planning.Snapshot {
	select {
	case <-ctx.Done():
		diags.AddError("Cannot create the virtual cluster", "Timed out while queueing for nodes: "+ctx.Err().Error()+
			". Other clusters still hold the nodes: wait for them, add nodes, or raise timeouts.create and ready_timeout, then apply again.")
		return nil
	case <-time.After(queuePollInterval):
	}
	return r.freshSnapshot(ctx, diags)
}

// lostRaceDetail explains a cluster that lost the race for its nodes and
// finds no other that fit: who holds them, why nothing else fits, and what
// to do.
func lostRaceDetail(spec clusterspec.Spec, claimed map[string]contract.NodeHolder, choice diag.Diagnostics) string {
	holders := make([]contract.NodeHolder, 0, len(claimed))
	for _, id := range slices.Sorted(maps.Keys(claimed)) {
		if claimed[id].Cluster != "" { // an unreadable claim names no cluster
			holders = append(holders, claimed[id])
		}
	}
	var why []string
	for _, d := range choice.Errors() {
		why = append(why, d.Detail())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "While this apply chose nodes for %q, other clusters applying at the same time claimed them first: %s.",
		spec.Name, contract.DescribeHolders(holders))
	if len(why) > 0 {
		fmt.Fprintf(&b, "\n\nThe nodes left cannot hold it: %s", strings.Join(why, "\n"))
	}
	if spec.CapacityMode() == clusterspec.CapacityTotal {
		fmt.Fprintf(&b, "\n\nIt queued for those nodes until ready_timeout (%s) ran out.", spec.ReadyTimeout)
	}
	fmt.Fprintf(&b, "\n\nNothing of %q was created. %s", spec.Name, planning.ShortageNextStep(spec))
	return b.String()
}
