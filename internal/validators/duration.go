// Package validators holds attribute validators shared by the provider and its
// resources.
package validators

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// DurationValidator accepts positive Go durations such as "250ms", "5s" or "3m".
type DurationValidator struct{}

var _ validator.String = DurationValidator{}

func (DurationValidator) Description(context.Context) string {
	return "must be a positive Go duration such as 250ms, 5s or 3m"
}

func (v DurationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v DurationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s = %q: %s.", req.Path, req.ConfigValue.ValueString(), v.Description(ctx)))
	}
}
