package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// checkNameFree fails the plan of a new cluster whose name Ray already uses
// in the namespace: the groups of another state's cluster (their record
// names the owner), or groups without a record, made outside this provider
// (e.g. by NeMo-RL itself). Its apply would fail on them; the plan says so
// first. The shared group list tells whether any group is named like the
// cluster at no cost; only then one short read job asks for the record and
// which of those groups live in this Ray namespace (the state API lists
// every namespace's groups). The name is free unless an issue is an error.
func (d *Session) CheckNameFree(ctx context.Context, spec clusterspec.Spec, live []raystate.PlacementGroup) []clusterspec.Issue {
	if d.PlannedHere(spec.Namespace, spec.Name, "") {
		return nil // the create half of a replacement: the groups are the cluster's own
	}
	var alike []string
	state := map[string]string{}
	for _, g := range live {
		if clusterspec.NamedLike(spec.Name, g.Name) && state[g.Name] == "" {
			alike = append(alike, g.Name)
			state[g.Name] = g.State
		}
	}
	if len(alike) == 0 {
		return nil
	}
	slices.Sort(alike)
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	res, err := d.ReadRecord(ctx, spec.Namespace, spec.Name, alike...)
	if err != nil {
		return []clusterspec.Issue{{Path: clusterspec.AttrName, Warning: true, Summary: "Cannot check who owns placement groups of this name",
			Detail: fmt.Sprintf("Ray lists placement groups named like %q (%s), but reading the cluster's record failed: %v\n\n"+
				"The apply checks again before creating anything.", spec.Name, strings.Join(alike, ", "), err)}}
	}
	var present []string
	for _, name := range alike {
		if !slices.Contains(res.Missing, name) {
			present = append(present, fmt.Sprintf("%q (%s)", name, state[name]))
		}
	}
	tflog.Info(ctx, "placement groups named like the new cluster", map[string]any{"name": spec.Name,
		"in_namespace": len(present), "elsewhere": len(res.Missing), "record": res.Record != nil})
	if len(present) == 0 || (res.Record != nil && d.PlannedHere(spec.Namespace, spec.Name, res.Record.Owner)) {
		return nil // they live in other Ray namespaces, or belong to a cluster of this configuration's state
	}
	groups := strings.Join(present, ", ")
	if rec := res.Record; rec != nil {
		owner := record.OtherOwner{Owner: rec.Owner, CreatedAt: rec.CreatedAt}
		return []clusterspec.Issue{{Path: clusterspec.AttrName, Summary: "Virtual cluster owned by another Terraform state",
			Detail: fmt.Sprintf("Ray namespace %q already holds virtual cluster %q, owned by %s, with placement groups %s. "+
				"Creating it here would fail at apply, so the plan stops; nothing was created or changed.\n\n%s%s\n\n%s"+
				"\n\nOtherwise give this cluster another name.",
				spec.Namespace, spec.Name, owner.Describe(), groups, d.whoseCluster(ctx, spec, rec), contract.AdoptOrRemoveFix, importHint(spec))}}
	}
	return []clusterspec.Issue{{Path: clusterspec.AttrName, Summary: "Placement groups of this name already exist",
		Detail: fmt.Sprintf("Ray namespace %q already has placement groups named like virtual cluster %q: %s. They have no "+
			"ownership record, so they were made outside this provider (for example by NeMo-RL's RayVirtualCluster or "+
			"a plain ray.util.placement_group call). Creating %q would collide with them, so the plan stops; nothing "+
			"was created or changed.\n\nRemove them, give this cluster another name, or adopt them (an import's apply writes "+
			"the record and takes ownership). %s", spec.Namespace, spec.Name, groups, spec.Name, importHint(spec))}}
}

// ReadTimeout bounds a read job and the state API call of a record's read.
const ReadTimeout = 5 * time.Minute

// whoseCluster says whose the cluster of another owner likely is: this
// configuration's own, left by an interrupted apply, when its record
// declares the same shape and no state has imported it; else it may be
// either. A failed read of the import notes claims nothing.
func (d *Session) whoseCluster(ctx context.Context, spec clusterspec.Spec, rec *record.Manifest) string {
	ctx, cancel := d.PlanReadContext(ctx)
	defer cancel()
	t, err := d.ReadTransfer(ctx, spec.Namespace, spec.Name)
	if err == nil && t == nil && sameShape(spec, rec) {
		return "It declares the shape this configuration declares and no state has imported it, so it may well be " +
			"this configuration's own cluster, left by an apply that was interrupted (a killed `terraform apply` or CI " +
			"runner) after the create began and before Terraform saved state. Check first that no other state (another " +
			"workspace or pipeline of this module) manages it: importing takes it from that state. "
	}
	return "Ray cannot tell whether that state still exists: an apply interrupted after the create began and before " +
		"Terraform saved state leaves a cluster no state holds. "
}

// sameShape tells whether rec records the groups spec declares.
func sameShape(spec clusterspec.Spec, rec *record.Manifest) bool {
	spec = spec.WithDefaults()
	return slices.Equal(rec.BundleCtPerNodeList, spec.BundleCtPerNode) && rec.UseGPUs == spec.UseGPUs &&
		rec.NumGPUsPerNode == spec.NumGPUsPerNode && rec.UseUnifiedPG == spec.UseUnifiedPG &&
		rec.PlacementGroupStrategy == spec.Strategy && rec.PortRangeLow == spec.Ports.Low && rec.PortRangeHigh == spec.Ports.High
}

// importHint shows how to import cluster spec into this configuration.
func importHint(spec clusterspec.Spec) string {
	return fmt.Sprintf("With the CLI:\n  terraform import ray_virtual_cluster.<label> %s\nor with an import block:\n"+
		"  import {\n    to = ray_virtual_cluster.<label>\n    id = %q\n  }\n"+
		"(Terraform >= 1.12 and OpenTofu >= 1.12 also take identity = { name = %q, namespace = %q } instead of id.)",
		spec.Name, spec.Name, spec.Name, spec.Namespace)
}
