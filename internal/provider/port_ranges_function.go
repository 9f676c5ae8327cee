package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// portRangesFunction is provider::ray::port_ranges(): NeMo-RL's default port bands.
type portRangesFunction struct{}

func (portRangesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "port_ranges"
}

func (portRangesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	ranges := map[string]attr.Type{}
	for _, r := range topology.DefaultPortRanges() {
		ranges[r.Name] = types.ObjectType{AttrTypes: portRangeAttrs}
	}
	ranges["vllm_ports_per_engine"] = types.Int64Type
	resp.Definition = function.Definition{
		Summary: "The reference's default port ranges.",
		MarkdownDescription: "The default port layout of the reference, half-open `[low, high)`, kept below the " +
			"OS ephemeral range, as NeMo-RL's `nemo_rl/distributed/virtual_cluster.py` defines it at commit `" +
			topology.ReferenceRevision[:12] + "`: " + describePortRanges() + " (`vllm_ports_per_engine` = " +
			fmt.Sprint(topology.DefaultVLLMPortsPerEngine) + " per engine). " + describeNestedRanges() +
			" Use them to carve non-overlapping ranges for several clusters on the same nodes.",
		Return: function.ObjectReturn{AttributeTypes: ranges},
	}
}

func (portRangesFunction) Run(ctx context.Context, _ function.RunRequest, resp *function.RunResponse) {
	attrs := map[string]attr.Type{}
	values := map[string]attr.Value{}
	for _, r := range topology.DefaultPortRanges() {
		attrs[r.Name] = types.ObjectType{AttrTypes: portRangeAttrs}
		values[r.Name] = portRangeValue(r.Range, r.Description)
	}
	attrs["vllm_ports_per_engine"] = types.Int64Type
	values["vllm_ports_per_engine"] = types.Int64Value(topology.DefaultVLLMPortsPerEngine)
	obj, _ := types.ObjectValue(attrs, values)
	resp.Error = resp.Result.Set(ctx, obj)
}

func portRangeValue(r topology.PortRange, description string) attr.Value {
	v, _ := types.ObjectValue(portRangeAttrs, map[string]attr.Value{
		"low": types.Int64Value(int64(r.Low)), "high": types.Int64Value(int64(r.High)),
		"description": types.StringValue(description),
	})
	return v
}

// describePortRanges renders the default bands as "`master` (1400-1999), ...".
func describePortRanges() string {
	ranges := topology.DefaultPortRanges()
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("`%s` (%d-%d)", r.Name, r.Range.Low, r.Range.High)
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// describeNestedRanges says which bands are carved out of another one.
func describeNestedRanges() string {
	byParent := map[string][]string{}
	var parents []string
	for _, r := range topology.DefaultPortRanges() {
		if r.Within == "" {
			continue
		}
		if byParent[r.Within] == nil {
			parents = append(parents, r.Within)
		}
		byParent[r.Within] = append(byParent[r.Within], "`"+r.Name+"`")
	}
	parts := make([]string, len(parents))
	for i, p := range parents {
		parts[i] = strings.Join(byParent[p], " and ") + " lie inside `" + p + "`"
	}
	return strings.Join(parts, "; ") + " (the reference runs one generation backend at a time)."
}
