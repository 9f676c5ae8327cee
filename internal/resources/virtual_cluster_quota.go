package resources

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
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
// its use (a job); the apply checks again, atomically.
func (p *planCall) checkQuota(spec clusterspec.Spec, snap *planning.Snapshot) {
	data := p.r.data
	data.PlanNodeAsk(spec.Namespace+"/"+spec.Name, spec.NodeAsk())
	caps, owner := data.PlannedQuota(spec.Namespace), "declared in this configuration"
	if caps == nil {
		note, err := data.QuotaNote(p.ctx, spec.Namespace)
		if err != nil {
			tflog.Debug(p.ctx, "cannot read the namespace's quota note; the apply checks the quota", map[string]any{"error": err.Error()})
			return
		}
		if note == nil {
			return
		}
		caps, owner = &note.QuotaCaps, "owner "+record.OwnerPrefix(note.Owner)+"…"
	}
	used, err := data.QuotaUsage(p.ctx, spec.Namespace)
	if err != nil {
		p.resp.Diagnostics.AddWarning("Cannot check the namespace quota at plan",
			fmt.Sprintf("Ray namespace %s has a quota, but what it holds could not be read: %v. The apply checks the quota before it creates anything.",
				spec.Namespace, err))
		return
	}
	holders := p.quotaHolders(spec, used)
	ask := clusterspec.GroupsAsk(spec.Groups())
	if over := caps.Over(holders, ask, spec.NodeAsk(), planning.NodeLabels(snap.Nodes)); len(over) > 0 {
		p.resp.Diagnostics.AddAttributeError(path.Root("bundle_ct_per_node_list"), "Namespace quota exceeded",
			fmt.Sprintf("Ray namespace %s has the quota %s (ray_namespace_quota, %s). It holds: %s. Virtual cluster %q asks %s, "+
				"which would take it to %s.\n\nAsk for less, destroy one of the namespace's clusters, or raise the quota.",
				spec.Namespace, caps.Describe(), owner, contract.DescribeQuotaHolders(holders),
				spec.Name, raystate.FormatResources(ask), strings.Join(over, ", ")))
	}
}

// quotaHolders is what counts against a cluster's ask: what its namespace
// holds but the cluster itself (its groups, and what a replacement of it,
// renamed or not, destroys first) and clusters planned beside it, which
// count as planned instead.
func (p *planCall) quotaHolders(spec clusterspec.Spec, used []contract.QuotaHolder) []contract.QuotaHolder {
	self := spec.Namespace + "/" + spec.Name
	replaced := ""
	if p.replacing {
		replaced = p.state.Namespace.ValueString() + "/" + p.state.Name.ValueString()
	}
	planned := p.r.data.PlannedHolders(spec.Namespace, self)
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
