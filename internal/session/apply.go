package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// The apply's side of a virtual cluster: create, re-probe, take over an
// imported cluster, delete. Each returns what Ray answered and the issues
// resources reports; none decides anything from framework values.

// VersionIssues are the spec's issues against the connected Ray's version
// (CachedRayVersion): an error for a feature it lacks, a warning for a Ray
// older than supported. A version that cannot be read gives none and the
// error, for the caller's deadline.
func (d *Session) VersionIssues(ctx context.Context, spec clusterspec.Spec) ([]clusterspec.Issue, error) {
	v, err := d.CachedRayVersion(ctx)
	if err != nil {
		return nil, err
	}
	return spec.VersionIssues(v), nil
}

// Created is a cluster the apply created: its owner token and the driver's
// result. Rollback removes it again when what follows fails.
type Created struct {
	Owner  string
	Result *contract.Result
	env    placement.Env
	spec   clusterspec.Spec
}

// Rollback removes what the create made (its groups, record and
// reservation), for a failure after the driver answered.
func (c Created) Rollback(ctx context.Context, cause error) {
	placement.CleanupAfterFailedCreate(ctx, c.env, c.spec, c.Owner, cause)
}

// Create places a new cluster: it checks the Ray version and the live
// cluster again (the plan may have deferred them), chooses nodes and runs
// the driver (placement.Place), and undoes a failed create. spec gets the
// nodes chosen for it; exclude is its exclude_node_ids.
func (d *Session) Create(ctx context.Context, spec *clusterspec.Spec, exclude map[string]bool) (Created, []clusterspec.Issue) {
	owner, err := record.NewOwnerToken()
	if err != nil {
		return Created{}, []clusterspec.Issue{{Summary: "Cannot create the virtual cluster", Detail: ErrorDetail(err)}}
	}
	// The version's warnings (a Ray older than supported) stay with every answer.
	versionIssues, _ := d.VersionIssues(ctx, *spec) // unreachable: the snapshot says so
	if clusterspec.HasError(versionIssues) {
		return Created{}, versionIssues
	}
	snap, err := d.FreshSnapshot(ctx)
	if err != nil {
		return Created{}, append(versionIssues, DashboardIssue(d.Address(), err))
	}
	if issues := d.labelIssues(ctx, *spec, snap); issues != nil {
		return Created{}, append(versionIssues, issues...)
	}
	env := d.PlacementEnv()
	res, issues, err := placement.Place(ctx, env, spec, snap, owner, exclude)
	issues = append(versionIssues, issues...)
	if clusterspec.HasError(issues) {
		return Created{}, issues
	}
	if se, ok := placement.IsSnapshotError(err); ok {
		return Created{}, append(issues, DashboardIssue(d.Address(), se.Err))
	}
	if err != nil {
		d.ForgetChosen(spec.Namespace + "/" + spec.Name)
		placement.CleanupAfterFailedCreate(ctx, env, *spec, owner, err)
		return Created{}, append(issues, clusterspec.Issue{Summary: "Cannot create the virtual cluster", Detail: placement.CreateErrorDetail(*spec, res, err)})
	}
	return Created{Owner: owner, Result: res, env: env, spec: *spec}, issues
}

// labelIssues fails a cluster whose topology source needs node labels Ray
// does not report.
func (d *Session) labelIssues(ctx context.Context, spec clusterspec.Spec, snap *planning.Snapshot) []clusterspec.Issue {
	if err := d.LabelSupportError(ctx, spec.Topology, snap.Nodes); err != nil {
		return []clusterspec.Issue{{Path: clusterspec.AttrTopologyLabels, Summary: "Ray does not report node labels", Detail: err.Error()}}
	}
	return nil
}

// Reprobe probes the groups of a cluster owner owns (or, from before owners
// existed, "": held without one), keeping the recorded GPU ids and ports of
// bundles Ray still has where the record says when keep, and rewrites its
// record.
func (d *Session) Reprobe(ctx context.Context, spec clusterspec.Spec, owner string, keep bool) (*contract.Result, []clusterspec.Issue) {
	request := contract.RequestFor(spec, contract.ActionInspect)
	if owner != "" {
		template := record.NewManifest(spec, owner, d.Version, record.Placement{})
		request = request.Owned(spec, owner, false, &template)
		request.Probe.KeepRecorded = keep
	}
	res, err := d.Run(ctx, request)
	if err != nil {
		if contract.IsKind(err, contract.KindConflict) {
			return nil, []clusterspec.Issue{{Summary: "The virtual cluster belongs to another Terraform state", Detail: ErrorDetail(err)}}
		}
		return nil, []clusterspec.Issue{{Summary: "Cannot re-probe the virtual cluster", Detail: ErrorDetail(err)}}
	}
	return res, missingGroupsIssues(res)
}

