package contract

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestQuotaRequestsValidate(t *testing.T) {
	for name, r := range map[string]Request{
		"write":  QuotaWriteRequest("team", "owner", &QuotaCaps{Limits: map[string]float64{"GPU": 8}}, false),
		"delete": QuotaWriteRequest("team", "owner", nil, false),
		"usage":  QuotaUsageRequest("team"),
	} {
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if QuotaUsageRequest("team").Writes() || !QuotaWriteRequest("team", "o", nil, false).Writes() {
		t.Error("a usage read must not write and a quota write must")
	}
	if err := QuotaWriteRequest("team", "", nil, false).Validate(); err == nil {
		t.Error("a quota write without an owner validated")
	}
}

// What is over a quota is named with the total and the limit; amounts
// within Ray's resource unit of a limit are not over it.
func TestQuotaOver(t *testing.T) {
	used := []QuotaHolder{{Cluster: "team/a", Owner: "1a2b3c4d", Resources: topology.Resources{"GPU": 2, "CPU": 2}},
		{Cluster: "team/x", Outside: true, Resources: topology.Resources{"GPU": 1}}}
	over := QuotaOver(map[string]float64{"GPU": 4, "CPU": 16}, used, topology.Resources{"GPU": 2})
	if len(over) != 1 || over[0] != "GPU 5 of 4" {
		t.Errorf("over = %v", over)
	}
	if over := QuotaOver(map[string]float64{"GPU": 3.00001}, used, nil); len(over) != 0 {
		t.Errorf("within the unit: %v", over)
	}
	got := DescribeQuotaHolders(append(used, QuotaHolder{Cluster: "team/b", Planned: true, Resources: topology.Resources{"GPU": 1}}))
	for _, want := range []string{"team/a (owner 1a2b3c4d…): {CPU: 2, GPU: 2}", "team/x (not a virtual cluster): {GPU: 1}", "team/b (planned beside it)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// A label limit counts only the nodes that carry all its labels, for what
// holders hold and what a create asks there.
func TestLabelUses(t *testing.T) {
	limits := []LabelLimit{{Labels: map[string]string{"rack": "A", "gpu": "h100"}, Limits: map[string]float64{"GPU": 2}}}
	labels := map[string]map[string]string{
		"n1": {"rack": "A", "gpu": "h100"}, "n2": {"rack": "A"}, "n3": {"rack": "B", "gpu": "h100"},
	}
	holders := []QuotaHolder{{Cluster: "team/a", Nodes: map[string]topology.Resources{"n1": {"GPU": 1}, "n2": {"GPU": 4}}},
		{Cluster: "team/x", Outside: true, Nodes: map[string]topology.Resources{"n3": {"GPU": 4}}}}
	uses := LabelUses(limits, holders, labels, map[string]topology.Resources{"n1": {"GPU": 2}, "n3": {"GPU": 1}})
	if len(uses) != 1 || uses[0].Used["GPU"] != 1 || uses[0].Ask["GPU"] != 2 {
		t.Fatalf("uses = %+v", uses)
	}
	if over := uses[0].Over(); len(over) != 1 || over[0] != "GPU 3 of 2 on nodes labelled gpu=h100, rack=A" {
		t.Errorf("over = %v", over)
	}
	if over := (LabelUse{Labels: limits[0].Labels, Limits: limits[0].Limits, Used: topology.Resources{"GPU": 9}}).Over(); len(over) != 0 {
		t.Errorf("over without an ask there: %v", over)
	}
	caps := QuotaCaps{Limits: map[string]float64{"GPU": 100}, LabelLimits: limits}
	if over := caps.OverHeld([]QuotaHolder{{Nodes: map[string]topology.Resources{"n1": {"GPU": 3}}}}, labels); len(over) != 1 ||
		over[0] != "GPU 3 of 2 on nodes labelled gpu=h100, rack=A" {
		t.Errorf("a label limit lowered below use: %v", over)
	}
	if use := (LabelUse{Labels: limits[0].Labels, Limits: limits[0].Limits, Used: uses[0].Used}).Use(); len(use) != 1 || use[0] != "GPU 1 of 2 on nodes labelled gpu=h100, rack=A" {
		t.Errorf("use = %v", use)
	}
}

// A create refused by a label limit is told with the limit and the total
// on its nodes.
func TestQuotaExceededByLabelLimitDescribed(t *testing.T) {
	e := ResultError{Kind: KindConflict, Code: CodeQuotaExceeded, Facts: ErrorFacts{Namespace: "team", Cluster: "team/b",
		Limits: map[string]float64{"GPU": 8}, Ask: map[string]float64{"GPU": 1},
		QuotaHolders: []QuotaHolder{{Cluster: "team/a", Owner: "1a2b3c4d", Resources: topology.Resources{"GPU": 2}}},
		LabelUse: []LabelUse{{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 2},
			Used: topology.Resources{"GPU": 2}, Ask: topology.Resources{"GPU": 1}}}}}
	got := e.Describe(nil)
	for _, want := range []string{"has quota {GPU: 8}, {GPU: 2} on nodes labelled rack=A", "team/b asks {GPU: 1}: GPU 3 of 2 on nodes labelled rack=A"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
