package driver

import (
	"context"
	"maps"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// A quota note carries the limits and label limits; a note without label
// limits (an older version's) reads with none.
func TestQuotaNoteRoundTrip(t *testing.T) {
	ctx := context.Background()
	api := newFake(nil)
	caps := contract.QuotaCaps{Limits: map[string]float64{"GPU": 8},
		LabelLimits: []contract.LabelLimit{{Labels: map[string]string{"rack": "A"}, Limits: map[string]float64{"GPU": 2}}}}
	if err := RecordQuotaNote(ctx, api, QuotaNote{Namespace: "team", Owner: "o", QuotaCaps: caps}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadQuotaNote(ctx, api, "team")
	if err != nil || got == nil || got.Limits["GPU"] != 8 || len(got.LabelLimits) != 1 ||
		!maps.Equal(got.LabelLimits[0].Labels, caps.LabelLimits[0].Labels) || got.LabelLimits[0].Limits["GPU"] != 2 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	delete(api.jobs[QuotaNoteID("team")].details.Metadata, metaQuotaLabelLimits)
	if got, err := ReadQuotaNote(ctx, api, "team"); err != nil || got == nil || got.LabelLimits != nil {
		t.Fatalf("a note without label limits: %+v, %v", got, err)
	}
}