// missingGroupsIssues fails an update whose groups Ray no longer has.
func missingGroupsIssues(res *contract.Result) []clusterspec.Issue {
	if missing := res.MissingGroups(); len(missing) > 0 {
		return []clusterspec.Issue{{Summary: "Placement groups disappeared during the update",
			Detail: fmt.Sprintf("Ray no longer has %s; run `terraform apply` again to recreate the cluster.", strings.Join(missing, ", "))}}
	}
	return nil
}

// InspectImported reads the groups of a cluster an import found, writing
// nothing: each bundle keeps the GPU id and port its record holds where
// Ray still has it there, so no task runs in the GPUs the owner's workers
// may hold; only what the record lacks is probed.
func (d *Session) InspectImported(ctx context.Context, spec clusterspec.Spec) (*contract.Result, error) {
	request := contract.RequestFor(spec, contract.ActionInspect).Owned(spec, "", false, nil)
	request.Probe.KeepRecorded = true
	return d.Run(ctx, request)
}

// TakeImported makes this state the owner of an imported cluster, at
// apply: a new owner token, the record rewritten in Ray with the placement
// probed again, and a note for the former owner's next plan.
func (d *Session) TakeImported(ctx context.Context, spec clusterspec.Spec) (owner string, res *contract.Result, issues []clusterspec.Issue) {
	owner, err := record.NewOwnerToken()
	if err != nil {
		return "", nil, []clusterspec.Issue{{Summary: "Cannot take ownership of the imported virtual cluster", Detail: ErrorDetail(err)}}
	}
	template := record.NewManifest(spec, owner, d.Version, record.Placement{})
	request := contract.RequestFor(spec, contract.ActionInspect).Owned(spec, owner, true, &template)
	request.Probe.KeepRecorded = true // the record's GPU ids and ports: its workers may hold every GPU
	res, err = d.Run(ctx, request)
	if err != nil {
		return "", nil, []clusterspec.Issue{{Summary: "Cannot take ownership of the imported virtual cluster", Detail: ErrorDetail(err)}}
	}
	if prev := res.PreviousOwner; prev != nil {
		issues = append(issues, clusterspec.Issue{Warning: true, Summary: "Import took ownership of the virtual cluster",
			Detail: fmt.Sprintf("This state now owns %q in namespace %s (owner %s…). It belonged to %s, which can no longer "+
				"change or destroy it: its destroy will only forget the cluster.", spec.Name, spec.Namespace,
				record.OwnerPrefix(owner), prev.Describe())})
		if prev.Owner != "" {
			issues = append(issues, d.noteTransfer(ctx, spec, prev.Owner, owner)...)
		}
	}
	return owner, res, append(issues, missingGroupsIssues(res)...)
}

// noteTransfer leaves the note that tells the former owner's next plan that
// this state took the cluster (RecordTransfer). A failure only costs that
// warning, so it is a warning itself.
func (d *Session) noteTransfer(ctx context.Context, spec clusterspec.Spec, from, to string) []clusterspec.Issue {
	if err := d.RecordTransfer(ctx, spec.Namespace, spec.Name, from, to); err != nil {
		return []clusterspec.Issue{{Warning: true, Summary: "Cannot tell the former owner about the import",
			Detail: fmt.Sprintf("This state owns %q now, but the note that warns the former owner's next plan could not be left in Ray: %v. "+
				"Tell that state's team that its destroy will only forget the cluster.", spec.Name, err)}}
	}
	return nil
}

// Delete removes a cluster owner owns, and then its ownership note; another
// state's cluster is never touched (a warning says so, and how to adopt or
// remove it; importPending: this state imported it but has not applied).
func (d *Session) Delete(ctx context.Context, spec clusterspec.Spec, owner string, importPending bool) (*contract.Result, []clusterspec.Issue) {
	res, err := d.Run(ctx, placement.DeleteRequest(spec, owner))
	if err != nil {
		return nil, []clusterspec.Issue{{Summary: "Cannot delete the virtual cluster", Detail: ErrorDetail(err)}}
	}
	if o := res.OtherOwner; o != nil {
		why := ""
		if importPending {
			why = " This state imported it but never applied the import."
		}
		return res, []clusterspec.Issue{{Warning: true, Summary: "Virtual cluster left to its owner",
			Detail: fmt.Sprintf("The placement groups of %q in namespace %s belong to %s, so this state did not touch them; "+
				"it only forgets the cluster.%s\n\nIf no other state holds it (an apply interrupted before Terraform saved "+
				"state leaves such a cluster): %s",
				spec.Name, spec.Namespace, o.Describe(), why, contract.AdoptOrRemoveFix)}}
	}
	if err := d.DeleteTransfer(ctx, spec.Namespace, spec.Name); err != nil {
		tflog.Warn(ctx, "cannot remove the cluster's ownership note; the next import of the name replaces it", map[string]any{"error": err.Error()})
	}
	return res, nil
}
