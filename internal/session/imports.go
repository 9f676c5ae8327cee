package session

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Declaration is what an import recovers of a cluster's configuration.
type Declaration struct {
	Spec clusterspec.Spec
	// Unrecovered names the arguments it could not recover.
	Unrecovered []string
	// TopologyLabels is the topology source the cluster was declared with
	// (nil: the resources).
	TopologyLabels *clusterspec.TopologySource
}

// RestoreDeclaration is the declaration an import recovers of cluster name
// in namespace (counts: the split of a unified group the import id gave,
// nil for none): its record rec (nil when it has none), else what Ray's
// live groups tell. It only reads what it is given, so listing uses it
// too: the configuration query generates is the one import restores. An
// error issue when Ray has no group of the cluster or the groups form none.
func (d *Session) RestoreDeclaration(name, namespace string, counts []int, live []raystate.PlacementGroup,
	rec *record.Manifest,
) (Declaration, []clusterspec.Issue) {
	id := importID(name, counts)
	var unrecovered []string
	var declared clusterspec.Spec
	if rec != nil {
		declared, unrecovered = rec.DeclaredSpec()
		if counts == nil {
			counts = declared.BundleCtPerNode
		}
	}
	spec, found, err := record.InferSpec(name, live, counts)
	if !found {
		return Declaration{Spec: spec}, []clusterspec.Issue{{Summary: "Nothing to import", Detail: fmt.Sprintf("The import id %q names no virtual cluster: Ray has no live placement group named %q or %q "+
			"in namespace %s. Check the name and the provider's namespace (`ray list placement-groups` lists the groups).", id, clusterspec.UnifiedGroupName(name), name+"-node<i>", namespace)}}
	}
	if err != nil {
		return Declaration{Spec: spec}, []clusterspec.Issue{{Summary: "Cannot import the virtual cluster", Detail: err.Error() +
			"\n\nMake the counts after the colon in the import id add up to the group's bundle count, or import by name alone."}}
	}
	spec.Namespace = namespace
	record.InferNative(&spec, live)
	spec.Topology = clusterspec.SourceOrDefault(d.TopologyLabels)
	switch {
	case rec != nil && rec.HasDeclaration():
		inferred := spec
		spec = declared
		spec.Namespace = inferred.Namespace
		spec.BundleCtPerNode = inferred.BundleCtPerNode // the id's split, when it gave one
		if declared.Topology == (clusterspec.TopologySource{}) {
			spec.Topology = inferred.Topology
		}
	case rec != nil: // a version 1 record: its fields, the rest from Ray
		spec.UseGPUs, spec.NumGPUsPerNode, spec.MaxColocatedWorkerGroups = declared.UseGPUs, declared.NumGPUsPerNode, declared.MaxColocatedWorkerGroups
		spec.Strategy, spec.Ports = declared.Strategy, declared.Ports
	default:
		unrecovered = []string{clusterspec.AttrNumGPUsPerNode, clusterspec.AttrSegmentSize, clusterspec.AttrPortRangeLow, clusterspec.AttrPortRangeHigh,
			clusterspec.AttrSelectNodes, clusterspec.AttrPinning, clusterspec.AttrSelectedNodeIDs, clusterspec.AttrExcludeNodeIDs, clusterspec.AttrReadyTimeout,
			clusterspec.AttrTopologyLabels}
		if spec.UseUnifiedPG && len(counts) == 0 {
			unrecovered = append([]string{clusterspec.AttrBundleCtPerNodeList}, unrecovered...)
		}
	}
	labels := d.TopologyLabels
	if rec.HasDeclaration() && rec.TopologyLabels != nil {
		labels = rec.TopologyLabels
	}
	return Declaration{Spec: spec, Unrecovered: unrecovered, TopologyLabels: labels}, nil
}

// UnrecoveredWhy says why an import could not recover every argument of a
// cluster whose record is rec.
func UnrecoveredWhy(rec *record.Manifest) string {
	if rec != nil {
		return fmt.Sprintf("its record in Ray's KV has schema version %d, which does not keep them", rec.SchemaVersion)
	}
	return "Ray's internal KV has no record of it (its groups were made outside this provider)"
}

// importID is the import id as the user gave it.
func importID(name string, counts []int) string {
	if counts == nil {
		return name
	}
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = strconv.Itoa(c)
	}
	return name + ":" + strings.Join(parts, ",")
}

// Imported is what an import reads of a cluster: its declaration, the
// groups Ray holds of it (probed where the record lacks them), the live
// group list, and the former owner the record names ("" for none).
type Imported struct {
	Declaration
	Result      *contract.Result
	Live        []raystate.PlacementGroup
	FormerOwner string
}

// ReadImported reads what an import of cluster name in namespace restores
// (counts: the split of a unified group the import id gave), writing
// nothing: the record (a read job), the declaration (RestoreDeclaration),
// and the groups (InspectImported: the record's GPU ids and ports, no task
// in the owner's groups). A unified group's strategy is the one Ray
// reports. Error issues when the import id names no cluster.
func (d *Session) ReadImported(ctx context.Context, name, namespace string, counts []int) (Imported, []clusterspec.Issue) {
	live, err := d.SharedGroups(ctx)
	if err != nil {
		return Imported{}, []clusterspec.Issue{{Summary: "Cannot read placement groups for import", Detail: ErrorDetail(err)}}
	}
	read, err := d.ReadRecord(ctx, namespace, name)
	if err != nil {
		return Imported{}, []clusterspec.Issue{{Summary: "Cannot read the virtual cluster's record for import", Detail: ErrorDetail(err)}}
	}
	rec := read.Record
	if rec != nil && rec.Name != name { // not a record this provider wrote for the name
		rec = nil
	}
	declared, issues := d.RestoreDeclaration(name, namespace, counts, live, rec)
	if clusterspec.HasError(issues) {
		return Imported{}, issues
	}
	if len(declared.Unrecovered) > 0 {
		issues = append(issues, clusterspec.Issue{Warning: true, Summary: "Import could not recover every argument",
			Detail: fmt.Sprintf("%q was imported from its placement groups because %s. These arguments were set to their defaults or to "+
				"what Ray reports, not necessarily to what was declared: %s. Compare the next plan with your configuration; "+
				"the record this import's apply writes keeps them from now on.", name, UnrecoveredWhy(rec), strings.Join(declared.Unrecovered, ", "))})
	}
	res, err := d.InspectImported(ctx, declared.Spec)
	if err != nil {
		return Imported{}, append(issues, clusterspec.Issue{Summary: "Cannot probe the imported placement groups", Detail: ErrorDetail(err)})
	}
	if declared.Spec.UseUnifiedPG && len(res.Groups) == 1 && res.Groups[0].Strategy != "" {
		declared.Spec.Strategy = res.Groups[0].Strategy
	}
	out := Imported{Declaration: declared, Result: res, Live: live}
	if rec != nil && rec.Owner != "" {
		out.FormerOwner = record.OtherOwner{Owner: rec.Owner, CreatedAt: rec.CreatedAt, HasRecord: true}.Describe()
	}
	return out, issues
}
