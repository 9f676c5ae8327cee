package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// portRangeCheck matches a {low, high, description} band by its bounds.
func portRangeCheck(low, high int64) knownvalue.Check {
	return knownvalue.ObjectPartial(map[string]knownvalue.Check{"low": knownvalue.Int64Exact(low), "high": knownvalue.Int64Exact(high)})
}

func TestFunctionPortRanges(t *testing.T) {
	functionTest(t, resource.TestStep{
		Config: outputConfig(map[string]string{"defaults": "provider::ray::port_ranges()"}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("defaults", knownvalue.ObjectPartial(map[string]knownvalue.Check{
				"master":                portRangeCheck(1400, 1999),
				"dynamo_control":        portRangeCheck(1313, 1400),
				"sglang_prometheus":     portRangeCheck(8800, 8999),
				"vllm_ports_per_engine": knownvalue.Int64Exact(100),
			})),
		},
	})
}
