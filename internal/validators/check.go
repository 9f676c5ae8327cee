package validators

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// StringCheck runs a rule that lives elsewhere (e.g. topology.CheckStrategy)
// on a known string value, so the schema states no copy of it. Summary
// should be the one the same rule reports under at plan, so that Terraform
// shows the error once.
type StringCheck struct {
	Summary string
	Check   func(string) error
	// Describe says what the value must be, for the schema's description.
	Describe string
}

var _ validator.String = StringCheck{}

func (v StringCheck) Description(context.Context) string { return v.Describe }

func (v StringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v StringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := v.Check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, v.Summary, req.Path.String()+" "+err.Error())
	}
}
