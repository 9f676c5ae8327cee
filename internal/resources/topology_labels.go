package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// topology_labels is the same object on the provider, the data source and
// the resource; the one given on a data source or resource replaces the
// provider's as a whole.

// topologyLabelsModel is a topology_labels object.
type topologyLabelsModel struct {
	NVLinkDomain types.String `tfsdk:"nvlink_domain"`
	TopoRank     types.String `tfsdk:"topo_rank"`
}

var topologyLabelsType = types.ObjectType{AttrTypes: map[string]attr.Type{
	clusterspec.AttrTopologyLabelDomain: types.StringType, clusterspec.AttrTopologyLabelRank: types.StringType,
}}

var (
	topologyLabelsDoc = "Read each node's NVLink domain and topo rank from node labels (`ray start --labels`, " +
		"Ray 2.55.1 and later) instead of the reference's `" + topology.NVLinkDomainPrefix + "<X>` and `" +
		topology.TopoRankKey + "` custom resources. Each key is optional: an unset key keeps the resource for " +
		"that field. A label domain is named by the label's value (e.g. `rackA`); a node without the label, or " +
		"with an empty value, is in domain `" + topology.NVLinkDomainUnknown + "`. A rank label must be plain " +
		"decimal digits; a node without it, or with any other value (signs, spaces, decimals), has rank `-1`. " +
		"Selection, ordering and the sentinels then work exactly as with the resources."
	topologyLabelsDomainDoc = "Node label key whose value names the node's NVLink domain, e.g. `raytf.io/nvlink-domain`."
	topologyLabelsRankDoc   = "Node label key holding the node's topological rank, e.g. `raytf.io/topo-rank`."
	topologyLabelsOverride  = " When set, it replaces the provider's `" + clusterspec.AttrTopologyLabels + "` as a whole; " +
		"unset, the provider's applies (default: the resources)."
)

// Descriptions of the per-node domain and rank outputs.
const (
	domainOutputDoc = "NVLink domain: the `" + topology.NVLinkDomainPrefix + "<X>` resource key, or the domain label's " +
		"value with `topology_labels.nvlink_domain`; `" + topology.NVLinkDomainUnknown + "` when absent."
	rankOutputDoc = "Topological rank: the `" + topology.TopoRankKey + "` resource, or the rank label with " +
		"`topology_labels.topo_rank`; `-1` when absent or not plain digits."
)

// labelKeyValidator checks a label key with the contract's rule.
type labelKeyValidator struct{}

func (labelKeyValidator) Description(context.Context) string {
	return "must be a Ray node label key such as raytf.io/nvlink-domain"
}

func (v labelKeyValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (labelKeyValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := clusterspec.ValidateLabelKey(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid node label key", fmt.Sprintf("%s: %v.", req.Path, err))
	}
}

func labelKeyValidators() []validator.String {
	return []validator.String{stringvalidator.LengthAtLeast(1), labelKeyValidator{}}
}

// TopologyLabelsProviderAttribute is the provider's topology_labels.
func TopologyLabelsProviderAttribute() pschema.SingleNestedAttribute {
	return pschema.SingleNestedAttribute{
		MarkdownDescription: topologyLabelsDoc + " The default for every `ray_cluster_topology` and `ray_virtual_cluster`; " +
			"each can set its own.",
		Optional: true,
		Attributes: map[string]pschema.Attribute{
			clusterspec.AttrTopologyLabelDomain: pschema.StringAttribute{MarkdownDescription: topologyLabelsDomainDoc, Optional: true, Validators: labelKeyValidators()},
			clusterspec.AttrTopologyLabelRank:   pschema.StringAttribute{MarkdownDescription: topologyLabelsRankDoc, Optional: true, Validators: labelKeyValidators()},
		},
	}
}

func topologyLabelsDataSourceAttribute() dschema.SingleNestedAttribute {
	return dschema.SingleNestedAttribute{
		MarkdownDescription: topologyLabelsDoc + topologyLabelsOverride + " Ray versions that do not report node labels are an error.",
		Optional:            true,
		Attributes: map[string]dschema.Attribute{
			clusterspec.AttrTopologyLabelDomain: dschema.StringAttribute{MarkdownDescription: topologyLabelsDomainDoc, Optional: true, Validators: labelKeyValidators()},
			clusterspec.AttrTopologyLabelRank:   dschema.StringAttribute{MarkdownDescription: topologyLabelsRankDoc, Optional: true, Validators: labelKeyValidators()},
		},
	}
}

// topologyLabelsResourceAttribute is computed too: state holds the source in
// effect (the resource's own, else the provider's), so that a change of
// either replaces the cluster (its nodes, pins and reported domains were
// chosen by it). The keys are checked by clusterspec.Spec.Validate.
func topologyLabelsResourceAttribute() rschema.SingleNestedAttribute {
	return rschema.SingleNestedAttribute{
		MarkdownDescription: topologyLabelsDoc + topologyLabelsOverride + " It applies to plan-time checks, " +
			"`select_nodes`, `pinning = \"domain\"` (which then pins with the bundle label selector " +
			"`{<domain label> = <domain>}` instead of the domain resource) and the `nvlink_domain` / `topo_rank` " +
			"every bundle reports. State holds the source in effect; a change replaces the cluster.",
		Optional: true,
		Computed: true,
		Attributes: map[string]rschema.Attribute{
			clusterspec.AttrTopologyLabelDomain: rschema.StringAttribute{MarkdownDescription: topologyLabelsDomainDoc, Optional: true},
			clusterspec.AttrTopologyLabelRank:   rschema.StringAttribute{MarkdownDescription: topologyLabelsRankDoc, Optional: true},
		},
	}
}

// TopologyLabelsFromObject reads a topology_labels object; nil (the
// resources) when null, unknown or without any key.
func TopologyLabelsFromObject(ctx context.Context, o types.Object) (*clusterspec.TopologySource, diag.Diagnostics) {
	if o.IsNull() || o.IsUnknown() {
		return nil, nil
	}
	var m topologyLabelsModel
	diags := o.As(ctx, &m, basetypes.ObjectAsOptions{})
	if diags.HasError() {
		return nil, diags
	}
	src := &clusterspec.TopologySource{DomainLabel: m.NVLinkDomain.ValueString(), RankLabel: m.TopoRank.ValueString()}
	if !src.UsesLabels() {
		return nil, diags // {} is the resources, like null
	}
	return src, diags
}

// topologyLabelsObject is the object form of src; null for nil.
func topologyLabelsObject(src *clusterspec.TopologySource) types.Object {
	if src == nil {
		return types.ObjectNull(topologyLabelsType.AttrTypes)
	}
	str := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	o, _ := types.ObjectValue(topologyLabelsType.AttrTypes, map[string]attr.Value{
		clusterspec.AttrTopologyLabelDomain: str(src.DomainLabel), clusterspec.AttrTopologyLabelRank: str(src.RankLabel),
	})
	return o
}

// topologySourceFor is the source in effect for an override (a data source's
// or resource's topology_labels): the override when set, else the provider's.
func topologySourceFor(ctx context.Context, d *session.Session, override types.Object) (*clusterspec.TopologySource, diag.Diagnostics) {
	if !override.IsNull() && !override.IsUnknown() {
		return TopologyLabelsFromObject(ctx, override)
	}
	if d == nil {
		return nil, nil
	}
	return d.TopologyLabels, nil
}
