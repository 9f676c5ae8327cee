package session

import (
	"fmt"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// CheckRecord checks the record of cluster name in namespace ns against
// the live groups, as the ray_virtual_cluster data source reads it: an
// error summary and detail naming the cluster, or "" when it is usable.
func CheckRecord(name, ns string, rec *record.Manifest, tomb *record.Tombstone, live []raystate.PlacementGroup) (summary, detail string) {
	label := ClusterLabel(name, ns)
	if rec == nil {
		return "Virtual cluster not found", missingRecordDetail(name, ns, tomb, live)
	}
	switch {
	case rec.SchemaVersion > record.ManifestSchemaVersion:
		return "Virtual cluster record is too new", fmt.Sprintf("The record of %s has schema_version %d; this "+
			"provider reads up to %d. It was written by a newer provider (%s): upgrade this one.",
			label, rec.SchemaVersion, record.ManifestSchemaVersion, rec.ProviderVersion)
	case rec.SchemaVersion < 1 || len(rec.Groups) == 0:
		return "Virtual cluster record is unreadable", fmt.Sprintf("The record of %s in Ray's internal KV "+
			"(namespace %s, key %s) is not a cluster record. Re-apply the configuration that owns the cluster.",
			label, record.KVNamespace, record.RecordKey(ns, name))
	}
	for i, b := range rec.Bundles {
		if b.Rank != i {
			return "Virtual cluster record is unreadable", fmt.Sprintf("The record of %s lists rank %d at position %d; "+
				"bundles must be in rank order. Re-apply the configuration that owns the cluster.", label, b.Rank, i)
		}
	}
	if problems := liveProblems(rec, live); len(problems) > 0 {
		return "Virtual cluster is not ready", fmt.Sprintf("The placement groups of %s do not match its record:\n  - %s\n\n"+
			"Pending and rescheduling groups recover by themselves (retry later); for missing, recreated or moved groups "+
			"re-apply the configuration that owns the cluster (owner %s…, created %s).",
			label, strings.Join(problems, "\n  - "), record.OwnerPrefix(rec.Owner), rec.CreatedAt)
	}
	return "", ""
}

// ClusterLabel names a cluster in messages.
func ClusterLabel(name, ns string) string {
	return fmt.Sprintf("virtual cluster %q in Ray namespace %q", name, ns)
}

// missingRecordDetail says why a cluster has no record: destroyed, created
// outside this provider, or never applied here.
func missingRecordDetail(name, ns string, tomb *record.Tombstone, live []raystate.PlacementGroup) string {
	label := ClusterLabel(name, ns)
	if tomb != nil && tomb.DeletedBy != "" {
		return fmt.Sprintf("There is no %s: it was destroyed at %s by the Terraform state with owner %s….",
			label, tomb.DeletedAt, record.OwnerPrefix(tomb.DeletedBy))
	}
	var alike []string
	for _, g := range live {
		if clusterspec.NamedLike(name, g.Name) {
			alike = append(alike, fmt.Sprintf("%q (%s)", g.Name, g.State))
		}
	}
	if len(alike) > 0 {
		return fmt.Sprintf("Ray's internal KV has no record of %s, but placement groups named like it exist: %s. "+
			"They were created outside this provider (or in another namespace); `terraform import` the cluster in the "+
			"configuration that should own it, which writes the record.", label, strings.Join(alike, ", "))
	}
	return fmt.Sprintf("There is no %s: no record in Ray's internal KV (namespace %s, key %s). Apply the configuration "+
		"that declares it first, or check name and namespace (namespace defaults to the provider's).",
		label, record.KVNamespace, record.RecordKey(ns, name))
}

// liveProblems lists, per recorded group, why it is not usable as recorded:
// missing, recreated, not CREATED, or with bundles on other nodes.
func liveProblems(rec *record.Manifest, live []raystate.PlacementGroup) []string {
	byName := make(map[string][]raystate.PlacementGroup, len(live))
	for _, g := range live {
		byName[g.Name] = append(byName[g.Name], g)
	}
	recordedNode := map[string]map[int]string{}
	for _, b := range rec.Bundles {
		if recordedNode[b.PlacementGroup] == nil {
			recordedNode[b.PlacementGroup] = map[int]string{}
		}
		recordedNode[b.PlacementGroup][b.BundleIndex] = b.NodeID
	}
	var problems []string
	for _, rg := range rec.Groups {
		if rg.ID == "" { // the owner's create wrote its claim and has not placed the groups yet
			problems = append(problems, fmt.Sprintf("%s is being created: the owner's apply has not finished", rg.Name))
			continue
		}
		_, mismatches := drift.MatchRecorded(drift.RecordedGroup{ID: rg.ID, BundleCount: rg.BundleCount, BundleNodes: recordedNode[rg.Name]}, byName[rg.Name])
		problems = append(problems, describeMismatches(rg, mismatches)...)
	}
	return problems
}

// describeMismatches words the ways a recorded group differs from Ray's: a
// group that is gone, recreated or not CREATED says only that.
func describeMismatches(rg record.ManifestGroup, mismatches []drift.LiveMismatch) []string {
	var out []string
	for _, m := range mismatches {
		switch m.Kind {
		case drift.MismatchMissing:
			return []string{fmt.Sprintf("%s (id %s) is missing: removed outside Terraform", rg.Name, rg.ID)}
		case drift.MismatchRecreated:
			return []string{fmt.Sprintf("%s was recreated outside Terraform: its id is %s, the record says %s", rg.Name, m.LiveID, rg.ID)}
		case drift.MismatchState:
			if m.State == raystate.PlacementGroupStateRescheduling {
				return []string{fmt.Sprintf("%s is %s: a node holding its bundles died and Ray is placing them again", rg.Name, m.State)}
			}
			return []string{fmt.Sprintf("%s is %s, not %s", rg.Name, m.State, raystate.PlacementGroupStateCreated)}
		case drift.MismatchBundleCount:
			out = append(out, fmt.Sprintf("%s has %d bundles, the record says %d", rg.Name, m.BundleCount, rg.BundleCount))
		case drift.MismatchMoved:
			out = append(out, fmt.Sprintf("%s bundle %d is on node %s, the record says %s", rg.Name, m.Bundle, m.To, m.From))
		}
	}
	return out
}
