package placement

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// cleanupTimeout bounds the delete job after a failed create.
const cleanupTimeout = 3 * time.Minute

// CleanupAfterFailedCreate removes whatever groups a failed create may have
// left behind when the driver could not clean up itself (stopped, killed).
// A conflict or an invalid request touched nothing, so it runs no job.
func CleanupAfterFailedCreate(ctx context.Context, env Env, spec clusterspec.Spec, owner string, cause error) {
	if contract.IsKind(cause, contract.KindConflict, contract.KindInvalid) {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	spec.ReadyTimeout = time.Minute
	if _, err := env.Run(cctx, DeleteRequest(spec, owner)); err != nil {
		tflog.Warn(ctx, "cleanup after failed create did not finish", map[string]any{"error": err.Error()})
	}
}

// CreateErrorDetail explains a failed create: a name conflict, or, for
// groups Ray could not place, why they do not fit.
func CreateErrorDetail(spec clusterspec.Spec, res *contract.Result, err error) string {
	if contract.IsKind(err, contract.KindConflict) {
		fix := contract.Fix(err)
		if fix == "" {
			fix = contract.ConflictFix
		}
		return err.Error() + "\n\nNothing was created or changed. " + fix
	}
	detail := err.Error()
	if why := explainApplyShortage(spec, res); why != "" {
		detail += "\n\n" + why
	}
	detail += "\n\nNo placement group of this cluster was left behind."
	if fix := contract.Fix(err); fix != "" {
		detail += " " + fix
	}
	return detail
}

// explainApplyShortage explains, from the driver's view of the nodes, why
// Ray had not placed the groups of a create when its wait ended.
func explainApplyShortage(spec clusterspec.Spec, res *contract.Result) string {
	if res == nil {
		return ""
	}
	return planning.ExplainApplyShortage(spec, res.Pending, NodeCapacities(res.Nodes))
}

// NodeCapacities turns the driver's per-node view into capacities, in node
// id order.
func NodeCapacities(view []contract.NodeView) []topology.NodeCapacity {
	out := make([]topology.NodeCapacity, 0, len(view))
	for _, n := range view {
		out = append(out, topology.NodeCapacity{ID: n.NodeID, Total: n.Total, Available: n.Free})
	}
	slices.SortFunc(out, func(a, b topology.NodeCapacity) int { return strings.Compare(a.ID, b.ID) })
	return out
}
