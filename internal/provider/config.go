package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
	"github.com/ray-infra/terraform-provider-ray/internal/validators"
)

const defaultAddress = "http://127.0.0.1:8265"

// The environment variables of the provider's arguments, so that a CI
// pipeline can configure the provider without a provider block. An argument
// set in the configuration wins over its variable; an empty variable counts as
// unset. Ray's own tools read the first three; the others are the provider's.
const (
	envAddress          = "RAY_ADDRESS"
	envToken            = "RAY_AUTH_TOKEN"
	envTokenPath        = "RAY_AUTH_TOKEN_PATH" // a file holding the token, read when token and RAY_AUTH_TOKEN are unset
	envCAFile           = "RAY_TF_CA_FILE"
	envCAPEM            = "RAY_TF_CA_PEM"
	envNamespace        = "RAY_TF_NAMESPACE"
	envPythonExecutable = "RAY_TF_PYTHON_EXECUTABLE"
	envMaxRetries       = "RAY_TF_MAX_RETRIES"
	envRetryWaitMin     = "RAY_TF_RETRY_WAIT_MIN"
	envRetryWaitMax     = "RAY_TF_RETRY_WAIT_MAX"
	envRequestTimeout   = "RAY_TF_REQUEST_TIMEOUT"
	envConnectTimeout   = "RAY_TF_CONNECT_TIMEOUT"
	envPlanTimeout      = "RAY_TF_PLAN_TIMEOUT"
	envCapacityCheck    = "RAY_TF_CAPACITY_CHECK"
)

// maxRetriesLimit bounds max_retries, in the schema and from the environment.
const maxRetriesLimit = 20

// namespaceRule is what a namespace may hold (namePattern), for messages.
const namespaceRule = clusterspec.NamespaceRule

var (
	stringType  = types.StringType
	namePattern = clusterspec.NamespacePattern
)

type providerModel struct {
	Address            types.String         `tfsdk:"address"`
	Token              types.String         `tfsdk:"token"`
	Headers            types.Map            `tfsdk:"headers"`
	CAFile             types.String         `tfsdk:"ca_file"`
	CAPEM              types.String         `tfsdk:"ca_pem"`
	InsecureSkipVerify types.Bool           `tfsdk:"insecure_skip_verify"`
	Namespace          types.String         `tfsdk:"namespace"`
	PythonExecutable   types.String         `tfsdk:"python_executable"`
	RuntimeEnvJSON     jsontypes.Normalized `tfsdk:"runtime_env_json"`
	MaxRetries         types.Int64          `tfsdk:"max_retries"`
	RetryWaitMin       timetypes.GoDuration `tfsdk:"retry_wait_min"`
	RetryWaitMax       timetypes.GoDuration `tfsdk:"retry_wait_max"`
	RequestTimeout     timetypes.GoDuration `tfsdk:"request_timeout"`
	ConnectTimeout     timetypes.GoDuration `tfsdk:"connect_timeout"`
	PlanTimeout        timetypes.GoDuration `tfsdk:"plan_timeout"`
	TopologyLabels     types.Object         `tfsdk:"topology_labels"`
	CapacityCheck      types.String         `tfsdk:"capacity_check"`
}

