package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// vllmEnginePortRangeFunction is provider::ray::vllm_engine_port_range: the port band of
// one vLLM engine.
type vllmEnginePortRangeFunction struct{}

func (vllmEnginePortRangeFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "vllm_engine_port_range"
}

func (vllmEnginePortRangeFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary:             "The vLLM rendezvous port block of one engine.",
		MarkdownDescription: "`[7000 + i*100, 7000 + (i+1)*100)`: the ports the reference gives vLLM engine `i`.",
		Parameters:          []function.Parameter{function.Int64Parameter{Name: "engine_index", Description: "Engine index, from 0."}},
		Return:              function.ObjectReturn{AttributeTypes: portRangeAttrs},
	}
}

func (vllmEnginePortRangeFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var i int64
	resp.Error = req.Arguments.Get(ctx, &i)
	if resp.Error != nil {
		return
	}
	if i < 0 || i > 500 {
		resp.Error = function.NewArgumentFuncError(0, "engine_index must be between 0 and 500")
		return
	}
	r := topology.VLLMEnginePortRange(int(i))
	if err := r.Validate(); err != nil {
		resp.Error = function.NewArgumentFuncError(0, err.Error())
		return
	}
	resp.Error = resp.Result.Set(ctx, portRangeValue(r, "vLLM engine rendezvous"))
}
