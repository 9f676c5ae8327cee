package resources

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// One diagnostic per mistake. The framework runs an attribute's schema
// validators and the resource's ValidateConfig side by side, and both know
// some rules (a strategy name, a range): withoutSchemaDuplicates drops the
// spec's issues on an attribute whose own validators already reject its value.

// withoutSchemaDuplicates returns issues minus those on an attribute (by its
// root name) that the attribute's schema validators reject.
func withoutSchemaDuplicates(ctx context.Context, sch schema.Schema, cfg tfsdk.Config, issues []clusterspec.Issue) []clusterspec.Issue {
	rejected := map[string]bool{}
	out := issues[:0:0]
	for _, is := range issues {
		root, _, _ := strings.Cut(is.Path, "[")
		if root != "" {
			if _, seen := rejected[root]; !seen {
				rejected[root] = schemaRejects(ctx, sch, cfg, root)
			}
			if rejected[root] {
				continue
			}
		}
		out = append(out, is)
	}
	return out
}

// schemaRejects reports whether the schema validators of attribute name reject
// its configured value.
func schemaRejects(ctx context.Context, sch schema.Schema, cfg tfsdk.Config, name string) bool {
	p := path.Root(name)
	switch a := sch.Attributes[name].(type) {
	case schema.StringAttribute:
		return anyRejects(ctx, cfg, p, a.Validators, func(val validator.String, v types.String) diag.Diagnostics {
			r := &validator.StringResponse{}
			val.ValidateString(ctx, validator.StringRequest{Path: p, ConfigValue: v, Config: cfg}, r)
			return r.Diagnostics
		})
	case schema.Int64Attribute:
		return anyRejects(ctx, cfg, p, a.Validators, func(val validator.Int64, v types.Int64) diag.Diagnostics {
			r := &validator.Int64Response{}
			val.ValidateInt64(ctx, validator.Int64Request{Path: p, ConfigValue: v, Config: cfg}, r)
			return r.Diagnostics
		})
	case schema.ListAttribute:
		return anyRejects(ctx, cfg, p, a.Validators, func(val validator.List, v types.List) diag.Diagnostics {
			r := &validator.ListResponse{}
			val.ValidateList(ctx, validator.ListRequest{Path: p, ConfigValue: v, Config: cfg}, r)
			return r.Diagnostics
		})
	}
	return false
}

// anyRejects reads the value at p and reports whether one of validators
// (run by run) returns an error for it.
func anyRejects[T, V any](ctx context.Context, cfg tfsdk.Config, p path.Path, validators []T, run func(T, V) diag.Diagnostics) bool {
	var v V
	if cfg.GetAttribute(ctx, p, &v).HasError() {
		return false
	}
	for _, val := range validators {
		if run(val, v).HasError() {
			return true
		}
	}
	return false
}
