package resources

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

// The limit arguments (gpus, cpus, resources) of a quota and of each of
// its node_label_limits, of whose groups' use "whose" words.

func gpusAttribute(whose string) schema.Float64Attribute {
	return schema.Float64Attribute{
		MarkdownDescription: "The most GPUs (Ray's `GPU` resource) " + whose + " may hold.",
		Optional:            true, Validators: []validator.Float64{float64validator.AtLeast(0)},
	}
}

func cpusAttribute(whose string) schema.Float64Attribute {
	return schema.Float64Attribute{
		MarkdownDescription: "The most CPUs (Ray's `CPU` resource) " + whose + " may hold.",
		Optional:            true, Validators: []validator.Float64{float64validator.AtLeast(0)},
	}
}

func resourcesAttribute(whose string) schema.MapAttribute {
	return schema.MapAttribute{
		MarkdownDescription: "The most of each custom resource " + whose + " may hold, by Ray resource name " +
			"(e.g. `{ nvlink_domain_rackA = 0.004 }`).",
		ElementType: types.Float64Type,
		Optional:    true,
		Validators: []validator.Map{mapvalidator.SizeAtLeast(1), mapvalidator.ValueFloat64sAre(float64validator.AtLeast(0)),
			mapvalidator.KeysAre(notGPUOrCPU{})},
	}
}

func nodeLabelLimitsAttribute() schema.ListNestedAttribute {
	whose := "the namespace's groups, on these nodes,"
	return schema.ListNestedAttribute{
		MarkdownDescription: "Caps on what the namespace's groups hold on the nodes that carry given Ray node labels " +
			"(e.g. one accelerator type, rack or zone), each beside the caps in all. A cluster whose nodes the plan " +
			"chooses (`select_nodes`) is checked at plan; every create is checked at apply, under the reservation lock: a " +
			"cluster Ray places once Ray has placed its groups, and a create over a label limit then fails and removes " +
			"the groups it made.",
		Optional:   true,
		Validators: []validator.List{listvalidator.SizeAtLeast(1), uniqueLabels{}},
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"labels": schema.MapAttribute{
					MarkdownDescription: "The node labels (all of them) of the nodes this limit caps, e.g. " +
						"`{ \"ray.io/accelerator-type\" = \"H100\" }`.",
					ElementType: types.StringType,
					Required:    true,
					Validators:  []validator.Map{mapvalidator.SizeAtLeast(1)},
				},
				"gpus":      gpusAttribute(whose),
				"cpus":      cpusAttribute(whose),
				"resources": resourcesAttribute(whose),
			},
			Validators: []validator.Object{objectvalidator.AtLeastOneOf(path.MatchRelative().AtName("gpus"),
				path.MatchRelative().AtName("cpus"), path.MatchRelative().AtName("resources"))},
		},
	}
}

// uniqueLabels refuses two node_label_limits of the same labels: which of
// their limits holds would be unclear.
type uniqueLabels struct{}

func (uniqueLabels) Description(context.Context) string {
	return "each entry names labels no other entry names"
}
func (v uniqueLabels) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }
func (uniqueLabels) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	var seen []attr.Value
	var at []int // seen[k] is element at[k]'s labels
	for i, e := range req.ConfigValue.Elements() {
		obj, ok := e.(types.Object)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		labels := obj.Attributes()["labels"]
		if labels == nil || labels.IsUnknown() {
			continue
		}
		if j := slices.IndexFunc(seen, labels.Equal); j >= 0 {
			resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(i), "Duplicate node label limit",
				fmt.Sprintf("node_label_limits[%d] names the same labels as node_label_limits[%d]; give each set of labels one entry.", i, at[j]))
			return
		}
		seen, at = append(seen, labels), append(at, i)
	}
}

type labelLimitModel struct {
	Labels    types.Map     `tfsdk:"labels"`
	GPUs      types.Float64 `tfsdk:"gpus"`
	CPUs      types.Float64 `tfsdk:"cpus"`
	Resources types.Map     `tfsdk:"resources"`
}

var labelLimitType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"labels": types.MapType{ElemType: types.StringType}, "gpus": types.Float64Type, "cpus": types.Float64Type,
	"resources": types.MapType{ElemType: types.Float64Type},
}}

// limitsOf is the limits of gpus, cpus and resources by Ray resource name.
func limitsOf(ctx context.Context, gpus, cpus types.Float64, resources types.Map, diags *diag.Diagnostics) map[string]float64 {
	out := map[string]float64{}
	if !resources.IsNull() && !resources.IsUnknown() {
		diags.Append(resources.ElementsAs(ctx, &out, false)...)
	}
	if !gpus.IsNull() {
		out[resourceGPU] = gpus.ValueFloat64()
	}
	if !cpus.IsNull() {
		out[resourceCPU] = cpus.ValueFloat64()
	}
	return out
}

// limitValues is limitsOf's inverse.
func limitValues(ctx context.Context, limits map[string]float64, diags *diag.Diagnostics) (gpus, cpus types.Float64, resources types.Map) {
	gpus, cpus, resources = types.Float64Null(), types.Float64Null(), types.MapNull(types.Float64Type)
	custom := map[string]float64{}
	for k, v := range limits {
		switch k {
		case resourceGPU:
			gpus = types.Float64Value(v)
		case resourceCPU:
			cpus = types.Float64Value(v)
		default:
			custom[k] = v
		}
	}
	if len(custom) > 0 {
		var d diag.Diagnostics
		resources, d = types.MapValueFrom(ctx, types.Float64Type, custom)
		diags.Append(d...)
	}
	return gpus, cpus, resources
}

// labelLimitsOf is node_label_limits as the contract sends them (nil: none).
func labelLimitsOf(ctx context.Context, list types.List, diags *diag.Diagnostics) []contract.LabelLimit {
	if list.IsNull() || list.IsUnknown() {
		return nil
	}
	var models []labelLimitModel
	if diags.Append(list.ElementsAs(ctx, &models, false)...); diags.HasError() {
		return nil
	}
	out := make([]contract.LabelLimit, 0, len(models))
	for _, m := range models {
		l := contract.LabelLimit{Labels: map[string]string{}, Limits: limitsOf(ctx, m.GPUs, m.CPUs, m.Resources, diags)}
		diags.Append(m.Labels.ElementsAs(ctx, &l.Labels, false)...)
		out = append(out, l)
	}
	return out
}

// labelLimitValues is labelLimitsOf's inverse.
func labelLimitValues(ctx context.Context, limits []contract.LabelLimit, diags *diag.Diagnostics) types.List {
	if len(limits) == 0 {
		return types.ListNull(labelLimitType)
	}
	models := make([]labelLimitModel, len(limits))
	for i, l := range limits {
		var d diag.Diagnostics
		models[i].Labels, d = types.MapValueFrom(ctx, types.StringType, l.Labels)
		diags.Append(d...)
		models[i].GPUs, models[i].CPUs, models[i].Resources = limitValues(ctx, l.Limits, diags)
	}
	out, d := types.ListValueFrom(ctx, labelLimitType, models)
	diags.Append(d...)
	return out
}
