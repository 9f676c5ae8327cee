package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
		m := providerModel{Address: types.StringValue("http://127.0.0.1:1"), Token: types.StringNull(),
			Headers: types.MapNull(types.StringType), CAFile: types.StringNull(), CAPEM: caPEM,
			InsecureSkipVerify: types.BoolNull(), Namespace: types.StringNull(), PythonExecutable: types.StringNull(),
			RuntimeEnvJSON: types.StringNull(), MaxRetries: types.Int64Null(), RetryWaitMin: types.StringNull(),
			RetryWaitMax: types.StringNull(), RequestTimeout: types.StringNull(),
			TopologyLabels: types.Object{}} // the zero Object is null
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

func hasAttrError(diags diag.Diagnostics, attr, detail string) bool {
	for _, d := range diags.Errors() {
		if a, ok := d.(diag.DiagnosticWithPath); ok && a.Path().Equal(path.Root(attr)) && strings.Contains(d.Detail(), detail) {
			return true
		}
	}
	return false
}
