package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// NewProtocol6Server serves the provider over plugin protocol 6, as
// providerserver.NewProtocol6 does, and also accepts null function
// arguments from OpenTofu (nullFunctionArgs), counts the writes in
// progress for the driver's batching. Use it wherever the provider is
// served (main and the acceptance tests).
func NewProtocol6Server(version string) func() tfprotov6.ProviderServer {
	p := newProvider(version)
	framework := providerserver.NewProtocol6(p)
	return func() tfprotov6.ProviderServer { return server{nullFunctionArgs{framework()}, p} }
}

// server holds the driver's batcher (driver.Batcher.Hold) for every
// resource write and data source read from the moment Terraform calls:
// those Terraform runs together then share one Ray job, however long each
// takes to decode its request and check the cluster before it reaches the
// driver.
type server struct {
	nullFunctionArgs
	p *rayProvider
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
