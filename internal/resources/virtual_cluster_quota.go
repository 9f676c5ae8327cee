package resources

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// checkQuota refuses, at plan, a cluster about to be created or replaced
// that would take its Ray namespace over the namespace's quota: what the
// namespace holds (the cluster it replaces aside), the clusters planned
// beside it and its own ask. Only a namespace with a quota pays for the
// read of its use (a job); the apply checks again, atomically.
func (p *planCall) checkQuota(spec clusterspec.Spec) {
	data := p.r.data
	note, err := data.quotaNote(p.ctx, spec.Namespace)
	if err != nil {
		tflog.Debug(p.ctx, "cannot read the namespace's quota note; the apply checks the quota", map[string]any{"error": err.Error()})
		return
	}
	if note == nil {
		return
	}
	used, err := data.quotaUsage(p.ctx, spec.Namespace)
	if err != nil {
		p.resp.Diagnostics.AddWarning("Cannot check the namespace quota at plan",
			fmt.Sprintf("Ray namespace %s has a quota, but what it holds could not be read: %v. The apply checks the quota before it creates anything.",
				spec.Namespace, err))
		return
	}
	self := spec.Namespace + "/" + spec.Name
	var holders []contract.QuotaHolder
	for _, h := range used {
		if h.Cluster != self && !strings.HasPrefix(h.Cluster, self+"-") { // what it replaces, groups from before reservations too
			holders = append(holders, h)
		}
	}
	holders = append(holders, data.plannedHolders(spec.Namespace, self)...)
	ask := topology.Resources{}
	for _, g := range spec.Groups() {
		for _, b := range g.Bundles {
			for k, v := range b {
				ask[k] += v
			}
		}
	}
	if over := contract.QuotaOver(note.Limits, holders, ask); len(over) > 0 {
		p.resp.Diagnostics.AddError("Namespace quota exceeded",
			fmt.Sprintf("Ray namespace %s has the quota %s (ray_namespace_quota, owner %s…). It holds: %s. Virtual cluster %q asks %s, "+
				"which would take it to %s.\n\nAsk for less, destroy one of the namespace's clusters, or raise the quota.",
				spec.Namespace, raystate.FormatResources(note.Limits), record.OwnerPrefix(note.Owner), contract.DescribeQuotaHolders(holders),
				spec.Name, raystate.FormatResources(ask), strings.Join(over, ", ")))
	}
}
