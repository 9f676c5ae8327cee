package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ resource.ResourceWithIdentity = (*virtualClusterResource)(nil)

// virtualClusterIdentity is the resource identity: a cluster is its name
// in a Ray namespace (placement-group names are unique per namespace).
type virtualClusterIdentity struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
}

func (r *virtualClusterResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"namespace": identityschema.StringAttribute{
				OptionalForImport: true,
				Description: "Ray namespace of the cluster's placement groups. On import it must be the " +
					"provider's `namespace` (the default when left out).",
			},
			"name": identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "The cluster's `name`.",
			},
		},
	}
}

// setIdentity records the identity of the cluster m describes; identity is
// nil only for a resource without an identity schema.
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, m virtualClusterModel, diags *diag.Diagnostics) {
	if identity == nil {
		return
	}
	diags.Append(identity.Set(ctx, virtualClusterIdentity{Namespace: m.Namespace, Name: m.Name})...)
}

// importByIdentity starts an import from an import block's identity
// instead of an id. It reports false for an import by id.
func (r *virtualClusterResource) importByIdentity(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) bool {
	if req.ID != "" || req.Identity == nil {
		return false
	}
	var id virtualClusterIdentity
	if resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...); resp.Diagnostics.HasError() {
		return true
	}
	if id.Name.ValueString() == "" {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Invalid import identity", "identity.name must name the cluster to import.")
		return true
	}
	if ns := id.Namespace.ValueString(); r.data != nil && ns != "" && ns != r.data.Namespace {
		resp.Diagnostics.AddAttributeError(path.Root("namespace"), "Import identity names another Ray namespace",
			fmt.Sprintf("identity.namespace is %q, but the provider works in Ray namespace %q, which the cluster would be "+
				"imported from. Set the provider's namespace to %q (or leave identity.namespace out).", ns, r.data.Namespace, ns))
		return true
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), id.Name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id.Name)...)
	r.setImportIdentity(ctx, id.Name.ValueString(), resp)
	return true
}

// setImportIdentity sets the identity of an import of cluster name into
// the provider's namespace.
func (r *virtualClusterResource) setImportIdentity(ctx context.Context, name string, resp *resource.ImportStateResponse) {
	if r.data == nil {
		return // not configured: the Read that follows sets it
	}
	setIdentity(ctx, resp.Identity, virtualClusterModel{Namespace: types.StringValue(r.data.Namespace), Name: types.StringValue(name)},
		&resp.Diagnostics)
}