// anyUnknown reports whether a value the client needs is not known yet (it
// depends on a resource that is not created), in which case configuration waits.
func (m providerModel) anyUnknown() bool {
	for _, v := range []interface{ IsUnknown() bool }{m.Address, m.Token, m.Headers, m.CAFile, m.CAPEM,
		m.InsecureSkipVerify, m.Namespace, m.PythonExecutable, m.RuntimeEnvJSON, m.MaxRetries,
		m.RetryWaitMin, m.RetryWaitMax, m.RequestTimeout, m.ConnectTimeout, m.PlanTimeout, m.TopologyLabels, m.CapacityCheck} {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}

// providerData turns the configuration into the client and settings shared by
// every resource and data source. It returns nil data while values are unknown.
func (m providerModel) providerData(ctx context.Context, version string) (*session.Session, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.anyUnknown() {
		return nil, diags
	}
	from, diags := m.fromEnvironment(os.Getenv)
	address, err := resolveAddress(m.Address.ValueString(), os.Getenv(envAddress))
	if err != nil {
		diags.AddAttributeError(path.Root("address"), "Invalid Ray dashboard address", err.Error())
	}
	headers := map[string]string{}
	diags.Append(m.Headers.ElementsAs(ctx, &headers, false)...)
	authHeader := false
	for name := range headers {
		authHeader = authHeader || strings.EqualFold(name, "Authorization")
	}
	token, tokenSource, err := resolveToken(m.Token, authHeader, os.Getenv)
	if err != nil {
		diags.AddAttributeError(path.Root("token"), "Unreadable Ray authentication token", err.Error())
	}
	if authHeader && token != "" {
		diags.AddAttributeError(path.Root("headers"), "Conflicting Authorization header",
			fmt.Sprintf("Set either a token (here from %s) or an Authorization header, not both.", tokenSource))
	}
	runtimeEnv, err := parseRuntimeEnv(m.RuntimeEnvJSON.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("runtime_env_json"), "Invalid runtime_env_json", err.Error())
	}
	m.checkCA(from, &diags)
	cfg := rayclient.Config{
		Address:            address,
		Token:              token,
		Headers:            headers,
		CAFile:             m.CAFile.ValueString(),
		CAPEM:              m.CAPEM.ValueString(),
		InsecureSkipVerify: m.InsecureSkipVerify.ValueBool(),
		RetryMax:           m.retryMax(),
		RetryWaitMin:       durationOr(m.RetryWaitMin, 250*time.Millisecond),
		RetryWaitMax:       durationOr(m.RetryWaitMax, 5*time.Second),
		RequestTimeout:     durationOr(m.RequestTimeout, 30*time.Second),
		ConnectTimeout:     durationOr(m.ConnectTimeout, rayclient.DefaultConnectTimeout),
		UserAgent:          "terraform-provider-ray/" + version,
		Logger:             tflogAdapter{},
	}
	if cfg.RetryWaitMin > cfg.RetryWaitMax {
		diags.AddAttributeError(path.Root("retry_wait_min"), "Invalid retry waits",
			fmt.Sprintf("%s (%s) must not exceed %s (%s).", from.name("retry_wait_min"), cfg.RetryWaitMin,
				from.name("retry_wait_max"), cfg.RetryWaitMax))
	}
	if diags.HasError() {
		return nil, diags
	}
	client, err := rayclient.New(cfg)
	if err != nil {
		diags.AddError("Cannot configure the Ray client", err.Error())
		return nil, diags
	}
	tflog.Debug(ctx, "configured Ray client", map[string]any{"address": address, "token_source": tokenSource})
	data := m.newProviderData(ctx, client, version, runtimeEnv, &diags)
	return data, diags
}

// checkCA checks that ca_file can be read and that ca_pem holds
// certificates, naming where each came from.
func (m providerModel) checkCA(from envSources, diags *diag.Diagnostics) {
	if f := m.CAFile.ValueString(); f != "" {
		if _, err := os.Stat(f); err != nil {
			diags.AddAttributeError(path.Root("ca_file"), "Unreadable CA file", from.name("ca_file")+": "+err.Error())
		}
	}
	if p := m.CAPEM.ValueString(); p != "" {
		if _, err := rayclient.CertPool([]byte(p)); err != nil {
			diags.AddAttributeError(path.Root("ca_pem"), "Invalid CA certificates", from.name("ca_pem")+" "+err.Error()+
				": it must hold one or more -----BEGIN CERTIFICATE----- blocks.")
		}
	}
}

// retryMax is the client's RetryMax for max_retries: 4 when unset, and -1
// for 0, since the client reads 0 as "default" and the user means none.
func (m providerModel) retryMax() int {
	if m.MaxRetries.IsNull() {
		return 4
	}
	if n := int(m.MaxRetries.ValueInt64()); n != 0 {
		return n
	}
	return -1
}

