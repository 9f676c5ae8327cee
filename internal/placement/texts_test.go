package placement

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/planning"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// sentenceEnd splits a message into sentences and the clauses of a list of
// next steps (joined by "; ").
var sentenceEnd = regexp.MustCompile(`[.;!?:]\s+|\n\s*\n`)

// repeatedSentences returns the sentences msg says more than once. Short
// ones ("then apply again") may recur in different steps; a whole
// step of 30 characters or more may not.
func repeatedSentences(msg string) []string {
	seen := map[string]int{}
	var out []string
	for _, s := range sentenceEnd.Split(msg, -1) {
		s = strings.Join(strings.Fields(strings.TrimRight(s, ".;!?: ")), " ")
		if len(s) < 30 {
			continue
		}
		if seen[s]++; seen[s] == 2 {
			out = append(out, s)
		}
	}
	return out
}

func checkOnce(t *testing.T, what, msg string) {
	t.Helper()
	if r := repeatedSentences(msg); len(r) > 0 {
		t.Errorf("%s says %q more than once:\n%s", what, r, msg)
	}
}

// The checker itself: a repeated step is caught wherever it recurs.
func TestRepeatedSentences(t *testing.T) {
	step := planning.ShortageNextStep(clusterspectest.SelectingSpec(1))
	if r := repeatedSentences("Held by x.\n\n" + step + "\n\nNothing of \"vc\" was created. " + step); len(r) == 0 {
		t.Errorf("a repeated next step not caught")
	}
	if r := repeatedSentences("Check the head node's health, then apply again. Widen the range, then apply again."); len(r) != 0 {
		t.Errorf("short shared clauses caught: %q", r)
	}
}

// allFacts sets every fact some driver code words.
func allFacts() contract.ErrorFacts {
	other := &record.OtherOwner{Owner: "0123456789abcdef-token", CreatedAt: "2026-12-07T17:55:00Z", HasRecord: true}
	holder := contract.NodeHolder{NodeID: "n1", Cluster: "ns/first", Owner: "0123456789abcdef-token", Groups: []string{"first-node0"}}
	diff := contract.GroupDifference{Field: "strategy", Have: json.RawMessage(`"PACK"`), Want: json.RawMessage(`"SPREAD"`)}
	return contract.ErrorFacts{
		Field: "bundles", Want: "list", Detail: "boom", Type: "KeyboardInterrupt", Version: 9, Reads: 3,
		Cluster: "vc", Namespace: "ns", Key: "raytf/ns/vc", Other: other, Group: "vc-node0",
		Differences: []contract.GroupDifference{diff}, Groups: []contract.GroupConflict{{Group: "vc-node0", Differences: []contract.GroupDifference{diff}}},
		Late: 1, Total: 2, Seconds: 60, Tasks: 2, Low: 20000, High: 20010, Tries: 3, Rounds: 2, Status: 503,
		Holders: []contract.NodeHolder{holder}, Claimed: []contract.NodeHolder{holder}, Signal: 15,
		Limits: map[string]float64{"GPU": 4}, Ask: map[string]float64{"GPU": 8}, Owner: "0123456789ab",
	}
}

var allCodes = []string{
	contract.CodeNoRequest, contract.CodeUndecodable, contract.CodeRequestField, contract.CodeRequestVersion,
	contract.CodeGroupsExist, contract.CodeGroupsDiffer, contract.CodeTakenOver, contract.CodeRecordTaken,
	contract.CodeReplacedDuringWait, contract.CodeCreatedConcurrently, contract.CodeNodesClaimed,
	contract.CodeQuotaExceeded, contract.CodeQuotaTaken, contract.CodeNotReady, contract.CodeNotRemoved,
	contract.CodeProbeTimeout, contract.CodeProbeFailed, contract.CodeNoFreePort, contract.CodeGCSStatus,
	contract.CodeStopped, contract.CodeInterrupted, contract.CodeException,
}

// Every driver failure, as the create's error composes it (the driver's
// wording, what Ray could not place, what was left, the fix), says each
// sentence once, for a conflict and for any other kind.
func TestCreateErrorTextsSayEachStepOnce(t *testing.T) {
	spec := clusterspectest.SelectingSpec(4)
	for _, code := range allCodes {
		for _, kind := range []string{contract.KindConflict, contract.KindInternal, contract.KindTimeout} {
			res := &contract.Result{Error: &contract.ResultError{Kind: kind, Code: code, Facts: allFacts()}, Removed: []string{"vc-node0"}}
			res.WordError()
			err := res.Err()
			checkOnce(t, code+" ("+kind+") error", err.Error()+"\n\n"+contract.Fix(err))
			checkOnce(t, code+" ("+kind+") create detail", CreateErrorDetail(spec, res, err))
		}
	}
}

// heldSnapshot is clusterspectest.Topo with 4 GPUs a node, each node but
// the head fully held by another cluster's group.
func heldSnapshot() *planning.Snapshot {
	snap := &planning.Snapshot{Nodes: clusterspectest.GPUNodes()}
	for _, n := range clusterspectest.Topo {
		if n.Domain != topology.NVLinkDomainUnknown {
			snap.Groups = append(snap.Groups, raystate.PlacementGroup{Name: "first-" + n.ID, State: raystate.PlacementGroupStateCreated,
				Bundles: []raystate.Bundle{{NodeID: n.ID, UnitResources: map[string]float64{"CPU": 1, "GPU": 4}}}})
		}
	}
	return snap
}

// A cluster that lost the race, with the choice's own refusal (which ends
// with the next step), says the next step once, after "Nothing of ... was
// created"; and so does the plan's capacity refusal.
func TestLostRaceSaysNextStepOnce(t *testing.T) {
	claimed := map[string][]contract.NodeHolder{"a1": {{NodeID: "a1", Cluster: "ns/first", Groups: []string{"first-a1"}}}}
	for _, mode := range []string{clusterspec.CapacityFree, clusterspec.CapacityTotal} {
		spec := clusterspectest.SelectingSpec(4)
		spec.CapacityCheck, spec.ReadyTimeout = mode, time.Minute
		_, _, choice := planning.ChooseFreeNodes(spec, heldSnapshot(), nil, nil)
		if mode == clusterspec.CapacityTotal { // totals fit: the refusal is of the claims, worded alike
			choice = []clusterspec.Issue{{Path: clusterspec.AttrSelectNodes, Summary: "Cannot select nodes",
				Detail: "cannot form 1 complete segments\n\n" + planning.ShortageNextStep(spec)}}
		}
		if !clusterspec.HasError(choice) {
			t.Fatalf("%s: every node is held, yet a choice fits", mode)
		}
		got := lostRaceDetail(spec, claimed, choice)
		checkOnce(t, "lost race ("+mode+")", got)
		step := planning.ShortageNextStep(spec)
		if strings.Count(got, step) != 1 || !strings.HasSuffix(got, "was created. "+step) {
			t.Errorf("%s: the next step is not said once, last:\n%s", mode, got)
		}
		for _, is := range capacityIssues(spec, heldSnapshot(), nil) {
			checkOnce(t, "capacity refusal ("+mode+")", is.Detail)
		}
	}
}
