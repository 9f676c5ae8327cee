package resources

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// The label limits go to the contract and come back from a note unchanged.
func TestLabelLimitsRoundTrip(t *testing.T) {
	want := []contract.LabelLimit{{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 2, "CPU": 8, "nvlink_domain_x": 0.5}},
		{Labels: map[string]string{"zone": "b", "type": "h100"}, Limits: map[string]float64{"GPU": 4}}}
	ctx, diags := t.Context(), diag.Diagnostics{}
	got := labelLimitsOf(ctx, labelLimitValues(ctx, want, &diags), &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("label limits changed on the way (-want +got):\n%s", diff)
	}
	if v := labelLimitValues(ctx, nil, &diags); !v.IsNull() {
		t.Errorf("no label limits: %v, want null", v)
	}
}

// Lowering is any limit that goes down or appears, in all or for a label
// limit (a new label limit too); raising or removing one is not.
func TestLowersQuota(t *testing.T) {
	rackA := func(gpus float64) contract.LabelLimit {
		return contract.LabelLimit{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": gpus}}
	}
	prev := &contract.QuotaCaps{Limits: map[string]float64{"GPU": 8}, LabelLimits: []contract.LabelLimit{rackA(2)}}
	for name, c := range map[string]struct {
		next *contract.QuotaCaps
		want bool
	}{
		"same":               {prev, false},
		"raised":             {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 9}, LabelLimits: []contract.LabelLimit{rackA(3)}}, false},
		"label limit gone":   {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 8}}, false},
		"lowered in all":     {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 7}, LabelLimits: []contract.LabelLimit{rackA(2)}}, true},
		"lowered on rack A":  {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 8}, LabelLimits: []contract.LabelLimit{rackA(1)}}, true},
		"a new label limit":  {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 8}, LabelLimits: []contract.LabelLimit{rackA(2), {Labels: map[string]string{"rack": "B"}, Limits: map[string]float64{"GPU": 4}}}}, true},
		"a new resource cap": {&contract.QuotaCaps{Limits: map[string]float64{"GPU": 8, "CPU": 4}, LabelLimits: []contract.LabelLimit{rackA(2)}}, true},
	} {
		if got := c.next.Lowers(prev); got != c.want {
			t.Errorf("%s: lowers = %v, want %v", name, got, c.want)
		}
	}
}

// Two node_label_limits of the same labels are refused, naming both.
func TestUniqueLabelsValidator(t *testing.T) {
	ctx := t.Context()
	var diags diag.Diagnostics
	rackA := contract.LabelLimit{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 2}}
	rackB := contract.LabelLimit{Labels: map[string]string{"rack": "B"}, Limits: map[string]float64{"GPU": 2}}
	for name, c := range map[string]struct {
		limits []contract.LabelLimit
		want   string
	}{
		"distinct":    {[]contract.LabelLimit{rackA, rackB}, ""},
		"same labels": {[]contract.LabelLimit{rackA, rackB, {Labels: rackA.Labels, Limits: map[string]float64{"GPU": 9}}}, "node_label_limits[2] names the same labels as node_label_limits[0]"},
	} {
		var resp validator.ListResponse
		uniqueLabels{}.ValidateList(ctx, validator.ListRequest{Path: path.Root("node_label_limits"), ConfigValue: labelLimitValues(ctx, c.limits, &diags)}, &resp)
		got := ""
		if resp.Diagnostics.HasError() {
			got = resp.Diagnostics.Errors()[0].Detail()
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}
