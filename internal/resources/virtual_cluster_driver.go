package resources

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

// runDriver runs one driver action as a Ray job and reports its progress.
func (r *virtualClusterResource) runDriver(ctx context.Context, req vcluster.Request) (*vcluster.Result, error) {
	tflog.Info(ctx, "submitting placement-group driver job", map[string]any{"action": req.Action, "groups": len(req.Groups)})
	return driver.Run(ctx, r.data.Client, r.data.PythonExecutable, req, driver.RunOptions{
		RuntimeEnv:        r.data.RuntimeEnv,
		BackgroundCleanup: true,
		OnProgress: func(p driver.Progress) {
			tflog.Info(ctx, "placement progress", progressFields(p))
		},
	})
}

func progressFields(p driver.Progress) map[string]any {
	fields := map[string]any{"phase": p.Phase}
	for k, v := range p.Raw {
		fields[k] = v
	}
	return fields
}

// cleanupAfterFailedCreate removes whatever groups a failed create may have
// left behind when the driver could not clean up itself (stopped, killed).
func (r *virtualClusterResource) cleanupAfterFailedCreate(ctx context.Context, spec vcluster.Spec, cause error) {
	if vcluster.IsKind(cause, vcluster.KindConflict, vcluster.KindInvalid) {
		return // the driver touched nothing
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	spec.ReadyTimeout = time.Minute
	if _, err := r.runDriver(cctx, spec.Request(vcluster.ActionDelete)); err != nil {
		tflog.Warn(ctx, "cleanup after failed create did not finish", map[string]any{"error": err.Error()})
	}
}

// createErrorDetail explains a failed create: a name conflict, or, for
// groups Ray could not place, why they do not fit.
func createErrorDetail(spec vcluster.Spec, res *vcluster.Result, err error) string {
	if vcluster.IsKind(err, vcluster.KindConflict) {
		return err.Error() + "\n\nA placement group with one of this cluster's names (" + spec.Name + "-...) already exists " +
			"with a different shape. Import it (`terraform import`), remove it, or choose another name."
	}
	detail := err.Error()
	if why := vcluster.ExplainApplyShortage(spec, res); why != "" {
		detail += "\n\n" + why
	}
	return detail + "\n\nNo placement group of this cluster was left behind."
}
