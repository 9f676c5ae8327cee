package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/ray-infra/terraform-provider-ray/internal/resources"
)

// NewProtocol6Server serves the provider over plugin protocol 6, as
// providerserver.NewProtocol6 does, and also accepts null function
// arguments from OpenTofu (nullFunctionArgs), counts the writes in
// progress for the driver's batching, and answers an unchanged virtual
// cluster's plan, refresh and state upgrade itself. Use it wherever the
// provider is served (main and the acceptance tests).
func NewProtocol6Server(version string) func() tfprotov6.ProviderServer {
	p := newProvider(version)
	framework := providerserver.NewProtocol6(p)
	return func() tfprotov6.ProviderServer { return server{nullFunctionArgs{framework()}, p} }
}

// server holds the driver's batcher (driver.Batcher.Hold) for every
// resource write and data source read from the moment Terraform calls:
// those Terraform runs together then share one Ray job, however long each
// takes to decode its request and check the cluster before it reaches the
// driver. Its provider's configured data serves the shortcuts.
type server struct {
	nullFunctionArgs
	p *rayProvider
}

// PlanResourceChange plans an unchanged virtual cluster itself
// (resources.PlanUnchangedCluster: the framework's passes over its values
// were most of the CPU of a plan of many clusters) and hands every other plan
// to the framework.
func (s server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if resp, ok := resources.PlanUnchangedCluster(ctx, typeName, s.p.configured.Load(), req); ok {
		return resp, nil
	}
	return s.nullFunctionArgs.PlanResourceChange(ctx, req)
}

// ReadResource refreshes a virtual cluster itself when the framework's
// passes around its Read would change nothing
// (resources.ReadUnchangedCluster), and hands every other read to the
// framework.
func (s server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if resp, ok := resources.ReadUnchangedCluster(ctx, typeName, s.p.configured.Load(), req); ok {
		return resp, nil
	}
	return s.nullFunctionArgs.ReadResource(ctx, req)
}

// UpgradeResourceState passes a virtual cluster's state of the current
// schema version through itself (resources.UpgradeClusterState).
func (s server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if resp, ok := resources.UpgradeClusterState(typeName, req); ok {
		return resp, nil
	}
	return s.nullFunctionArgs.UpgradeResourceState(ctx, req)
}

func (s server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	defer s.p.jobs.Hold()()
	return s.nullFunctionArgs.ApplyResourceChange(ctx, req)
}

func (s server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	defer s.p.jobs.Hold()()
	return s.nullFunctionArgs.ReadDataSource(ctx, req)
}

// The list resources (terraform query) go through to the framework: the
// wrapper's embedded ProviderServer interface would hide them otherwise.
// Listing holds no batcher slot: its read requests arrive together and
// share one wave by themselves.
var _ tfprotov6.ListResourceServer = server{}

func (s server) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return s.listServer().ValidateListResourceConfig(ctx, req)
}

func (s server) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return s.listServer().ListResource(ctx, req)
}

// listServer is the framework's server, which implements the list RPCs.
func (s server) listServer() tfprotov6.ListResourceServer {
	return s.ProviderServer.(tfprotov6.ListResourceServer) //nolint:forcetypeassert // the framework's server implements them
}
