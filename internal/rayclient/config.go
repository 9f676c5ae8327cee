package rayclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

// Defaults applied by New when the corresponding Config field is zero.
const (
	DefaultRetryMax       = 4
	DefaultRetryWaitMin   = 250 * time.Millisecond
	DefaultRetryWaitMax   = 5 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	// DefaultConnectTimeout bounds establishing the TCP (and TLS)
	// connection of one attempt: an address that drops connection attempts
	// fails in seconds, not after the whole request timeout.
	DefaultConnectTimeout = 5 * time.Second
	DefaultUserAgent      = "terraform-provider-ray (rayclient)"

	// MaxRetryAfter caps how long a server-provided Retry-After header can
	// make the client wait before the next attempt.
	MaxRetryAfter = 60 * time.Second
)

// Logger receives debug messages about HTTP attempts. Fields never contain
// headers or the token. The provider passes a tflog adapter.
type Logger interface {
	Debug(ctx context.Context, msg string, fields map[string]any)
}

// Config configures a Client. Zero values select the documented defaults.
type Config struct {
	// Address is the dashboard base URL, e.g. http://127.0.0.1:8265. The
	// scheme (http or https) is required; a trailing slash is tolerated and a
	// path prefix (for a dashboard behind a reverse proxy) is kept.
	Address string

	// Token is sent as "Authorization: Bearer <token>", which is what Ray's
	// token authentication expects. A leading "Bearer " is stripped.
	Token string `json:"-"`

	// Headers are extra request headers. Values are never logged or printed.
	Headers map[string]string `json:"-"`

	// CAFile is a PEM bundle used instead of the system roots to verify the
	// dashboard's certificate.
	CAFile string
	// CAPEM is the same bundle given as text; at most one of CAFile and CAPEM.
	CAPEM string
	// InsecureSkipVerify disables TLS certificate verification.
	InsecureSkipVerify bool

	// RetryMax is the number of retries after the first attempt. 0 selects
	// DefaultRetryMax; a negative value disables retries.
	RetryMax int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff.
	RetryWaitMin, RetryWaitMax time.Duration
	// RequestTimeout bounds a single HTTP attempt (including reading the
	// body). Default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// ConnectTimeout bounds connecting (TCP, then the TLS handshake) within
	// an attempt. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// UserAgent defaults to DefaultUserAgent. It must not start with
	// "Mozilla": Ray rejects mutating requests from browser user agents.
	UserAgent string

	// Logger is optional.
	Logger Logger

	// WrapTransport, when set, wraps the HTTP transport (TLS already
	// configured), so every attempt, retries included, passes through what
	// it returns: an instrument for tests and benchmarks
	// (rayclienttest.Counter counts requests).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// String implements fmt.Stringer without revealing the token or header values.
func (c Config) String() string {
	token := "<unset>"
	if c.Token != "" {
		token = redactedPlaceholder
	}
	keys := make([]string, 0, len(c.Headers))
	for k := range c.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return fmt.Sprintf("rayclient.Config{Address:%q Token:%s Headers:%v CAFile:%q CAPEM:%t InsecureSkipVerify:%t RetryMax:%d RetryWaitMin:%s RetryWaitMax:%s RequestTimeout:%s ConnectTimeout:%s UserAgent:%q}",
		c.Address, token, keys, c.CAFile, c.CAPEM != "", c.InsecureSkipVerify, c.RetryMax, c.RetryWaitMin, c.RetryWaitMax, c.RequestTimeout, c.ConnectTimeout, c.UserAgent)
}

// GoString implements fmt.GoStringer so that %#v does not reveal the token.
func (c Config) GoString() string { return c.String() }

const redactedPlaceholder = "[REDACTED]"

// browserHeaders are the request headers Ray's dashboard uses to classify a
// request as browser traffic (ray/dashboard/optional_utils.py
// is_browser_request); such requests may only use GET/HEAD/OPTIONS.
var browserHeaders = []string{
	"Referer", "Origin",
	"Sec-Fetch-Mode", "Sec-Fetch-Dest", "Sec-Fetch-Site", "Sec-Fetch-User",
	"Access-Control-Request-Method", "Access-Control-Request-Headers",
}

// sensitiveHeaders have their values redacted from error messages, in
// addition to Config.Token.
var sensitiveHeaders = map[string]bool{
	"Authorization":       true,
	"X-Ray-Authorization": true,
	"Proxy-Authorization": true,
	"Cookie":              true,
}

func parseAddress(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("rayclient: address is required (e.g. http://127.0.0.1:8265)")
	}
	if !strings.Contains(raw, "://") {
		if strings.Contains(raw, "@") {
			return nil, errors.New("rayclient: invalid address: it must start with http:// or https://")
		}
		return nil, fmt.Errorf("rayclient: invalid address %q: it must start with http:// or https:// (e.g. http://127.0.0.1:8265)", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "@") {
			// Don't echo something that may contain credentials.
			return nil, errors.New("rayclient: invalid address: not a valid URL")
		}
		return nil, fmt.Errorf("rayclient: invalid address %q: %w", raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		if u.Scheme == "" || u.Opaque != "" || u.Host == "" {
			return nil, fmt.Errorf("rayclient: invalid address %q: it must start with http:// or https:// (e.g. http://127.0.0.1:8265)", u.Redacted())
		}
		return nil, fmt.Errorf("rayclient: invalid address %q: unsupported scheme %q; only http and https are supported", u.Redacted(), u.Scheme)
	}
	u.Scheme = scheme
	if u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("rayclient: invalid address %q: missing host", u.Redacted())
	}
	if u.User != nil {
		return nil, errors.New("rayclient: invalid address: credentials in the address are not supported; use the token or headers instead")
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("rayclient: invalid address %q: query strings and fragments are not supported", u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u, nil
}

// validHeaderValue reports whether v can be sent as a header value without
// being rejected by net/http (no control characters).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if (b < 0x20 && b != '\t') || b == 0x7f {
			return false
		}
	}
	return true
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		b := k[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

func normalizeToken(tok string) (string, error) {
	tok = strings.TrimSpace(tok)
	if len(tok) >= 7 && strings.EqualFold(tok[:7], "bearer ") {
		tok = strings.TrimSpace(tok[7:])
	}
	for i := 0; i < len(tok); i++ {
		if b := tok[i]; b <= 0x20 || b == 0x7f {
			// Never echo the token.
			return "", errors.New("rayclient: token contains whitespace or control characters")
		}
	}
	return tok, nil
}

// CertPool parses a PEM bundle of CA certificates; the error reads after the
// bundle's name ("CA file x.pem contains no PEM certificates").
func CertPool(pem []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("contains no PEM certificates")
	}
	return pool, nil
}

