package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestResolveAddress(t *testing.T) {
	cases := []struct {
		configured, env, want, wantErr string
	}{
		{"", "", defaultAddress, ""},
		{"", "auto", defaultAddress, ""},
		{"", "http://10.1.2.3:8265", "http://10.1.2.3:8265", ""},
		{"", "head:8265", "http://head:8265", ""},
		{"https://ray.example.com/", "http://ignored:1", "https://ray.example.com", ""},
		{"  http://127.0.0.1:8265  ", "", "http://127.0.0.1:8265", ""},
		{"ray://head:10001", "", "", "Ray Client address"},
		{"", "ray://head:10001", "", "RAY_ADDRESS"},
		{"ftp://head", "", "", "not an http(s) URL"},
		{"http://", "", "", "not an http(s) URL"},
	}
	for _, c := range cases {
		got, err := resolveAddress(c.configured, c.env)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("resolveAddress(%q, %q) error = %v, want %q", c.configured, c.env, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("resolveAddress(%q, %q) = %q, %v; want %q", c.configured, c.env, got, err, c.want)
		}
	}
}

func TestParseRuntimeEnv(t *testing.T) {
	if env, err := parseRuntimeEnv(""); env != nil || err != nil {
		t.Fatalf("empty: %v %v", env, err)
	}
	env, err := parseRuntimeEnv(`{"env_vars": {"A": "1"}}`)
	if err != nil || env["env_vars"].(map[string]any)["A"] != "1" {
		t.Fatalf("object: %v %v", env, err)
	}
	for _, bad := range []string{"[1]", "nope", `"x"`} {
		if _, err := parseRuntimeEnv(bad); err == nil {
			t.Errorf("parseRuntimeEnv(%q) accepted", bad)
		}
	}
}

// TestResolveToken follows Ray's token sources in Ray's order: the attribute,
// RAY_AUTH_TOKEN, the RAY_AUTH_TOKEN_PATH file, ~/.ray/auth_token (HOME).
func TestResolveToken(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ray"), 0o700); err != nil {
		t.Fatal(err)
	}
	homeFile := filepath.Join(home, ".ray", "auth_token")
	pathFile := filepath.Join(t.TempDir(), "token")
	emptyFile := filepath.Join(t.TempDir(), "empty")
	for f, body := range map[string]string{homeFile: "home-token\n", pathFile: "  path-token \nsecond line\n", emptyFile: " \n"} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name       string
		attr       types.String
		env        map[string]string
		authHeader bool
		want, src  string
		wantErr    string
	}{
		{"attribute first", types.StringValue("attr"), map[string]string{"RAY_AUTH_TOKEN": "env", "HOME": home}, false, "attr", "the token attribute", ""},
		{"RAY_AUTH_TOKEN before the path", types.StringNull(), map[string]string{"RAY_AUTH_TOKEN": " env ", "RAY_AUTH_TOKEN_PATH": pathFile, "HOME": home}, false, "env", "RAY_AUTH_TOKEN", ""},
		{"empty RAY_AUTH_TOKEN is unset", types.StringNull(), map[string]string{"RAY_AUTH_TOKEN": "", "RAY_AUTH_TOKEN_PATH": pathFile}, false, "path-token", "RAY_AUTH_TOKEN_PATH (" + pathFile + ")", ""},
		{"path file before home", types.StringNull(), map[string]string{"RAY_AUTH_TOKEN_PATH": pathFile, "HOME": home}, false, "path-token", "RAY_AUTH_TOKEN_PATH (" + pathFile + ")", ""},
		{"missing path file is an error", types.StringNull(), map[string]string{"RAY_AUTH_TOKEN_PATH": pathFile + ".missing", "HOME": home}, false, "", "", "RAY_AUTH_TOKEN_PATH is set but its file cannot be read"},
		{"empty path file is an error", types.StringNull(), map[string]string{"RAY_AUTH_TOKEN_PATH": emptyFile, "HOME": home}, false, "", "", "is empty"},
		{"home file", types.StringNull(), map[string]string{"HOME": home}, false, "home-token", homeFile, ""},
		{"home file skipped under an Authorization header", types.StringNull(), map[string]string{"HOME": home}, true, "", "none", ""},
		{"no home file", types.StringNull(), map[string]string{"HOME": t.TempDir()}, false, "", "none", ""},
		{"nothing", types.StringNull(), nil, false, "", "none", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, src, err := resolveToken(c.attr, c.authHeader, func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want || src != c.src {
				t.Fatalf("got %q from %q (%v), want %q from %q", got, src, err, c.want, c.src)
			}
		})
	}
}

