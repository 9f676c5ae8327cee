// Command minprovider is the floor of the benchmarks' plan of many clusters
// (bench/README.md, part plan50): a terraform-plugin-framework provider with
// the real provider's schemas and no logic. Its provider and ray_virtual_cluster
// schemas (and identity schema) are the real ones, asked for at every call,
// so they cannot drift; Configure, ValidateConfig and ModifyPlan do not exist,
// Create and Update store the plan, Read returns the state as it is and Delete
// forgets it; the identity is copied from the state's attributes of the same
// names, which the framework requires after every read. It is served as registry.terraform.io/ray-infra/ray, through
// a dev_overrides configuration of its own, and runs with the real plugin's
// process settings (provider.SetUpProcess).
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	rayprovider "github.com/ray-infra/terraform-provider-ray/internal/provider"
)

// address is the real provider's, so that the same configurations and
// states plan with either.
const address = "registry.terraform.io/ray-infra/ray"

func main() {
	stop := rayprovider.SetUpProcess()
	err := providerserver.Serve(context.Background(), func() provider.Provider { return newMinimal() }, providerserver.ServeOpts{Address: address})
	stop()
	if err != nil {
		log.Fatal(err)
	}
}

// minimal is the provider: the real one's metadata and schema, and only the
// resources of it that minimal wraps.
type minimal struct {
	real provider.Provider
}

func newMinimal() *minimal { return &minimal{real: rayprovider.New("minimal")} }

func (p *minimal) Metadata(ctx context.Context, req provider.MetadataRequest, resp *provider.MetadataResponse) {
	p.real.Metadata(ctx, req, resp)
}

func (p *minimal) Schema(ctx context.Context, req provider.SchemaRequest, resp *provider.SchemaResponse) {
	p.real.Schema(ctx, req, resp)
}

func (p *minimal) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *minimal) Resources(ctx context.Context) []func() resource.Resource {
	var meta provider.MetadataResponse
	p.real.Metadata(ctx, provider.MetadataRequest{}, &meta)
	var out []func() resource.Resource
	for _, newReal := range p.real.Resources(ctx) {
		out = append(out, func() resource.Resource { return wrap(newReal(), meta.TypeName) })
	}
	return out
}

func (p *minimal) DataSources(context.Context) []func() datasource.DataSource { return nil }

// noLogic is a real resource's metadata and schema over CRUD that only
// moves the values Terraform sends.
type noLogic struct {
	real         resource.Resource
	providerName string
}

// withIdentity is noLogic for a real resource with an identity schema.
type withIdentity struct {
	noLogic
	identity resource.ResourceWithIdentity
}

func (r *withIdentity) IdentitySchema(ctx context.Context, req resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	r.identity.IdentitySchema(ctx, req, resp)
}

// The framework requires an identity after every read and write; the least
// a provider can do is copy the attributes of the same names (the real
// resource's identity is its name and namespace).

func (r *withIdentity) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.noLogic.Create(ctx, req, resp)
	r.copyIdentity(ctx, resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *withIdentity) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if resp.Identity != nil && resp.Identity.Raw.IsFullyNull() {
		r.copyIdentity(ctx, req.State, resp.Identity, &resp.Diagnostics)
	}
}

func (r *withIdentity) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.noLogic.Update(ctx, req, resp)
	r.copyIdentity(ctx, resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *withIdentity) copyIdentity(ctx context.Context, state tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	if identity == nil {
		return
	}
	var sch resource.IdentitySchemaResponse
	r.identity.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &sch)
	for name := range sch.IdentitySchema.Attributes {
		var v attr.Value
		if diags.Append(state.GetAttribute(ctx, path.Root(name), &v)...); diags.HasError() {
			return
		}
		diags.Append(identity.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// wrap is the real resource's metadata and schemas over noLogic's CRUD.
func wrap(actual resource.Resource, providerName string) resource.Resource {
	r := noLogic{real: actual, providerName: providerName}
	if id, ok := actual.(resource.ResourceWithIdentity); ok {
		return &withIdentity{noLogic: r, identity: id}
	}
	return &r
}

func (r *noLogic) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	req.ProviderTypeName = r.providerName
	r.real.Metadata(ctx, req, resp)
}

func (r *noLogic) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	r.real.Schema(ctx, req, resp)
}

func (r *noLogic) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (r *noLogic) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r *noLogic) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (r *noLogic) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
