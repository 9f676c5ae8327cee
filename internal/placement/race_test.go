package placement

import (
	"strings"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// The error of a cluster that lost the race and finds nothing else names
// each holder once, why the other nodes cannot hold it, that it queued
// (capacity_check = "total"), and the next step.
func TestLostRaceDetail(t *testing.T) {
	claimed := map[string][]contract.NodeHolder{
		"n1": {{NodeID: "n1", Cluster: "ns/first", Owner: "0123456789abcdef-whole-token", Groups: []string{"first-node0"}}},
		"n2": {{NodeID: "n2", Cluster: "ns/first", Owner: "0123456789abcdef-whole-token", Groups: []string{"first-node0"}}},
		"n3": {{NodeID: "n3"}},
		"n4": {{NodeID: "n4", Groups: []string{"legacy-node0"}}},
	}
	choice := []clusterspec.Issue{{Summary: "Cannot select nodes", Detail: "cannot form 1 complete segments"}}
	free := clusterspec.Spec{Name: "late", ReadyTimeout: time.Minute}
	got := lostRaceDetail(free, claimed, choice)
	for _, want := range []string{`cluster "first" in namespace ns (the state with owner_id ` + record.OwnerPrefix("0123456789abcdef-whole-token") + `…; groups "first-node0") holds node(s) n1, n2`,
		`placement group(s) "legacy-node0", which no reservation names, hold node(s) n4`,
		"The nodes left cannot hold it: cannot form 1 complete segments", `Nothing of "late" was created`, `capacity_check = "total"`} {
		if !strings.Contains(got, want) {
			t.Errorf("detail lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "whole-token") {
		t.Errorf("the detail shows another state's whole owner_id:\n%s", got)
	}
	if strings.Contains(got, "queued") {
		t.Errorf("a free-mode cluster did not queue:\n%s", got)
	}
	queued := free
	queued.CapacityCheck = clusterspec.CapacityTotal
	if got := lostRaceDetail(queued, claimed, choice); !strings.Contains(got, "queued for those nodes until ready_timeout (1m0s)") {
		t.Errorf("a total-mode cluster's detail does not say it queued:\n%s", got)
	}
}