func buildTLSConfig(cfg Config) (*tls.Config, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" && cfg.CAPEM != "" {
		return nil, errors.New("rayclient: set CAFile or CAPEM, not both")
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("rayclient: reading CA file: %w", err)
		}
		pool, err := CertPool(pem)
		if err != nil {
			return nil, fmt.Errorf("rayclient: CA file %q %w", cfg.CAFile, err)
		}
		tlsCfg.RootCAs = pool
	}
	if cfg.CAPEM != "" {
		pool, err := CertPool([]byte(cfg.CAPEM))
		if err != nil {
			return nil, fmt.Errorf("rayclient: CA PEM text %w", err)
		}
		tlsCfg.RootCAs = pool
	}
	if cfg.InsecureSkipVerify {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // explicitly requested by the user
	}
	return tlsCfg, nil
}

func buildHeaders(cfg Config, token string) (http.Header, []string, error) {
	h := http.Header{}
	var secrets []string
	if token != "" {
		secrets = append(secrets, token)
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	if !validHeaderValue(ua) {
		return nil, nil, errors.New("rayclient: user agent contains control characters")
	}
	h.Set("User-Agent", ua)
	h.Set("Accept", "application/json")

	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Headers[k]
		if !validHeaderName(k) {
			return nil, nil, fmt.Errorf("rayclient: invalid header name %q", k)
		}
		ck := http.CanonicalHeaderKey(k)
		if sensitiveHeaders[ck] && strings.TrimSpace(v) != "" {
			secrets = append(secrets, strings.TrimSpace(v))
			if sp := strings.IndexByte(strings.TrimSpace(v), ' '); sp > 0 {
				// "Bearer xyz": also redact the bare credential.
				secrets = append(secrets, strings.TrimSpace(strings.TrimSpace(v)[sp+1:]))
			}
		}
		if !validHeaderValue(v) {
			return nil, nil, fmt.Errorf("rayclient: header %q has an invalid value (control characters)", ck)
		}
		for _, bh := range browserHeaders {
			if ck == bh {
				return nil, nil, fmt.Errorf("rayclient: header %q is not allowed: Ray's dashboard treats requests carrying it as browser traffic and rejects job submission, stop and delete", ck)
			}
		}
		switch ck {
		case "Authorization":
			if token != "" {
				return nil, nil, errors.New("rayclient: both a token and an Authorization header are configured; set only one")
			}
		case "Content-Length", "Transfer-Encoding", "Connection", "Content-Type":
			return nil, nil, fmt.Errorf("rayclient: header %q cannot be set", ck)
		}
		h.Set(ck, v)
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	if strings.HasPrefix(h.Get("User-Agent"), "Mozilla") {
		return nil, nil, errors.New(`rayclient: user agent must not start with "Mozilla": Ray's dashboard treats such requests as browser traffic and rejects job submission, stop and delete`)
	}
	return h, secrets, nil
}
