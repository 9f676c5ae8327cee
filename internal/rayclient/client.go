package rayclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

const (
	// maxResponseBytes bounds how much of a response body is read.
	maxResponseBytes = 64 << 20
	// maxErrorBodyBytes bounds APIError.Body.
	maxErrorBodyBytes = 8 << 10
	// peekBytes bounds how much of a 500 body the retry policy inspects.
	peekBytes = 64 << 10
	// snippetBytes bounds DecodeError.Snippet.
	snippetBytes = 256
)

// Client talks to one Ray dashboard. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	address  string
	headers  http.Header
	host     string
	secrets  []string
	logger   Logger
	retryMax int
	waitMin  time.Duration
	waitMax  time.Duration
	timeout  time.Duration
	connect  time.Duration
	cfg      Config // as given, for HandOffConfig

	rt http.RoundTripper
}

// HandOffConfig is the configuration this client was built from, without
// its logger and transport wrapper: what another process needs to reach
// the same dashboard with the same credentials.
func (c *Client) HandOffConfig() Config {
	cfg := c.cfg
	cfg.Logger, cfg.WrapTransport = nil, nil
	return cfg
}

// New validates cfg and builds a Client. It does not contact the server.
func New(cfg Config) (*Client, error) {
	base, err := parseAddress(cfg.Address)
	if err != nil {
		return nil, err
	}
	token, err := normalizeToken(cfg.Token)
	if err != nil {
		return nil, err
	}
	headers, secrets, err := buildHeaders(cfg, token)
	if err != nil {
		return nil, err
	}
	tlsCfg, err := buildTLSConfig(cfg)
	if err != nil {
		return nil, err
	}

	c := &Client{
		base:     base,
		address:  base.String(),
		headers:  headers,
		secrets:  secrets,
		logger:   cfg.Logger,
		retryMax: cfg.RetryMax,
		waitMin:  cfg.RetryWaitMin,
		waitMax:  cfg.RetryWaitMax,
		timeout:  cfg.RequestTimeout,
		connect:  cfg.ConnectTimeout,
		cfg:      cfg,
	}
	if h := headers.Get("Host"); h != "" {
		c.host = h
		headers.Del("Host")
	}
	switch {
	case c.retryMax == 0:
		c.retryMax = DefaultRetryMax
	case c.retryMax < 0:
		c.retryMax = 0
	}
	if c.waitMin <= 0 {
		c.waitMin = DefaultRetryWaitMin
	}
	if c.waitMax <= 0 {
		c.waitMax = DefaultRetryWaitMax
	}
	if c.waitMax < c.waitMin {
		c.waitMax = c.waitMin
	}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	if c.connect <= 0 {
		c.connect = DefaultConnectTimeout
	}

	tr := cleanhttp.DefaultPooledTransport()
	tr.TLSClientConfig = tlsCfg
	tr.DialContext = (&net.Dialer{Timeout: c.connect, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = c.connect
	c.rt = tr
	if cfg.WrapTransport != nil {
		c.rt = cfg.WrapTransport(tr)
	}
	return c, nil
}

// Address returns the normalized dashboard base URL (no trailing slash).
func (c *Client) Address() string { return c.address }

// Timeouts returns the connect and per-attempt request timeouts in effect.
func (c *Client) Timeouts() (connect, request time.Duration) { return c.connect, c.timeout }

// String implements fmt.Stringer without revealing credentials.
func (c *Client) String() string {
	if c == nil {
		return "rayclient.Client(nil)"
	}
	return fmt.Sprintf("rayclient.Client{Address:%q}", c.address)
}

// GoString implements fmt.GoStringer without revealing credentials.
func (c *Client) GoString() string { return c.String() }

// request describes one logical API call.
type request struct {
	method string
	// path is the escaped API path, e.g. /api/jobs/abc.
	path  string
	query url.Values
	// body, when non-nil, is sent as JSON.
	body any
	// timeout, when larger than the configured RequestTimeout, extends the
	// per-attempt timeout (used for server-side timeouts).
	timeout time.Duration
}

type response struct {
	status      int
	contentType string
	body        []byte
	attempts    int
}

func (c *Client) debug(ctx context.Context, msg string, fields map[string]any) {
	if c.logger == nil {
		return
	}
	for k, v := range fields {
		if s, ok := v.(string); ok {
			fields[k] = c.redact(s)
		}
	}
	c.logger.Debug(ctx, msg, fields)
}

// redact removes any configured secret from s.
func (c *Client) redact(s string) string {
	for _, sec := range c.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redactedPlaceholder)
		}
	}
	return s
}