// newProviderData is what resources share: client, with the namespace,
// Python executable, plan timeout, topology labels and capacity check the
// provider block sets or their defaults.
func (m providerModel) newProviderData(ctx context.Context, client *rayclient.Client, version string, runtimeEnv map[string]any, diags *diag.Diagnostics) *session.Session {
	python := m.PythonExecutable.ValueString()
	if python == "" {
		python = clusterspec.DefaultPythonExecutable
	}
	namespace := m.Namespace.ValueString()
	if namespace == "" {
		namespace = clusterspec.DefaultNamespace
	}
	data := session.New(client, namespace, python, version, runtimeEnv)
	data.PlanTimeout = durationOr(m.PlanTimeout, session.DefaultPlanTimeout)
	labels, d := resources.TopologyLabelsFromObject(ctx, m.TopologyLabels)
	diags.Append(d...)
	data.TopologyLabels = labels
	data.CapacityCheck = m.CapacityCheck.ValueString()
	return data
}

// envSources names, by attribute, the environment variable each argument
// taken from the environment came from.
type envSources map[string]string

// name is how messages name an attribute: with its variable when it came
// from the environment.
func (f envSources) name(attribute string) string {
	if env, ok := f[attribute]; ok {
		return fmt.Sprintf("%s (the environment variable of %s)", env, attribute)
	}
	return attribute
}

// fromEnvironment sets each argument the configuration leaves unset from its
// environment variable (address and token are resolved on their own, in
// Ray's order). A variable the argument's own rules reject is an error naming
// both. The CA is one setting: with ca_file or ca_pem configured, neither
// variable is read.
func (m *providerModel) fromEnvironment(getenv func(string) string) (envSources, diag.Diagnostics) {
	from := envSources{}
	var diags diag.Diagnostics
	// read returns the variable of an unset attribute and whether to use it.
	read := func(attribute, env string, unset bool, check func(string) error) (string, bool) {
		value := getenv(env)
		if !unset || value == "" {
			return "", false
		}
		if check != nil {
			if err := check(value); err != nil {
				diags.AddAttributeError(path.Root(attribute), "Invalid environment variable",
					fmt.Sprintf("%s = %q, the environment variable of the provider's %s, %v. Fix or unset the variable, "+
						"or set %s in the provider block (which wins over the variable).", env, value, attribute, err, attribute))
				return "", false
			}
		}
		from[attribute] = env
		return value, true
	}
	str := func(attribute, env string, v *types.String, check func(string) error) {
		if value, ok := read(attribute, env, v.IsNull(), check); ok {
			*v = types.StringValue(value)
		}
	}
	duration := func(attribute, env string, v *timetypes.GoDuration) {
		if value, ok := read(attribute, env, v.IsNull(), durationRule); ok {
			*v = timetypes.NewGoDurationValueFromStringMust(value)
		}
	}
	if m.CAFile.IsNull() && m.CAPEM.IsNull() {
		if getenv(envCAFile) != "" && getenv(envCAPEM) != "" {
			diags.AddAttributeError(path.Root("ca_file"), "Conflicting CA environment variables",
				fmt.Sprintf("Both %s and %s are set; set one (the CA as a file or as PEM text), as ca_file conflicts with ca_pem.",
					envCAFile, envCAPEM))
		} else {
			str("ca_file", envCAFile, &m.CAFile, nil)
			str("ca_pem", envCAPEM, &m.CAPEM, nil)
		}
	}
	str("namespace", envNamespace, &m.Namespace, func(s string) error {
		if !namePattern.MatchString(s) {
			return errors.New(namespaceRule)
		}
		return nil
	})
	str("python_executable", envPythonExecutable, &m.PythonExecutable, nil)
	str(clusterspec.AttrCapacityCheck, envCapacityCheck, &m.CapacityCheck, func(s string) error {
		if !slices.Contains(clusterspec.CapacityChecks, s) {
			return fmt.Errorf("must be one of %q", clusterspec.CapacityChecks)
		}
		return nil
	})
	if value, ok := read("max_retries", envMaxRetries, m.MaxRetries.IsNull(), func(s string) error {
		if n, err := strconv.Atoi(s); err != nil || n < 0 || n > maxRetriesLimit {
			return fmt.Errorf("must be a whole number between 0 and %d", maxRetriesLimit)
		}
		return nil
	}); ok {
		n, _ := strconv.Atoi(value)
		m.MaxRetries = types.Int64Value(int64(n))
	}
	duration("retry_wait_min", envRetryWaitMin, &m.RetryWaitMin)
	duration("retry_wait_max", envRetryWaitMax, &m.RetryWaitMax)
	duration("request_timeout", envRequestTimeout, &m.RequestTimeout)
	duration("connect_timeout", envConnectTimeout, &m.ConnectTimeout)
	duration("plan_timeout", envPlanTimeout, &m.PlanTimeout)
	return from, diags
}

