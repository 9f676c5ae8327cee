package resources

import (
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// The label limits go to the contract and come back from a note unchanged.
func TestLabelLimitsRoundTrip(t *testing.T) {
	want := []contract.LabelLimit{{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 2, "CPU": 8, "nvlink_domain_x": 0.5}},
		{Labels: map[string]string{"zone": "b", "type": "h100"}, Limits: map[string]float64{"GPU": 4}}}
	ctx, diags := t.Context(), diag.Diagnostics{}
	got := labelLimitsOf(ctx, labelLimitValues(ctx, want, &diags), &diags)
	if diags.HasError() || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v), want %+v", got, diags, want)
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
		if got := lowers(c.next, prev); got != c.want {
			t.Errorf("%s: lowers = %v, want %v", name, got, c.want)
		}
	}
}