// TestProviderDataTokenAndCA configures the provider as Terraform would: an unreadable RAY_AUTH_TOKEN_PATH and
// bad ca_pem text are errors naming their attribute.
func TestProviderDataTokenAndCA(t *testing.T) {
	ctx := context.Background()
	model := func(caPEM types.String) providerModel {
		m := unsetModel()
		m.CAPEM = caPEM
		return m
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("RAY_AUTH_TOKEN", "")
	t.Setenv("RAY_AUTH_TOKEN_PATH", filepath.Join(home, "missing"))
	_, diags := model(types.StringNull()).providerData(ctx, "test")
	if !hasAttrError(diags, "token", "RAY_AUTH_TOKEN_PATH") {
		t.Errorf("missing RAY_AUTH_TOKEN_PATH file: %v", diags)
	}
	t.Setenv("RAY_AUTH_TOKEN_PATH", "")
	_, diags = model(types.StringValue("not a certificate")).providerData(ctx, "test")
	if !hasAttrError(diags, "ca_pem", "no PEM certificates") {
		t.Errorf("bad ca_pem: %v", diags)
	}
	data, diags := model(types.StringNull()).providerData(ctx, "test")
	if diags.HasError() || data == nil {
		t.Fatalf("valid configuration: %v", diags)
	}
}

// unsetModel is a configuration that sets only the address: every other
// argument is null, as Terraform hands over a provider block that leaves it out.
func unsetModel() providerModel {
	return providerModel{Address: types.StringValue("http://127.0.0.1:1"), Token: types.StringNull(),
		Headers: types.MapNull(types.StringType), CAFile: types.StringNull(), CAPEM: types.StringNull(),
		InsecureSkipVerify: types.BoolNull(), Namespace: types.StringNull(), PythonExecutable: types.StringNull(),
		RuntimeEnvJSON: jsontypes.NewNormalizedNull(), MaxRetries: types.Int64Null(),
		RetryWaitMin: timetypes.NewGoDurationNull(), RetryWaitMax: timetypes.NewGoDurationNull(),
		RequestTimeout: timetypes.NewGoDurationNull(), ConnectTimeout: timetypes.NewGoDurationNull(),
		PlanTimeout: timetypes.NewGoDurationNull(), CapacityCheck: types.StringNull(),
		TopologyLabels: types.Object{}} // the zero Object is null
}

func hasAttrError(diags diag.Diagnostics, attr, detail string) bool {
	for _, d := range diags.Errors() {
		if a, ok := d.(diag.DiagnosticWithPath); ok && a.Path().Equal(path.Root(attr)) && strings.Contains(d.Detail(), detail) {
			return true
		}
	}
	return false
}

// envAttributes maps each argument that has an environment variable to it.
var envAttributes = map[string]string{
	"address": envAddress, "token": envToken, "ca_file": envCAFile, "ca_pem": envCAPEM, "namespace": envNamespace,
	"python_executable": envPythonExecutable, "max_retries": envMaxRetries, "retry_wait_min": envRetryWaitMin,
	"retry_wait_max": envRetryWaitMax, "request_timeout": envRequestTimeout, "connect_timeout": envConnectTimeout,
	"plan_timeout": envPlanTimeout, "capacity_check": envCapacityCheck,
}

// clearEnv unsets every variable of the provider for the test (an empty
// variable counts as unset).
func clearEnv(t *testing.T) {
	t.Helper()
	for _, env := range envAttributes {
		t.Setenv(env, "")
	}
	t.Setenv(envTokenPath, "")
	t.Setenv("HOME", t.TempDir())
}

// A CI pipeline configures the provider through the environment alone.
func TestProviderDataFromEnvironment(t *testing.T) {
	clearEnv(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte("unused by this test"), 0o600); err != nil {
		t.Fatal(err)
	}
	for env, value := range map[string]string{envCAFile: caFile, envNamespace: "ci-ns", envPythonExecutable: "python3.12",
		envMaxRetries: "0", envRetryWaitMin: "1s", envRetryWaitMax: "2m", envRequestTimeout: "45s",
		envConnectTimeout: "3s", envPlanTimeout: "2m", envCapacityCheck: "none"} {
		t.Setenv(env, value)
	}
	m := unsetModel()
	from, diags := m.fromEnvironment(os.Getenv)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := map[string]string{"ca_file": caFile, "namespace": "ci-ns", "python_executable": "python3.12",
		"retry_wait_min": "1s", "retry_wait_max": "2m", "request_timeout": "45s", "connect_timeout": "3s",
		"plan_timeout": "2m", "capacity_check": "none"}
	got := map[string]string{"ca_file": m.CAFile.ValueString(), "namespace": m.Namespace.ValueString(),
		"python_executable": m.PythonExecutable.ValueString(), "retry_wait_min": m.RetryWaitMin.ValueString(),
		"retry_wait_max": m.RetryWaitMax.ValueString(), "request_timeout": m.RequestTimeout.ValueString(),
		"connect_timeout": m.ConnectTimeout.ValueString(), "plan_timeout": m.PlanTimeout.ValueString(),
		"capacity_check": m.CapacityCheck.ValueString()}
	for attr, w := range want {
		if got[attr] != w || from[attr] != envAttributes[attr] {
			t.Errorf("%s = %q from %q, want %q from %s", attr, got[attr], from[attr], w, envAttributes[attr])
		}
	}
	if m.MaxRetries.IsNull() || m.MaxRetries.ValueInt64() != 0 || !m.CAPEM.IsNull() {
		t.Errorf("max_retries %v, ca_pem %v", m.MaxRetries, m.CAPEM)
	}
	t.Setenv(envCAFile, "") // not a certificate: the client would reject it
	data, diags := unsetModel().providerData(context.Background(), "test")
	if diags.HasError() || data == nil {
		t.Fatal(diags)
	}
	if data.Namespace != "ci-ns" || data.PythonExecutable != "python3.12" || data.PlanTimeout != 2*time.Minute || data.CapacityCheck != "none" {
		t.Errorf("provider data: namespace %q python %q plan_timeout %s capacity_check %q",
			data.Namespace, data.PythonExecutable, data.PlanTimeout, data.CapacityCheck)
	}
}

// An argument in the configuration wins over its variable, and a CA in the
// configuration (file or PEM) over both CA variables.
func TestProviderConfigWinsOverEnvironment(t *testing.T) {
	clearEnv(t)
	for _, env := range []string{envCAFile, envNamespace, envPythonExecutable, envMaxRetries, envRetryWaitMin,
		envRetryWaitMax, envRequestTimeout, envConnectTimeout, envPlanTimeout, envCapacityCheck} {
		t.Setenv(env, "not valid for any of them")
	}
	m := unsetModel()
	m.CAPEM = types.StringValue("pem")
	m.Namespace, m.PythonExecutable, m.CapacityCheck = types.StringValue("ns"), types.StringValue("py"), types.StringValue("free")
	m.MaxRetries = types.Int64Value(3)
	for _, d := range []*timetypes.GoDuration{&m.RetryWaitMin, &m.RetryWaitMax, &m.RequestTimeout, &m.ConnectTimeout, &m.PlanTimeout} {
		*d = timetypes.NewGoDurationValueFromStringMust("3m")
	}
	before := m
	from, diags := m.fromEnvironment(os.Getenv)
	if diags.HasError() || len(from) != 0 || !cmp.Equal(m, before) {
		t.Fatalf("the environment changed a configured argument: %v %v\n%+v", from, diags, m)
	}
}

// A variable its argument would reject is an error on that argument naming
// the variable; nothing is taken from it.
func TestProviderInvalidEnvironment(t *testing.T) {
	cases := []struct {
		env, value, attr, detail string
	}{
		{envNamespace, "two words", "namespace", namespaceRule},
		{envCapacityCheck, "some", "capacity_check", `must be one of ["free" "total" "none"]`},
		{envMaxRetries, "21", "max_retries", "between 0 and 20"},
		{envMaxRetries, "many", "max_retries", "whole number"},
		{envRetryWaitMin, "soon", "retry_wait_min", "positive Go duration"},
		{envRetryWaitMax, "0s", "retry_wait_max", "positive Go duration"},
		{envRequestTimeout, "30", "request_timeout", "positive Go duration"},
		{envConnectTimeout, "-5s", "connect_timeout", "positive Go duration"},
		{envPlanTimeout, "1 minute", "plan_timeout", "positive Go duration"},
	}
	for _, c := range cases {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(c.env, c.value)
			data, diags := unsetModel().providerData(context.Background(), "test")
			want := fmt.Sprintf("%s = %q, the environment variable of the provider's %s, must ", c.env, c.value, c.attr)
			if data != nil || !hasAttrError(diags, c.attr, want) || !hasAttrError(diags, c.attr, c.detail) {
				t.Fatalf("want an error on %s with %q and %q, got %v", c.attr, want, c.detail, diags)
			}
			if s := diags.Errors()[0].Summary(); s != "Invalid environment variable" {
				t.Errorf("summary %q", s)
			}
		})
	}
}

