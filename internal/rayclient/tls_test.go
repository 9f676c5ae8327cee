package rayclient

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTLSCAFileAndInsecure(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	ctx := context.Background()

	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	// Unknown CA: fails, and certificate errors are not retried.
	c := newTestClient(t, srv.URL)
	_, err := c.Version(ctx)
	var re *RequestError
	if !errors.As(err, &re) || re.Attempts != 1 || requestCount(c) != 1 || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted: err = %v (count %d)", err, requestCount(c))
	}

	c = newTestClient(t, srv.URL, func(cfg *Config) { cfg.CAFile = caFile })
	if _, err := c.Version(ctx); err != nil {
		t.Errorf("with CA file: %v", err)
	}

	c = newTestClient(t, srv.URL, func(cfg *Config) { cfg.InsecureSkipVerify = true })
	if _, err := c.Version(ctx); err != nil {
		t.Errorf("insecure: %v", err)
	}

	bad := filepath.Join(dir, "bad.pem")
	os.WriteFile(bad, []byte("not a pem"), 0o600)
	if _, err := New(Config{Address: srv.URL, CAFile: bad}); err == nil || !strings.Contains(err.Error(), "no PEM certificates") {
		t.Errorf("bad CA: %v", err)
	}
}

// TestTLSCAPEM verifies the dashboard's certificate against CA text given
// inline (the provider's ca_pem), and rejects text without a certificate and
// a CA given both ways.
func TestTLSCAPEM(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.CAPEM = caPEM })
	if _, err := c.Version(context.Background()); err != nil {
		t.Errorf("with CA PEM text: %v", err)
	}
	if _, err := New(Config{Address: srv.URL, CAPEM: "-----BEGIN CERTIFICATE-----\nnope\n"}); err == nil || !strings.Contains(err.Error(), "no PEM certificates") {
		t.Errorf("bad CA PEM text: %v", err)
	}
	if _, err := New(Config{Address: srv.URL, CAPEM: caPEM, CAFile: "/x.pem"}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("CA file and text: %v", err)
	}
	if s := (Config{CAPEM: caPEM}).String(); strings.Contains(s, "BEGIN") {
		t.Errorf("Config.String prints the PEM text: %s", s)
	}
}
