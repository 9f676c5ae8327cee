package placement

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
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
	if why := planning.ExplainApplyShortage(spec, res); why != "" {
		detail += "\n\n" + why
	}
	detail += "\n\nNo placement group of this cluster was left behind."
	if fix := contract.Fix(err); fix != "" {
		detail += " " + fix
	}
	return detail
}
