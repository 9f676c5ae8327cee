// Package validators holds attribute validators shared by the provider and its
// resources.
package validators

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// DurationValidator rejects zero and negative durations on a
// timetypes.GoDuration attribute, whose type already rejects what does not
// parse (so a mistake gives one error, not two).
type DurationValidator struct{}

var _ validator.String = DurationValidator{}

func (DurationValidator) Description(context.Context) string {
	return DurationRule
}

func (v DurationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v DurationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err == nil && d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s = %q: %s.", req.Path, req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}

// DurationRule is what a duration attribute must be, for messages.
const DurationRule = "must be a positive Go duration such as 250ms, 5s or 3m"

// PositiveDuration parses a Go duration and rejects zero and negative ones.
func PositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s is not positive", s)
	}
	return d, nil
}
