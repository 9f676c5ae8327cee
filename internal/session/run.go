package session

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// ReadOnly marks ctx as that of a command that must not write to Ray
// (plan, refresh, a data source, query): a request that writes is refused
// before it reaches Ray.
func ReadOnly(ctx context.Context, command string) context.Context {
	return driver.ReadOnly(ctx, command)
}

// Run runs one driver action as a Ray job and reports its progress. After
// a write the shared group list is stale, so it is dropped.
func (d *Session) Run(ctx context.Context, req contract.Request) (*contract.Result, error) {
	if req.Writes() {
		defer d.Live.InvalidateGroups()
	}
	tflog.Info(ctx, "submitting placement-group driver job", map[string]any{"action": req.Action, "groups": len(req.Groups)})
	return d.Jobs.Run(ctx, req, func(p driver.Progress) {
		tflog.Info(ctx, "placement progress", progressFields(p))
	})
}

func progressFields(p driver.Progress) map[string]any {
	fields := map[string]any{"phase": p.Phase}
	for k, v := range p.Raw {
		fields[k] = v
	}
	return fields
}

// PlacementEnv is what placement.Place needs of this provider process.
func (d *Session) PlacementEnv() placement.Env {
	return placement.Env{
		Run: d.Run,
		Snapshot: func(ctx context.Context) (*planning.Snapshot, error) {
			d.Live.InvalidateGroups()
			return d.FreshSnapshot(ctx)
		},
		Choose: d.ChooseNodes, Forget: d.ForgetChosen, Version: d.Version,
	}
}

// RecordRankOrder rewrites the record of a cluster owned by owner with the
// provider's rank order when the order the driver recorded differs.
// driver.py records topology_order (Go's sort, mirrored) when the request
// asks for it and the sort keeps every bundle, else creation order; so a
// rewrite is rare.
func (d *Session) RecordRankOrder(ctx context.Context, spec clusterspec.Spec, owner string, res *contract.Result) error {
	if owner == "" || res.Record == nil {
		return nil
	}
	p, _ := contract.NewPlacement(spec, res)
	if slices.Equal(p.SortedBundleIndices(), res.Record.SortedBundleIndices) {
		return nil
	}
	manifest := record.NewManifest(spec, owner, d.Version, p)
	_, err := d.Run(ctx, contract.RequestFor(spec, contract.ActionRecord).Owned(spec, owner, false, &manifest))
	return err
}

// ExplainGone says why every group of a cluster in state (owned by owner)
// is gone: destroyed by another state that had imported it (its tombstone
// says so), or removed outside Terraform. It costs one inspect job, only in
// this rare case.
func (d *Session) ExplainGone(ctx context.Context, spec clusterspec.Spec, owner string) string {
	removed := fmt.Sprintf("Every placement group of %q in namespace %s", spec.Name, spec.Namespace)
	const forgot = " This state forgets it; the next apply creates it again."
	res, err := d.Run(ctx, contract.RequestFor(spec, contract.ActionInspect).Owned(spec, owner, false, nil))
	if err != nil || res.Tombstone == nil || res.Tombstone.DeletedBy == "" || record.OwnedBy(res.Tombstone.DeletedBy, owner) {
		return removed + " was removed outside Terraform." + forgot
	}
	t := res.Tombstone
	return fmt.Sprintf("%s was destroyed at %s by another Terraform state (owner %s…) that had imported it and so owned it.%s",
		removed, t.DeletedAt, record.OwnerPrefix(t.DeletedBy), forgot)
}

// rayVersionCache holds the connected Ray's version for one provider
// process (one plan or apply): a failed lookup is retried next time.
type rayVersionCache struct {
	mu      sync.Mutex
	version string
}

// CachedRayVersion returns the Ray version the dashboard reports, asked
// once per provider process.
func (d *Session) CachedRayVersion(ctx context.Context) (string, error) {
	d.rayVersion.mu.Lock()
	defer d.rayVersion.mu.Unlock()
	if d.rayVersion.version != "" {
		return d.rayVersion.version, nil
	}
	v, err := d.Client.Version(ctx)
	if err != nil {
		return "", err
	}
	d.rayVersion.version = v.RayVersion
	return v.RayVersion, nil
}
