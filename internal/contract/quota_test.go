package contract

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestQuotaRequestsValidate(t *testing.T) {
	for name, r := range map[string]Request{
		"write":  QuotaWriteRequest("team", "owner", map[string]float64{"GPU": 8}, false),
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
