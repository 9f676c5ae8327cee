package rayclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient/rayclienttest"
)

// recLogger records every debug call.
type recLogger struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recLogger) Debug(_ context.Context, msg string, fields map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, fmt.Sprintf("%s %v", msg, fields))
}

func (l *recLogger) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.msgs, "\n")
}

func newTestClient(t *testing.T, addr string, mutate ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		Address:        addr,
		RetryMax:       3,
		RetryWaitMin:   time.Millisecond,
		RetryWaitMax:   5 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
		WrapTransport:  new(rayclienttest.Counter).Wrap,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// requestCount is the HTTP attempts of a client newTestClient made.
func requestCount(c *Client) int64 { return c.rt.(*rayclienttest.Counter).Count() }

const versionBody = `{"version": "4", "ray_version": "2.60.0", "ray_commit": "b7f4259e944bf6959f721b106adc366ddfa0c356", "session_name": "session_2026-12-02_13-20-40_916847_10405"}`

func TestNewAddressValidation(t *testing.T) {
	good := map[string]string{
		"http://127.0.0.1:8265":       "http://127.0.0.1:8265",
		"http://127.0.0.1:8265/":      "http://127.0.0.1:8265",
		" HTTPS://ray.example.com// ": "https://ray.example.com",
		"https://proxy.example/ray/":  "https://proxy.example/ray",
	}
	for in, want := range good {
		c, err := New(Config{Address: in})
		if err != nil {
			t.Errorf("New(%q): %v", in, err)
			continue
		}
		if c.Address() != want {
			t.Errorf("Address(%q) = %q, want %q", in, c.Address(), want)
		}
	}
	bad := map[string]string{
		"":                          "address is required",
		"127.0.0.1:8265":            "http:// or https://",
		"localhost:8265":            "http:// or https://",
		"ray-head":                  "http:// or https://",
		"ftp://host:21":             `unsupported scheme "ftp"`,
		"ws://host:8265":            `unsupported scheme "ws"`,
		"http://":                   "missing host",
		"http://user:pw@host:8265":  "credentials in the address",
		"http://host:8265/?x=1":     "query strings",
		"http://host:8265/#frag":    "query strings",
		"http://ho st:8265":         "invalid address",
		"http://user:p w@host:8265": "invalid address",
	}
	for in, want := range bad {
		_, err := New(Config{Address: in})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q) error = %v, want containing %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("New(%q) error leaks credentials: %v", in, err)
		}
	}
}

func TestNewRejectsBrowserLikeAndConflictingHeaders(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Headers: map[string]string{"origin": "http://x"}}, `"Origin" is not allowed`},
		{Config{Headers: map[string]string{"Sec-Fetch-Mode": "cors"}}, `"Sec-Fetch-Mode" is not allowed`},
		{Config{UserAgent: "Mozilla/5.0"}, `must not start with "Mozilla"`},
		{Config{Headers: map[string]string{"User-Agent": "Mozilla/5.0"}}, `must not start with "Mozilla"`},
		{Config{Token: "abc", Headers: map[string]string{"authorization": "Bearer x"}}, "both a token and an Authorization header"},
		{Config{Headers: map[string]string{"Bad Header": "x"}}, "invalid header name"},
		{Config{Headers: map[string]string{"X-A": "a\nb"}}, "invalid value"},
		{Config{Token: "abc\ndef"}, "token contains whitespace"},
		{Config{CAFile: "/nonexistent/ca.pem"}, "reading CA file"},
	} {
		tc.cfg.Address = "http://127.0.0.1:1"
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) error = %v, want containing %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("error leaks token: %v", err)
		}
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	const tok = "tok-S3CR3T-value"
	cfg := Config{Address: "http://127.0.0.1:1", Token: tok, Headers: map[string]string{"X-Api-Key": "hdr-S3CR3T"}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%s", cfg), //nolint:staticcheck // every formatting verb is under test
		fmt.Sprintf("%v", &cfg), fmt.Sprintf("%+v", &cfg), fmt.Sprintf("%#v", &cfg),
		fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), c.String(),
	} {
		if strings.Contains(s, "S3CR3T") {
			t.Errorf("secret printed: %s", s)
		}
	}
	if !strings.Contains(cfg.String(), "[REDACTED]") || !strings.Contains(cfg.String(), "X-Api-Key") {
		t.Errorf("String() = %s", cfg.String())
	}
}

