package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

func TestFunctionVllmEnginePortRange(t *testing.T) {
	functionTest(t,
		resource.TestStep{
			Config: outputConfig(map[string]string{
				"vllm_engine_0": "provider::ray::vllm_engine_port_range(0)",
				"vllm_engine_2": "provider::ray::vllm_engine_port_range(2)",
			}),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("vllm_engine_0", portRangeCheck(7000, 7100)),
				statecheck.ExpectKnownOutputValue("vllm_engine_2", knownvalue.ObjectExact(map[string]knownvalue.Check{
					"low": knownvalue.Int64Exact(7200), "high": knownvalue.Int64Exact(7300),
					"description": knownvalue.StringExact("vLLM engine rendezvous"),
				})),
			},
		},
		errorStep("provider::ray::vllm_engine_port_range(501)", `engine_index must be between 0 and 500`),
	)
}
