package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// checkQuota refuses, at plan, a cluster about to be created or replaced
// that would take its Ray namespace over the namespace's quota (as this
// configuration plans it, else as Ray holds it): what the namespace holds
// (the cluster it replaces aside), the clusters planned beside it and its
// own ask, in all and, on nodes the plan chose (select_nodes), on the nodes
// of each label limit. Only a namespace with a quota pays for the read of
// its use (a job); the apply checks again, atomically. replaced is the
// "<namespace>/<name>" of the cluster a replacement destroys first ("" for
// a create).
func (d *Session) CheckQuota(ctx context.Context, spec clusterspec.Spec, snap *planning.Snapshot, replaced string) []clusterspec.Issue {
	d.PlanAsk(spec.Namespace+"/"+spec.Name, clusterspec.GroupsAsk(spec.Groups()), spec.NodeAsk())
	caps, owner := d.PlannedQuota(spec.Namespace), "declared in this configuration"
	if caps == nil {
		note, err := d.QuotaNote(ctx, spec.Namespace)
		if err != nil {
			tflog.Debug(ctx, "cannot read the namespace's quota note; the apply checks the quota", map[string]any{"error": err.Error()})
			return nil
		}
		if note == nil {
			return nil
		}
		caps, owner = &note.QuotaCaps, "owner "+record.OwnerPrefix(note.Owner)+"…"
	}
	used, err := d.QuotaUsage(ctx, spec.Namespace)
	if err != nil {
		return []clusterspec.Issue{{Warning: true, Summary: "Cannot check the namespace quota at plan",
			Detail: fmt.Sprintf("Ray namespace %s has a quota, but what it holds could not be read: %v. The apply checks the quota before it creates anything.",
				spec.Namespace, err)}}
	}
	holders := d.quotaHolders(spec, used, replaced)
	ask := clusterspec.GroupsAsk(spec.Groups())
	if over := caps.Over(holders, ask, spec.NodeAsk(), planning.NodeLabels(snap.Nodes)); len(over) > 0 {
		return []clusterspec.Issue{{Path: clusterspec.AttrBundleCtPerNodeList, Summary: "Namespace quota exceeded",
			Detail: fmt.Sprintf("Ray namespace %s has the quota %s (ray_namespace_quota, %s). It holds: %s. Virtual cluster %q asks %s, "+
				"which would take it to %s.\n\nAsk for less, destroy one of the namespace's clusters, or raise the quota.",
				spec.Namespace, caps.Describe(), owner, contract.DescribeQuotaHolders(holders),
				spec.Name, raystate.FormatResources(ask), strings.Join(over, ", "))}}
	}
	return nil
}

// quotaHolders is what counts against a cluster's ask: what its namespace
// holds but the cluster itself (its groups, and what a replacement of it,
// renamed or not, destroys first) and clusters planned beside it, which
// count as planned instead.
func (d *Session) quotaHolders(spec clusterspec.Spec, used []contract.QuotaHolder, replaced string) []contract.QuotaHolder {
	self := spec.Namespace + "/" + spec.Name
	planned := d.PlannedHolders(spec.Namespace, self)
	plannedKeys := map[string]bool{}
	for _, h := range planned {
		plannedKeys[h.Cluster] = true
	}
	own := spec.GroupNames()
	var holders []contract.QuotaHolder
	for _, h := range used {
		group, _ := strings.CutPrefix(h.Cluster, spec.Namespace+"/")
		switch {
		case h.Outside && own[group]:
		case !h.Outside && (h.Cluster == self || h.Cluster == replaced || plannedKeys[h.Cluster]):
		default:
			holders = append(holders, h)
		}
	}
	return append(holders, planned...)
}

// CheckQuotaLowered warns when the quota of ns, as caps would set it, is
// below what the namespace holds: nothing is removed, and every create that
// asks for more of what is over is refused until its use is back under it.
func (d *Session) CheckQuotaLowered(ctx context.Context, ns string, caps contract.QuotaCaps) []clusterspec.Issue {
	used, labels, err := d.QuotaHeld(ctx, ns, caps)
	if err != nil {
		return []clusterspec.Issue{{Warning: true, Summary: "Cannot check the quota against the namespace's use", Detail: err.Error()}}
	}
	over := caps.OverHeld(used, labels)
	if len(over) == 0 {
		return nil
	}
	return []clusterspec.Issue{{Warning: true, Summary: "Namespace quota below what the namespace holds",
		Detail: fmt.Sprintf("Ray namespace %s holds more than the quota allows (%s): %s. The apply removes nothing; every create "+
			"in the namespace that asks for more of what is over (on those nodes, for a label limit) is refused until its use "+
			"is back under the quota.", ns, strings.Join(over, ", "), contract.DescribeQuotaHolders(used))}}
}