func TestBearerTokenSentAndRedactedFromErrors(t *testing.T) {
	const tok = "rayTOKEN0123456789"
	var gotAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization"))
		if r.URL.Path == "/api/version" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, versionBody)
			return
		}
		// A misbehaving proxy echoing the credential back.
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "Forbidden: Invalid authentication token (got Bearer "+tok+")")
	}))
	defer srv.Close()
	log := &recLogger{}
	// "Bearer " prefix in the configured token is tolerated.
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Token = "Bearer " + tok; cfg.Logger = log })

	v, err := c.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.RayVersion != "2.60.0" || v.Version != "4" || v.SessionName == "" || v.RayCommit == "" {
		t.Errorf("version = %+v", v)
	}
	if got := gotAuth.Load(); got != "Bearer "+tok {
		t.Errorf("Authorization = %q", got)
	}

	_, err = c.GetJob(context.Background(), "x")
	if err == nil {
		t.Fatal("expected error")
	}
	if !IsUnauthorized(err) {
		t.Errorf("IsUnauthorized(%v) = false", err)
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("not an APIError: %T", err)
	}
	for _, s := range []string{err.Error(), ae.Message, ae.Body, fmt.Sprintf("%+v", ae), log.all()} {
		if strings.Contains(s, tok) {
			t.Errorf("token leaked: %s", s)
		}
	}
	if !strings.Contains(err.Error(), "403 Forbidden: Forbidden: Invalid authentication token") {
		t.Errorf("error = %v", err)
	}
	if !strings.Contains(log.all(), "ray: sending request") {
		t.Errorf("logger not used: %q", log.all())
	}
}

func TestExtraHeadersAndUserAgent(t *testing.T) {
	var got http.Header
	var host string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		host = r.Host
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) {
		cfg.Headers = map[string]string{"x-custom": "one", "X-Other": "two", "Host": "ray.internal"}
	})
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Custom") != "one" || got.Get("X-Other") != "two" {
		t.Errorf("headers = %v", got)
	}
	if got.Get("User-Agent") != DefaultUserAgent {
		t.Errorf("User-Agent = %q", got.Get("User-Agent"))
	}
	if got.Get("Authorization") != "" {
		t.Errorf("unexpected Authorization header")
	}
	if host != "ray.internal" {
		t.Errorf("Host = %q", host)
	}
}

func TestRetryOn503ThenSuccess(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy")
			return
		}
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 3 || requestCount(c) != 3 {
		t.Errorf("server saw %d, RequestCount %d; want 3", n.Load(), requestCount(c))
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	var n atomic.Int32
	var first time.Time
	var gap time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"result": false, "msg": "Max number of in-progress requests=100 reached.", "data": {"result": null}}`)
			return
		}
		gap = time.Since(first)
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL) // backoff without Retry-After would be ~ms
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 {
		t.Fatalf("attempts = %d", n.Load())
	}
	if gap < 900*time.Millisecond {
		t.Errorf("retry after %s, want >= 1s (Retry-After)", gap)
	}
}

func TestRetryOnConnectionReset(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			conn, _, err := hj.Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // RST instead of FIN
			}
			conn.Close()
			return
		}
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || requestCount(c) != 2 {
		t.Errorf("server saw %d, RequestCount %d; want 2", n.Load(), requestCount(c))
	}
}

func TestNoRetryOn4xx(t *testing.T) {
	for _, code := range []int{400, 401, 403, 404, 405, 409, 422} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			w.WriteHeader(code)
			io.WriteString(w, "nope")
		}))
		c := newTestClient(t, srv.URL)
		_, err := c.Version(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || ae.StatusCode != code || ae.Message != "nope" || ae.Attempts != 1 {
			t.Errorf("%d: err = %#v", code, err)
		}
		if n.Load() != 1 || requestCount(c) != 1 {
			t.Errorf("%d: attempts = %d", code, n.Load())
		}
		srv.Close()
	}
}

func TestRetryBudgetExhaustedStatus(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"result": false, "msg": "Failed to query data from GCS.", "data": {"result": null}}`)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RetryMax = 2 })
	_, err := c.ListNodes(context.Background(), ListOptions{})
	if err == nil {
		t.Fatal("expected error")
	}
	want := "ray: GET /api/v0/nodes: 500 Internal Server Error: Failed to query data from GCS. (giving up after 3 attempts)"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err.Error(), want)
	}
	if n.Load() != 3 || requestCount(c) != 3 {
		t.Errorf("attempts = %d / %d", n.Load(), requestCount(c))
	}
}

func TestRetryBudgetExhaustedConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newTestClient(t, "http://"+addr, func(cfg *Config) { cfg.RetryMax = 2; cfg.Token = "refusedTOKEN" })
	_, err = c.Version(context.Background())
	var re *RequestError
	if !errors.As(err, &re) {
		t.Fatalf("err = %T %v", err, err)
	}
	if re.Attempts != 3 || requestCount(c) != 3 {
		t.Errorf("attempts = %d, count = %d", re.Attempts, requestCount(c))
	}
	if !strings.HasPrefix(err.Error(), "ray: GET /api/version: giving up after 3 attempts: ") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error = %v", err)
	}
	if strings.Contains(err.Error(), "refusedTOKEN") {
		t.Errorf("token leaked: %v", err)
	}
}

func TestRetryMaxNegativeDisablesRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RetryMax = -1 })
	_, err := c.Version(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 502 || n.Load() != 1 {
		t.Errorf("err = %v, attempts = %d", err, n.Load())
	}
	if err.Error() != "ray: GET /api/version: 502 Bad Gateway" {
		t.Errorf("error = %q", err.Error())
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		io.WriteString(w, versionBody)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RequestTimeout = 150 * time.Millisecond })
	start := time.Now()
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 {
		t.Errorf("attempts = %d, want 2", n.Load())
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %s", el)
	}
}

func TestPerAttemptTimeoutExhausted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RequestTimeout = 50 * time.Millisecond; cfg.RetryMax = 1 })
	_, err := c.Version(context.Background())
	var re *RequestError
	if !errors.As(err, &re) || re.Attempts != 2 || !strings.Contains(err.Error(), "giving up after 2 attempts: HTTP attempt timed out (request timeout 50ms)") {
		t.Errorf("err = %v", err)
	}
}

func TestContextCancelStopsBackoff(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) {
		cfg.RetryWaitMin = 10 * time.Second
		cfg.RetryWaitMax = 10 * time.Second
	})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Version(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("cancel took %s", el)
	}
	if n.Load() != 1 {
		t.Errorf("attempts = %d", n.Load())
	}
}

func TestContextCancelInFlight(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.ListJobs(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
	if requestCount(c) != 1 {
		t.Errorf("RequestCount = %d", requestCount(c))
	}
	// An already-cancelled context sends nothing.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := c.Version(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if requestCount(c) != 1 {
		t.Errorf("RequestCount = %d", requestCount(c))
	}
}

func TestBadJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/api/jobs/":
			io.WriteString(w, `{"not": "a list"}`)
		case "/api/jobs/x/logs":
			io.WriteString(w, `{"something_else": 1}`)
		case "/api/jobs/x":
			io.WriteString(w, ``)
		default:
			io.WriteString(w, "<html>proxy login page</html>")
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	ctx := context.Background()
	check := func(name string, err error, want ...string) {
		t.Helper()
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("%s: err = %T %v, want *DecodeError", name, err, err)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", name, err.Error(), w)
			}
		}
	}
	_, err := c.Version(ctx)
	check("version", err, "GET /api/version", "invalid response from Ray", "text/html", "proxy login page")
	_, err = c.ListNodes(ctx, ListOptions{})
	check("nodes", err, "GET /api/v0/nodes")
	_, err = c.ListJobs(ctx)
	check("jobs", err, "GET /api/jobs/")
	_, err = c.GetJobLogs(ctx, "x")
	check("logs", err, "GET /api/jobs/x/logs", `missing "logs"`)
	_, err = c.GetJob(ctx, "x")
	check("job", err, "GET /api/jobs/x", "empty body")
	if requestCount(c) != 5 {
		t.Errorf("bad JSON must not be retried; RequestCount = %d", requestCount(c))
	}
}

func TestBackoff(t *testing.T) {
	minW, maxW := 100*time.Millisecond, 2*time.Second
	for attempt := 0; attempt < 40; attempt++ {
		for i := 0; i < 50; i++ {
			d := backoff(minW, maxW, attempt, nil)
			base := maxW
			if attempt < 5 {
				base = minW << attempt
			}
			if d < minW || d > base || d < base/2 {
				t.Fatalf("attempt %d: %s outside [%s, %s]", attempt, d, base/2, base)
			}
		}
	}
	resp := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"3"}}}
	if d := backoff(minW, maxW, 0, resp); d != 3*time.Second {
		t.Errorf("Retry-After 3 -> %s", d)
	}
	resp.Header.Set("Retry-After", "86400")
	if d := backoff(minW, maxW, 0, resp); d != MaxRetryAfter {
		t.Errorf("Retry-After capped -> %s", d)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d, ok := parseRetryAfter(now.Add(7*time.Second).Format(http.TimeFormat), now); !ok || d != 7*time.Second {
		t.Errorf("http-date -> %s %v", d, ok)
	}
	if _, ok := parseRetryAfter("soon", now); ok {
		t.Error("garbage accepted")
	}
	// Retry-After is ignored for other statuses.
	resp = &http.Response{StatusCode: 500, Header: http.Header{"Retry-After": {"30"}}}
	if d := backoff(minW, maxW, 0, resp); d > minW {
		t.Errorf("Retry-After on 500 used: %s", d)
	}
}

func TestExtractMessage(t *testing.T) {
	for in, want := range map[string]string{
		`{"result": false, "msg": "Invalid node state for filtering: BOGUS", "data": {"result": null}}`: "Invalid node state for filtering: BOGUS",
		"Job x does not exist": "Job x does not exist",
		"500 Internal Server Error\n\nServer got itself in trouble": "500 Internal Server Error Server got itself in trouble",
		"":                             "",
		duplicateSubmissionBody("abc"): "Job with submission_id abc already exists. Please use a different submission_id.",
		"Traceback (most recent call last):\n  File \"x\", line 1\nTypeError: entrypoint must be a string, got <class 'int'>\n": "entrypoint must be a string, got <class 'int'>",
	} {
		if got := extractMessage([]byte(in)); got != want {
			t.Errorf("extractMessage(%.40q) = %q, want %q", in, got, want)
		}
	}
}

func TestAuthorizationHeaderValueRedacted(t *testing.T) {
	const secret = "customCRED-987654"
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "Unauthorized: token "+secret+" rejected")
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Headers = map[string]string{"Authorization": "Bearer " + secret} })
	_, err := c.ListJobs(context.Background())
	if got != "Bearer "+secret {
		t.Errorf("Authorization = %q", got)
	}
	if !IsUnauthorized(err) || strings.Contains(err.Error(), secret) {
		t.Errorf("err = %v", err)
	}
	var ae *APIError
	if errors.As(err, &ae) && strings.Contains(ae.Body, secret) {
		t.Errorf("body leaks secret: %q", ae.Body)
	}
}
