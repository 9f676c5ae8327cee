package provider

import (
	"strings"
	"testing"
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