func (c *Client) endpoint(path string, q url.Values) string {
	s := c.address + path
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// do performs one logical call with retries. A non-2xx final status is
// returned as *APIError.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, &RequestError{Method: r.method, Path: r.path, Err: err}
	}
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, err
	}

	timeout := c.timeout
	if r.timeout > timeout {
		timeout = r.timeout
	}
	attempts := 0
	resp, err := c.retryClient(r, timeout, &attempts).Do(req)
	if err != nil {
		var ne net.Error
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		} else if errors.As(err, &ne) && ne.Timeout() {
			err = fmt.Errorf("HTTP attempt timed out (%s): %w", c.attemptLimit(err, timeout), err)
		}
		c.debug(ctx, "ray: request failed", map[string]any{
			"method": r.method, "path": r.path, "attempts": attempts, "error": err.Error(),
		})
		return nil, &RequestError{Method: r.method, Path: r.path, Attempts: attempts, Err: c.redactErr(err)}
	}
	defer resp.Body.Close()

	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return nil, &RequestError{Method: r.method, Path: r.path, Attempts: attempts, Err: fmt.Errorf("reading response body: %w", c.redactErr(err))}
	}
	if len(data) > maxResponseBytes {
		return nil, &RequestError{Method: r.method, Path: r.path, Attempts: attempts, Err: fmt.Errorf("response body exceeds %d bytes", maxResponseBytes)}
	}

	out := &response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: data, attempts: attempts}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.apiError(r, out, extractMessage(data))
	}
	return out, nil
}

// newRequest builds the HTTP request for r: its JSON body, the client's
// headers and Host override. A failure is a *RequestError.
func (c *Client) newRequest(ctx context.Context, r request) (*retryablehttp.Request, error) {
	var body any
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, &RequestError{Method: r.method, Path: r.path, Err: fmt.Errorf("encoding request body: %w", err)}
		}
		body = b
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, r.method, c.endpoint(r.path, r.query), body)
	if err != nil {
		return nil, &RequestError{Method: r.method, Path: r.path, Err: err}
	}
	for k, v := range c.headers {
		req.Header[k] = append([]string(nil), v...)
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.host != "" {
		req.Host = c.host
	}
	return req, nil
}

// retryClient is the retrying HTTP client for one request r: each attempt
// limited to timeout, logged at debug level and counted into *attempts, and
// the last response of an exhausted retry budget handed back to the caller.
func (c *Client) retryClient(r request, timeout time.Duration, attempts *int) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   &http.Client{Transport: c.rt, Timeout: timeout},
		Logger:       nil, // never let retryablehttp print anything
		RetryWaitMin: c.waitMin,
		RetryWaitMax: c.waitMax,
		RetryMax:     c.retryMax,
		CheckRetry:   checkRetry,
		Backoff:      backoff,
		RequestLogHook: func(_ retryablehttp.Logger, hr *http.Request, i int) {
			*attempts = i + 1
			c.debug(hr.Context(), "ray: sending request", map[string]any{
				"method": r.method, "path": r.path, "query": r.query.Encode(), "attempt": i + 1,
			})
		},
		ResponseLogHook: func(_ retryablehttp.Logger, resp *http.Response) {
			c.debug(resp.Request.Context(), "ray: received response", map[string]any{
				"method": r.method, "path": r.path, "status": resp.StatusCode, "attempt": *attempts,
			})
		},
		ErrorHandler: func(resp *http.Response, err error, _ int) (*http.Response, error) {
			if resp != nil && err == nil {
				// Retry budget exhausted on a retryable status: hand the last
				// response back so the caller can report Ray's message.
				return resp, nil
			}
			if resp != nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekBytes))
				resp.Body.Close()
			}
			return nil, err
		},
	}
}

// attemptLimit names the timeout an attempt that timed out ran into:
// connecting, or waiting for the answer.
func (c *Client) attemptLimit(err error, request time.Duration) string {
	if isConnectTimeout(err) {
		return fmt.Sprintf("connect timeout %s", c.connect)
	}
	return fmt.Sprintf("request timeout %s", request)
}

