package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// ray_namespace_quota.namespace is refused at plan as the provider's
// namespace is: a quota on "" or arbitrary text would cap nothing.
func TestNamespaceQuotaNamespaceIsValidatedAsTheProviders(t *testing.T) {
	ctx := context.Background()
	var resp resource.SchemaResponse
	(&namespaceQuotaResource{}).Schema(ctx, resource.SchemaRequest{}, &resp)
	attr, ok := resp.Schema.Attributes["namespace"].(schema.StringAttribute)
	if !ok || len(attr.Validators) == 0 {
		t.Fatalf("namespace has no validator: %#v", resp.Schema.Attributes["namespace"])
	}
	for value, valid := range map[string]bool{
		"": false, "two words": false, "a/b": false, "-lead": false, strings.Repeat("x", 64): false,
		"terraform-ray": true, "team_a.v2": true, strings.Repeat("x", 63): true,
	} {
		var detail []string
		for _, v := range attr.Validators {
			var r validator.StringResponse
			v.ValidateString(ctx, validator.StringRequest{Path: path.Root("namespace"), ConfigValue: types.StringValue(value)}, &r)
			for _, d := range r.Diagnostics.Errors() {
				detail = append(detail, d.Detail())
			}
		}
		if valid != (len(detail) == 0) {
			t.Errorf("namespace %q: errors %q", value, detail)
		}
		if !valid && len(detail) > 0 && (!strings.Contains(detail[0], "namespace") || !strings.Contains(detail[0], clusterspec.NamespaceRule)) {
			t.Errorf("namespace %q: the error names neither the attribute nor the rule: %q", value, detail[0])
		}
	}
	if !clusterspec.NamespacePattern.MatchString(clusterspec.DefaultNamespace) {
		t.Errorf("the default namespace %q is refused", clusterspec.DefaultNamespace)
	}
}
