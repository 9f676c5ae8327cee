package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/resources"
	"github.com/ray-infra/terraform-provider-ray/internal/vcluster"
)

const (
	defaultAddress = "http://127.0.0.1:8265"
	envAddress     = "RAY_ADDRESS"
	envToken       = "RAY_AUTH_TOKEN"
	envTokenPath   = "RAY_AUTH_TOKEN_PATH"
)

var (
	stringType  = types.StringType
	namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
)

type providerModel struct {
	Address            types.String `tfsdk:"address"`
	Token              types.String `tfsdk:"token"`
	Headers            types.Map    `tfsdk:"headers"`
	CAFile             types.String `tfsdk:"ca_file"`
	CAPEM              types.String `tfsdk:"ca_pem"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
	Namespace          types.String `tfsdk:"namespace"`
	PythonExecutable   types.String `tfsdk:"python_executable"`
	RuntimeEnvJSON     types.String `tfsdk:"runtime_env_json"`
	MaxRetries         types.Int64  `tfsdk:"max_retries"`
	RetryWaitMin       types.String `tfsdk:"retry_wait_min"`
	RetryWaitMax       types.String `tfsdk:"retry_wait_max"`
	RequestTimeout     types.String `tfsdk:"request_timeout"`
	ConnectTimeout     types.String `tfsdk:"connect_timeout"`
	PlanTimeout        types.String `tfsdk:"plan_timeout"`
	TopologyLabels     types.Object `tfsdk:"topology_labels"`
	CapacityCheck      types.String `tfsdk:"capacity_check"`
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
func (m providerModel) providerData(ctx context.Context, version string) (*resources.ProviderData, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.anyUnknown() {
		return nil, diags
	}
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
	if f := m.CAFile.ValueString(); f != "" {
		if _, err := os.Stat(f); err != nil {
			diags.AddAttributeError(path.Root("ca_file"), "Unreadable CA file", err.Error())
		}
	}
	if p := m.CAPEM.ValueString(); p != "" {
		if _, err := rayclient.CertPool([]byte(p)); err != nil {
			diags.AddAttributeError(path.Root("ca_pem"), "Invalid CA certificates", "ca_pem "+err.Error()+
				": it must hold one or more -----BEGIN CERTIFICATE----- blocks.")
		}
	}
	cfg := rayclient.Config{
		Address:            address,
		Token:              token,
		Headers:            headers,
		CAFile:             m.CAFile.ValueString(),
		CAPEM:              m.CAPEM.ValueString(),
		InsecureSkipVerify: m.InsecureSkipVerify.ValueBool(),
		RetryMax:           4,
		RetryWaitMin:       durationOr(m.RetryWaitMin, 250*time.Millisecond),
		RetryWaitMax:       durationOr(m.RetryWaitMax, 5*time.Second),
		RequestTimeout:     durationOr(m.RequestTimeout, 30*time.Second),
		ConnectTimeout:     durationOr(m.ConnectTimeout, rayclient.DefaultConnectTimeout),
		UserAgent:          "terraform-provider-ray/" + version,
		Logger:             tflogAdapter{},
	}
	if !m.MaxRetries.IsNull() {
		cfg.RetryMax = int(m.MaxRetries.ValueInt64())
		if cfg.RetryMax == 0 {
			cfg.RetryMax = -1 // the client reads 0 as "default"; the user means none
		}
	}
	if cfg.RetryWaitMin > cfg.RetryWaitMax {
		diags.AddAttributeError(path.Root("retry_wait_min"), "Invalid retry waits",
			fmt.Sprintf("retry_wait_min (%s) must not exceed retry_wait_max (%s).", cfg.RetryWaitMin, cfg.RetryWaitMax))
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
	python := m.PythonExecutable.ValueString()
	if python == "" {
		python = vcluster.DefaultPythonExecutable
	}
	namespace := m.Namespace.ValueString()
	if namespace == "" {
		namespace = vcluster.DefaultNamespace
	}
	data := resources.NewProviderData(client, namespace, python, version, runtimeEnv)
	data.PlanTimeout = durationOr(m.PlanTimeout, resources.DefaultPlanTimeout)
	labels, d := resources.TopologyLabelsFromObject(ctx, m.TopologyLabels)
	diags.Append(d...)
	data.TopologyLabels = labels
	data.CapacityCheck = m.CapacityCheck.ValueString()
	return data, diags
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

func durationOr(v types.String, def time.Duration) time.Duration {
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