func (c *Client) apiError(r request, resp *response, msg string) *APIError {
	raw := truncateUTF8(string(resp.body), maxErrorBodyBytes)
	return &APIError{
		StatusCode: resp.status,
		Method:     r.method,
		Path:       r.path,
		Message:    c.redact(msg),
		Body:       c.redact(raw),
		Attempts:   resp.attempts,
	}
}

// redactErr returns err unchanged unless its text contains a secret, in
// which case the text is redacted (the chain is kept for errors.Is/As).
func (c *Client) redactErr(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	if rs := c.redact(s); rs != s {
		return &redactedError{msg: rs, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// decode unmarshals a 2xx JSON body into v, reporting bad JSON clearly.
func (c *Client) decode(r request, resp *response, v any) error {
	trimmed := bytes.TrimSpace(resp.body)
	var err error
	switch {
	case len(trimmed) == 0:
		err = errors.New("empty body")
	case bytes.Equal(trimmed, []byte("null")):
		err = errors.New("null body")
	default:
		err = json.Unmarshal(trimmed, v)
	}
	if err == nil {
		return nil
	}
	return &DecodeError{
		Method:      r.method,
		Path:        r.path,
		StatusCode:  resp.status,
		ContentType: resp.contentType,
		Snippet:     c.redact(truncateUTF8(string(trimmed), snippetBytes)),
		Err:         err,
	}
}

// checkRetry retries connection errors, 429 and 5xx (except 501), never
// other statuses, and stops as soon as the context is done.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		// Connection-level failure. DefaultRetryPolicy refuses to retry TLS
		// verification failures, bad schemes, invalid headers and redirect
		// loops, and retries everything else.
		return retryablehttp.DefaultRetryPolicy(ctx, nil, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return true, nil
	case resp.StatusCode == http.StatusNotImplemented:
		return false, nil
	case resp.StatusCode >= 500:
		if resp.StatusCode == http.StatusInternalServerError && deterministicFailure(resp) {
			return false, nil
		}
		return true, nil
	}
	return false, nil
}

// deterministicMarkers identify HTTP 500 bodies from Ray's job API that will
// not change on retry:
//   - the head wrapping a 4xx from the job agent ("Request failed with status
//     code 400: ..."), e.g. a duplicate submission_id or an invalid request;
//   - "already exists" (duplicate submission_id);
//   - "non-terminal state" (deleting a job that is still running).
var deterministicMarkers = []string{
	"Request failed with status code 4",
	"already exists",
	"non-terminal state",
}

// deterministicFailure peeks at (and restores) the body of a 500 response.
func deterministicFailure(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, peekBytes))
	resp.Body = &peekedBody{Reader: io.MultiReader(bytes.NewReader(head), resp.Body), closer: resp.Body}
	if err != nil {
		return false
	}
	s := string(head)
	for _, m := range deterministicMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

type peekedBody struct {
	io.Reader
	closer io.Closer
}

func (p *peekedBody) Close() error { return p.closer.Close() }

// backoff is exponential with "equal jitter" (a random value in
// [base/2, base], base = min*2^attempt capped at max). A Retry-After header
// on 429/503 is honoured, capped at MaxRetryAfter.
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(d, MaxRetryAfter)
		}
	}
	base := maxWait
	if attempt < 30 {
		if b := minWait << uint(attempt); b > 0 && b < maxWait {
			base = b
		}
	}
	half := base / 2
	d := half + time.Duration(rand.Int64N(int64(half)+1))
	return max(d, minWait)
}

// parseRetryAfter parses delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// escapeID validates a job/submission id and escapes it as one path segment.
func escapeID(id string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", errors.New("rayclient: job id must not be empty")
	}
	if id == "." || id == ".." {
		return "", fmt.Errorf("rayclient: invalid job id %q", id)
	}
	return url.PathEscape(id), nil
}

// Version is the answer of GET /api/version.
type Version struct {
	// Version is the dashboard API version (e.g. "4").
	Version     string `json:"version"`
	RayVersion  string `json:"ray_version"`
	RayCommit   string `json:"ray_commit"`
	SessionName string `json:"session_name"`
}

// Version calls GET /api/version.
func (c *Client) Version(ctx context.Context) (*Version, error) {
	r := request{method: http.MethodGet, path: "/api/version"}
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var v Version
	if err := c.decode(r, resp, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
