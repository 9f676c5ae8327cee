package placement

import (
	"errors"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// Summaries of the live check's errors (the troubleshooting guide has an
// entry for each).
const (
	SummaryCannotHold         = "The Ray cluster cannot hold this virtual cluster"
	SummaryCannotHoldTogether = "The Ray cluster cannot hold this virtual cluster together with the others planned"
	summarySegments           = "Not enough complete NVLink segments"
	summaryInvalidSegments    = "Invalid segment configuration"
	summaryMayNotSucceed      = "Placement may not succeed"
)

// CheckLive rejects a cluster that the live topology and free resources of
// snap cannot hold, naming the requirement that fails; others are the
// groups of clusters planned beside it in the same run. The cluster's own
// groups do not count as taken: a replacement frees them first.
func CheckLive(spec clusterspec.Spec, snap *planning.Snapshot, others []clusterspec.GroupRequest) []clusterspec.Issue {
	if err := planning.CheckSegments(spec, snap.TopologyFrom(spec.Topology)); err != nil && !spec.SelectNodes {
		summary := summarySegments
		var insufficient *topology.ResourceInsufficientError
		if !errors.As(err, &insufficient) {
			summary = summaryInvalidSegments
		}
		return []clusterspec.Issue{{Path: clusterspec.AttrSegmentSize, Summary: summary, Detail: err.Error()}}
	}
	if issues := planning.CheckSelectors(spec, planning.NodeLabels(snap.Nodes)); clusterspec.HasError(issues) {
		return issues
	}
	if why := planning.CheckTopologyStrategy(spec, snap); why != "" {
		return []clusterspec.Issue{{Path: clusterspec.AttrTopologyStrategy, Summary: SummaryCannotHold, Detail: why}}
	}
	return capacityIssues(spec, snap, others)
}

// capacityIssues is one issue for all capacity problems, with the node
// summary once: at 10,000 nodes each problem repeating the table was
// thousands of lines.
func capacityIssues(spec clusterspec.Spec, snap *planning.Snapshot, others []clusterspec.GroupRequest) []clusterspec.Issue {
	shortage, together := planning.CheckSnapshotCapacity(spec, snap, others)
	if len(shortage.Errors)+len(shortage.Warnings) == 0 {
		return nil
	}
	attribute := planning.ShortageAttribute(spec, snap.Capacity(nil))
	var issues []clusterspec.Issue
	if len(shortage.Errors) > 0 {
		summary, detail := SummaryCannotHold, shortage.Detail()
		if together {
			summary = SummaryCannotHoldTogether
			detail = "It fits alone, but not together with the other virtual clusters this configuration creates:\n" + detail
		}
		if holders := planning.HoldersReport(spec, snap); holders != "" {
			detail += "\n\n" + holders + "\n\n" + planning.ShortageNextStep(spec)
		}
		issues = append(issues, clusterspec.Issue{Path: attribute, Summary: summary, Detail: detail})
	}
	if len(shortage.Warnings) > 0 {
		issues = append(issues, clusterspec.Issue{Path: attribute, Summary: summaryMayNotSucceed, Warning: true,
			Detail: planning.Shortage{Errors: shortage.Warnings, Nodes: shortage.Nodes}.Detail()})
	}
	return issues
}
