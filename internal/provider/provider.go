// Package provider implements the Ray provider: its configuration, the
// resources and data sources it serves, and its pure provider functions.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
	"github.com/ray-infra/terraform-provider-ray/internal/validators"
)

var (
	_ provider.Provider                  = (*rayProvider)(nil)
	_ provider.ProviderWithFunctions     = (*rayProvider)(nil)
	_ provider.ProviderWithListResources = (*rayProvider)(nil)
)

type rayProvider struct {
	version string
	// jobs runs the driver jobs; shared with the protocol server, which
	// counts the writes in progress (server.go).
	jobs *driver.Batcher
}

// New is the framework provider without the protocol server's additions
// (NewProtocol6Server): for bench/cmd/minprovider, which borrows its schemas.
func New(version string) provider.Provider { return newProvider(version) }

func newProvider(version string) *rayProvider {
	return &rayProvider{version: version, jobs: driver.NewBatcher(nil, "", driver.RunOptions{})}
}

func (p *rayProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "ray"
	resp.Version = p.version
}

func (p *rayProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Ray provider declares topology-aware Ray **virtual clusters** (sets of " +
			"detached, named placement groups) and reads the live cluster topology (NVLink domains, " +
			"`topo_rank`, GPUs) through Ray's own dashboard HTTP API: the state API for reads and the job " +
			"submission API for writes. It reproduces NeMo-RL's `nemo_rl.distributed.virtual_cluster` module.",
		Attributes: map[string]schema.Attribute{
			"address": schema.StringAttribute{
				MarkdownDescription: "URL of the Ray dashboard (the address `ray job submit` uses). When unset, " +
					"the provider looks where Ray's own tools do: the `RAY_ADDRESS` environment variable, then the " +
					"local default `" + defaultAddress + "`. An address without a scheme gets `http://`.",
				Optional: true,
			},
			"token": schema.StringAttribute{
				MarkdownDescription: "Ray authentication token, sent as a bearer token on every request (Ray's " +
					"token authentication, `RAY_AUTH_MODE=token`). When unset, the provider looks where Ray does, in " +
					"Ray's order: the `RAY_AUTH_TOKEN` environment variable, then the file named by " +
					"`RAY_AUTH_TOKEN_PATH` (an error when that file is missing or empty), then `~/.ray/auth_token` " +
					"(not read when `headers` sets `Authorization`). A file gives its first line, trimmed. Never " +
					"logged and never stored in state.",
				Optional:  true,
				Sensitive: true,
			},
			"headers": schema.MapAttribute{
				MarkdownDescription: "Extra HTTP headers sent with every request, e.g. for an authenticating proxy in " +
					"front of the dashboard.",
				ElementType: stringType,
				Optional:    true,
			},
			"ca_file": schema.StringAttribute{
				MarkdownDescription: "Path to a PEM file with the CA certificates that sign the dashboard's TLS " +
					"certificate (for `https://` addresses). Conflicts with `ca_pem`." + envDoc(envCAFile) +
					" Neither CA variable is read when `ca_file` or `ca_pem` is set.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("ca_pem"))},
			},
			"ca_pem": schema.StringAttribute{
				MarkdownDescription: "The same CA certificates as PEM text (e.g. `data.kubernetes_secret.ca.data[\"ca.crt\"]`), " +
					"so a CA read in the same configuration needs no file and no `-target` apply. Conflicts with `ca_file`." +
					envDoc(envCAPEM) + " Neither CA variable is read when `ca_file` or `ca_pem` is set.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("ca_file"))},
			},
			"insecure_skip_verify": schema.BoolAttribute{
				MarkdownDescription: "Skip TLS certificate verification. For test clusters only. Defaults to `false`.",
				Optional:            true,
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Ray namespace in which the driver jobs create the named, detached placement " +
					"groups. Names are unique per namespace. Defaults to `" + clusterspec.DefaultNamespace + "`." + envDoc(envNamespace),
				Optional:   true,
				Validators: []validator.String{stringvalidator.RegexMatches(namePattern, namespaceRule)},
			},
			"python_executable": schema.StringAttribute{
				MarkdownDescription: "Python executable that runs the embedded placement-group driver inside the " +
					"Ray job (the counterpart of the reference's `PY_EXECUTABLES.SYSTEM`). It must be able to " +
					"`import ray`; on a stock `ray[default]` install the default `python` is right." + envDoc(envPythonExecutable),
				Optional: true,
			},
			"runtime_env_json": schema.StringAttribute{
				MarkdownDescription: "Ray `runtime_env` for the driver jobs, as a JSON object (for example " +
					"`jsonencode({env_vars = {RAY_DEDUP_LOGS = \"0\"}})`). Defaults to none.",
				CustomType: jsontypes.NormalizedType{},
				Optional:   true,
			},
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: "How many times a request is retried after a connection error, HTTP 429 or 5xx " +
					"(never after another 4xx), with exponential backoff. Defaults to `4`." + envDoc(envMaxRetries),
				Optional:   true,
				Validators: []validator.Int64{int64validator.Between(0, maxRetriesLimit)},
			},
			"retry_wait_min": schema.StringAttribute{
				MarkdownDescription: "Shortest wait between retries, as a Go duration. Defaults to `250ms`." + envDoc(envRetryWaitMin),
				CustomType:          timetypes.GoDurationType{},
				Optional:            true,
				Validators:          []validator.String{validators.DurationValidator{}},
			},
			"retry_wait_max": schema.StringAttribute{
				MarkdownDescription: "Longest wait between retries, as a Go duration. Defaults to `5s`." + envDoc(envRetryWaitMax),
				CustomType:          timetypes.GoDurationType{},
				Optional:            true,
				Validators:          []validator.String{validators.DurationValidator{}},
			},
			"request_timeout": schema.StringAttribute{
				MarkdownDescription: "Timeout of one HTTP attempt, as a Go duration. Defaults to `30s`." + envDoc(envRequestTimeout),
				CustomType:          timetypes.GoDurationType{},
				Optional:            true,
				Validators:          []validator.String{validators.DurationValidator{}},
			},
			"connect_timeout": schema.StringAttribute{
				MarkdownDescription: "Timeout of connecting (TCP and TLS handshake) within one HTTP attempt, as a Go " +
					"duration. Defaults to `" + rayclient.DefaultConnectTimeout.String() + "`." + envDoc(envConnectTimeout),
				CustomType: timetypes.GoDurationType{},
				Optional:   true,
				Validators: []validator.String{validators.DurationValidator{}},
			},
			"plan_timeout": schema.StringAttribute{
				MarkdownDescription: "Deadline, as a Go duration, for what the provider reads from Ray while planning " +
					"(refresh, the plan-time checks of `ray_virtual_cluster`, `ray_cluster_topology`): when Ray has not " +
					"answered by then, the plan fails naming the address, what was tried and the likely mistake, and " +
					"every other read of that plan fails at once instead of waiting again. A refused connection is not " +
					"waited for: the plan warns and the checks run again at apply. Apply and destroy are bounded by " +
					"the resource's `timeouts` instead. Defaults to `" +
					session.DefaultPlanTimeout.String() + "`." + envDoc(envPlanTimeout),
				CustomType: timetypes.GoDurationType{},
				Optional:   true,
				Validators: []validator.String{validators.DurationValidator{}},
			},
			clusterspec.AttrTopologyLabels: resources.TopologyLabelsProviderAttribute(),
			clusterspec.AttrCapacityCheck: schema.StringAttribute{
				MarkdownDescription: "Default `" + clusterspec.AttrCapacityCheck + "` of every `ray_virtual_cluster`. " +
					resources.CapacityCheckDescription + " Defaults to `" + clusterspec.DefaultCapacityCheck + "`." + envDoc(envCapacityCheck),
				Optional:   true,
				Validators: []validator.String{stringvalidator.OneOf(clusterspec.CapacityChecks...)},
			},
		},
	}
}

// envDoc documents the environment variable of an argument.
func envDoc(env string) string {
	return " Environment variable: `" + env + "` (the argument wins when both are set)."
}

func (p *rayProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var model providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, diags := model.providerData(ctx, p.version)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() || data == nil {
		return
	}
	data.UseJobs(p.jobs)
	resp.DataSourceData = data
	resp.ResourceData = data
	resp.ListResourceData = data
}

// ListResources are the list resources of terraform query (Terraform >= 1.14).
func (p *rayProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		resources.NewVirtualClusterListResource,
	}
}

func (p *rayProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		resources.NewVirtualClusterResource,
		resources.NewNamespaceQuotaResource,
	}
}

func (p *rayProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		resources.NewClusterTopologyDataSource,
		resources.NewVirtualClusterDataSource,
	}
}

func (p *rayProvider) Functions(_ context.Context) []func() function.Function {
	return functions()
}
