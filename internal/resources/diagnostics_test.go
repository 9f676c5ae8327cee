package resources_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/provider"
)

// validateCluster runs the provider's ValidateResourceConfig in-process, as the
// CLI does at validate and plan, on a ray_virtual_cluster whose attributes are
// set (others null), and returns every diagnostic: schema validators and the
// resource's own checks together.
func validateCluster(t *testing.T, set map[string]tftypes.Value) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	server := provider.NewProtocol6Server("test")()
	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := schemas.ResourceSchemas["ray_virtual_cluster"].ValueType().(tftypes.Object)
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %s", name)
		}
		vals[name] = v
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "ray_virtual_cluster", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

func num(n int) tftypes.Value    { return tftypes.NewValue(tftypes.Number, n) }
func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
func boolean(b bool) tftypes.Value {
	return tftypes.NewValue(tftypes.Bool, b)
}
func counts(c ...int) tftypes.Value {
	vs := make([]tftypes.Value, len(c))
	for i, n := range c {
		vs[i] = num(n)
	}
	return tftypes.NewValue(tftypes.List{ElementType: tftypes.Number}, vs)
}

func describe(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "\n  %v %v: %s: %s", d.Severity, d.Attribute, d.Summary, d.Detail)
	}
	return b.String()
}

// TestOneDiagnosticPerMistake: each bad value gets exactly one diagnostic (no
// warning beside the error), on the attribute it names.
func TestOneDiagnosticPerMistake(t *testing.T) {
	base := func() map[string]tftypes.Value {
		return map[string]tftypes.Value{"name": str("vc"), "bundle_ct_per_node_list": counts(2, 2)}
	}
	cases := []struct {
		name   string
		set    map[string]tftypes.Value
		attr   string
		detail string
	}{
		{"lower-case strategy", map[string]tftypes.Value{"placement_group_strategy": str("pack")}, "placement_group_strategy", `did you mean "PACK"?`},
		{"unknown strategy", map[string]tftypes.Value{"placement_group_strategy": str("RANDOM")}, "placement_group_strategy", "must be one of"},
		{"segment does not divide", map[string]tftypes.Value{"bundle_ct_per_node_list": counts(1, 1, 1), "segment_size": num(2), "use_unified_pg": boolean(true)},
			"segment_size", "divisible by segment_size (2)"},
		{"segment does not divide, per-node groups", map[string]tftypes.Value{"bundle_ct_per_node_list": counts(1, 1, 1), "segment_size": num(2)},
			"segment_size", "divisible by segment_size (2)"},
		{"zero segment size", map[string]tftypes.Value{"segment_size": num(0)}, "segment_size", "at least 1"},
		{"zero GPUs per node", map[string]tftypes.Value{"num_gpus_per_node": num(0)}, "num_gpus_per_node", "between 1 and"},
		{"zero colocated groups", map[string]tftypes.Value{"max_colocated_worker_groups": num(0)}, "max_colocated_worker_groups", "between 1 and"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := base()
			for k, v := range c.set {
				set[k] = v
			}
			diags := validateCluster(t, set)
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1:%s", len(diags), describe(diags))
			}
			d := diags[0]
			if d.Severity != tfprotov6.DiagnosticSeverityError || d.Attribute == nil ||
				!d.Attribute.Equal(tftypes.NewAttributePath().WithAttributeName(c.attr)) || !strings.Contains(d.Detail, c.detail) {
				t.Errorf("want one error on %s with %q:%s", c.attr, c.detail, describe(diags))
			}
		})
	}
	if diags := validateCluster(t, base()); len(diags) != 0 {
		t.Errorf("a good configuration gets diagnostics:%s", describe(diags))
	}
}
