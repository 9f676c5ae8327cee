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

	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// queuePollInterval is how long a cluster that queues for nodes
// (capacity_check = "total") waits before it chooses again.
const queuePollInterval = 2 * time.Second

// place chooses the cluster's nodes (select_nodes) and creates its groups.
// The choice becomes final in the driver, which claims every chosen node in
// Ray's KV before it creates a group: a cluster that loses the race for a
// node learns who holds it, chooses again among the other nodes and tries
// again; when none fits, capacity_check = "total" queues (chooses again as
// nodes free) until ready_timeout, other modes fail at once naming the
// holders. A choice the plan fixed is never changed: it fails instead.
// Errors of choice go to diags; the driver's error is returned.
func (r *virtualClusterResource) place(ctx context.Context, m *virtualClusterModel, spec *vcluster.Spec,
	snap *vcluster.Snapshot, owner string, diags *diag.Diagnostics) (*vcluster.Result, error) {
	key := spec.Namespace + "/" + spec.Name
	fixed := len(spec.SelectedNodeIDs) > 0
	claimed := map[string]vcluster.NodeHolder{} // nodes other clusters' claims hold, as the driver reported them
	queueUntil := time.Now().Add(spec.ReadyTimeout)
	var collided time.Time
	for {
		if spec.SelectNodes {
			if !fixed {
				spec.SelectedNodeIDs, spec.SelectedNodeDomains = nil, nil
			}
			snap.Claims = claimDescriptions(claimed)
			var choice diag.Diagnostics
			if !r.selectNodes(ctx, m, spec, snap, !collided.IsZero(), &choice) {
				if len(claimed) == 0 {
					diags.Append(choice...)
					return nil, nil
				}
				if spec.CapacityMode() == vcluster.CapacityTotal && time.Now().Add(queuePollInterval).Before(queueUntil) {
					tflog.Info(ctx, "queueing for nodes other clusters hold", map[string]any{"cluster": key, "holders": len(claimed)})
					if snap = r.waitAndSnapshot(ctx, diags); snap == nil {
						return nil, nil
					}
					clear(claimed) // they may have left: the next claim says
					continue
				}
				tflog.Info(ctx, "no nodes left after a lost race", map[string]any{"cluster": key,
					"seconds_since_collision": time.Since(collided).Seconds()})
				diags.AddAttributeError(path.Root(vcluster.AttrSelectNodes), "Other clusters took the nodes",
					lostRaceDetail(*spec, claimed, choice))
				return nil, nil
			}
		}
		if checkLive(*spec, snap, nil, diags); diags.HasError() {
			r.data.ForgetChosen(key)
			return nil, nil
		}
		template := vcluster.NewManifest(*spec, owner, r.data.Version, vcluster.Placement{})
		res, err := r.runDriver(ctx, spec.Request(vcluster.ActionCreate).Owned(*spec, owner, false, &template))
		holders, others := nodesClaimed(res, err)
		if holders == nil {
			return res, err
		}
		r.data.ForgetChosen(key)
		if fixed {
			diags.AddAttributeError(path.Root(vcluster.AttrSelectedNodeIDs), "The selected nodes were taken since the plan",
				fmt.Sprintf("%s.\n\nNothing was created. Run `terraform plan` again to choose among the nodes free now.",
					vcluster.DescribeHolders(holders)))
			return nil, nil
		}
		if collided.IsZero() {
			collided = time.Now()
		}
		for _, id := range others {
			claimed[id] = vcluster.NodeHolder{NodeID: id}
		}
		for _, h := range holders {
			claimed[h.NodeID] = h
		}
		tflog.Info(ctx, "lost the race for nodes: choosing again", map[string]any{"cluster": key, "holders": vcluster.DescribeHolders(holders)})
		if snap = r.freshSnapshot(ctx, diags); snap == nil {
			return nil, nil
		}
	}
}

// nodesClaimed returns the holders of the nodes it wanted and every node
// claimed by another cluster when the create failed because other clusters
// had claimed its nodes first; nil holders otherwise.
func nodesClaimed(res *vcluster.Result, err error) (holders []vcluster.NodeHolder, claimed []string) {
	if err == nil || res == nil || res.Error == nil || res.Error.Code != vcluster.CodeNodesClaimed {
		return nil, nil
	}
	f := res.Error.Facts
	if f.Holders == nil {
		f.Holders = []vcluster.NodeHolder{}
	}
	return f.Holders, f.Claimed
}

// claimDescriptions names each claimed node's holder for node choice.
func claimDescriptions(claimed map[string]vcluster.NodeHolder) map[string]string {
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
func (r *virtualClusterResource) freshSnapshot(ctx context.Context, diags *diag.Diagnostics) *vcluster.Snapshot {
	r.data.Live.InvalidateGroups()
	snap, err := vcluster.FetchSnapshot(ctx, r.data.Client)
	if err != nil {
		addDashboardError(diags, r.data.Client.Address(), err)
		return nil
	}
	return snap
}

// waitAndSnapshot waits queuePollInterval, then reads the cluster again.
func (r *virtualClusterResource) waitAndSnapshot(ctx context.Context, diags *diag.Diagnostics) *vcluster.Snapshot {
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
func lostRaceDetail(spec vcluster.Spec, claimed map[string]vcluster.NodeHolder, choice diag.Diagnostics) string {
	holders := make([]vcluster.NodeHolder, 0, len(claimed))
	for _, id := range slices.Sorted(maps.Keys(claimed)) {
		if claimed[id].Cluster != "" { // nodes only known as claimed have no holder to name
			holders = append(holders, claimed[id])
		}
	}
	var why []string
	for _, d := range choice.Errors() {
		why = append(why, d.Detail())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "While this apply chose nodes for %q, other clusters applying at the same time claimed them first: %s.",
		spec.Name, vcluster.DescribeHolders(holders))
	if len(why) > 0 {
		fmt.Fprintf(&b, "\n\nThe nodes left cannot hold it: %s", strings.Join(why, "\n"))
	}
	fmt.Fprintf(&b, "\n\nNothing of %q was created. %s", spec.Name, spec.ShortageNextStep())
	return b.String()
}