// durationRule applies the duration attributes' rule (validators.DurationValidator
// and the type's syntax) to a variable.
func durationRule(s string) error {
	if _, err := validators.PositiveDuration(s); err != nil {
		return errors.New(validators.DurationRule)
	}
	return nil
}

// resolveToken finds the bearer token where Ray's own clients look, in Ray's
// order (AuthenticationTokenLoader in Ray's C++ core): the token attribute, then
// the RAY_AUTH_TOKEN variable, then the file RAY_AUTH_TOKEN_PATH names, then
// ~/.ray/auth_token. As in Ray, an empty variable counts as unset, a file gives
// its first line with surrounding whitespace trimmed, and a RAY_AUTH_TOKEN_PATH
// whose file cannot be read or is empty is an error (never a silent fallback).
// The default file is not read when an Authorization header is configured
// (a proxy in front of the dashboard authenticates instead). source names
// where the token came from ("none" without one), for logs and messages.
func resolveToken(configured types.String, authHeader bool, getenv func(string) string) (token, source string, err error) {
	if !configured.IsNull() {
		return configured.ValueString(), "the token attribute", nil
	}
	if t := getenv(envToken); t != "" {
		return strings.TrimSpace(t), envToken, nil
	}
	if p := getenv(envTokenPath); p != "" {
		t, err := readTokenFile(p)
		if err != nil {
			return "", envTokenPath, fmt.Errorf("%s is set but its file cannot be read: %v", envTokenPath, err)
		}
		if t == "" {
			return "", envTokenPath, fmt.Errorf("%s is set but its file %s is empty", envTokenPath, p)
		}
		return t, envTokenPath + " (" + p + ")", nil
	}
	home := getenv("HOME")
	if home == "" || authHeader {
		return "", "none", nil
	}
	// A missing or unreadable default file means no token, as in Ray.
	p := filepath.Join(home, ".ray", "auth_token")
	if t, err := readTokenFile(p); err == nil && t != "" {
		return t, p, nil
	}
	return "", "none", nil
}

// readTokenFile returns the first line of a token file, trimmed.
func readTokenFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(first), nil
}

// resolveAddress applies Ray's own lookup order: explicit address, then
// RAY_ADDRESS, then the local default dashboard.
func resolveAddress(configured, env string) (string, error) {
	addr := strings.TrimSpace(configured)
	source := "address"
	if addr == "" {
		addr, source = strings.TrimSpace(env), envAddress
	}
	if addr == "" || addr == "auto" {
		return defaultAddress, nil
	}
	if strings.HasPrefix(addr, "ray://") {
		return "", fmt.Errorf("%s %q is a Ray Client address; the provider needs the dashboard HTTP address, e.g. %s", source, addr, defaultAddress)
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%s %q is not an http(s) URL of a Ray dashboard, e.g. %s", source, addr, defaultAddress)
	}
	return strings.TrimRight(addr, "/"), nil
}

func parseRuntimeEnv(raw string) (map[string]any, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		return nil, fmt.Errorf("must be a JSON object: %v", err)
	}
	return env, nil
}

func durationOr(v timetypes.GoDuration, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(v.ValueString()); err == nil {
		return d
	}
	return def
}

// tflogAdapter sends client debug lines to Terraform's log.
type tflogAdapter struct{}

func (tflogAdapter) Debug(ctx context.Context, msg string, fields map[string]any) {
	tflog.Debug(ctx, msg, fields)
}