// The CA variables: one at a time, and errors about the CA name the variable.
func TestProviderCAFromEnvironment(t *testing.T) {
	ctx := context.Background()
	clearEnv(t)
	t.Setenv(envCAFile, "/nonexistent/ca.pem")
	t.Setenv(envCAPEM, "pem")
	if _, diags := unsetModel().providerData(ctx, "test"); !hasAttrError(diags, "ca_file", "Both "+envCAFile+" and "+envCAPEM) {
		t.Errorf("both CA variables: %v", diags)
	}
	t.Setenv(envCAPEM, "")
	if _, diags := unsetModel().providerData(ctx, "test"); !hasAttrError(diags, "ca_file", envCAFile+" (the environment variable of ca_file): stat /nonexistent/ca.pem") {
		t.Errorf("missing CA file: %v", diags)
	}
	t.Setenv(envCAFile, "")
	t.Setenv(envCAPEM, "not a certificate")
	if _, diags := unsetModel().providerData(ctx, "test"); !hasAttrError(diags, "ca_pem", envCAPEM+" (the environment variable of ca_pem) contains no PEM certificates") {
		t.Errorf("bad CA PEM: %v", diags)
	}
}

// Rules across arguments name the variables the values came from.
func TestProviderRetryWaitsFromEnvironment(t *testing.T) {
	clearEnv(t)
	t.Setenv(envRetryWaitMin, "10s")
	t.Setenv(envRetryWaitMax, "5s")
	_, diags := unsetModel().providerData(context.Background(), "test")
	if !hasAttrError(diags, "retry_wait_min", envRetryWaitMin+" (the environment variable of retry_wait_min) (10s) must not exceed "+
		envRetryWaitMax+" (the environment variable of retry_wait_max) (5s)") {
		t.Errorf("inverted retry waits: %v", diags)
	}
}

// Every variable is documented on its argument and on the provider page.
func TestEnvironmentVariablesDocumented(t *testing.T) {
	var resp provider.SchemaResponse
	newProvider("test").Schema(context.Background(), provider.SchemaRequest{}, &resp)
	page, err := os.ReadFile(filepath.Join("..", "..", "templates", "index.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	for attr, env := range envAttributes {
		a, ok := resp.Schema.Attributes[attr]
		if !ok {
			t.Errorf("no attribute %s", attr)
			continue
		}
		if !strings.Contains(a.GetMarkdownDescription(), "`"+env+"`") {
			t.Errorf("%s does not document %s", attr, env)
		}
		if !strings.Contains(string(page), "`"+env+"`") || !strings.Contains(string(page), "`"+attr+"`") {
			t.Errorf("templates/index.md.tmpl does not list %s (%s)", env, attr)
		}
	}
	if !strings.Contains(string(page), "`"+envTokenPath+"`") {
		t.Errorf("templates/index.md.tmpl does not list %s", envTokenPath)
	}
}
