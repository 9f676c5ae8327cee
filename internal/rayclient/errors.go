package rayclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
)

// APIError is returned when Ray answers with a non-2xx status, or with a
// state API envelope whose "result" is false.
type APIError struct {
	// StatusCode is the HTTP status of the last attempt.
	StatusCode int
	// Method and Path identify the request (Path is the escaped API path
	// without the query string, e.g. /api/jobs/my-job).
	Method, Path string
	// Message is Ray's own message: the state API envelope's "msg", the job
	// API's plain-text body, or the final exception message when the body is
	// a Python traceback.
	Message string
	// Body is the raw response body (truncated to 8 KiB, secrets redacted).
	Body string
	// Attempts is the number of HTTP attempts made for the call.
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("ray: ")
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(statusString(e.StatusCode))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (giving up after %d attempts)", e.Attempts)
	}
	return b.String()
}

func statusString(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("%d", code)
}

// RequestError is returned when no HTTP response could be obtained
// (connection refused/reset, TLS failure, per-attempt timeout, context
// cancellation) or the response body could not be read.
type RequestError struct {
	Method, Path string
	// Attempts is the number of HTTP attempts made.
	Attempts int
	Err      error
}

func (e *RequestError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("ray: %s %s: giving up after %d attempts: %v", e.Method, e.Path, e.Attempts, e.Err)
	}
	return fmt.Sprintf("ray: %s %s: %v", e.Method, e.Path, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// DecodeError is returned when a 2xx response body is not the JSON Ray is
// expected to send.
type DecodeError struct {
	Method, Path string
	StatusCode   int
	ContentType  string
	// Snippet is the beginning of the body (secrets redacted).
	Snippet string
	Err     error
}

func (e *DecodeError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "no content type"
	}
	return fmt.Sprintf("ray: %s %s: invalid response from Ray (%s, %s): %v; body starts with %q",
		e.Method, e.Path, statusString(e.StatusCode), ct, e.Err, e.Snippet)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// ErrTruncated is matched (errors.Is) by *TruncatedError.
var ErrTruncated = errors.New("ray: list result truncated")

// TruncatedError reports that a state API list returned fewer rows than
// exist. The rows that were returned are still handed back to the caller.
type TruncatedError struct {
	// Resource is the state API resource, e.g. "nodes".
	Resource string
	// Returned is the number of rows in the response.
	Returned int
	// Limit is the limit sent to the server.
	Limit int
	// Total, NumAfterTruncation and NumFiltered are Ray's counters.
	Total, NumAfterTruncation, NumFiltered int
}

func (e *TruncatedError) Error() string {
	if e.NumFiltered > e.Returned {
		return fmt.Sprintf("ray: list %s: result truncated by the server limit: %d of %d matching entries returned (limit %d); narrow the filters or raise the limit",
			e.Resource, e.Returned, e.NumFiltered, e.Limit)
	}
	return fmt.Sprintf("ray: list %s: result truncated at the data source: %d of %d entries retrieved (raise RAY_MAX_LIMIT_FROM_DATA_SOURCE on the cluster)",
		e.Resource, e.NumAfterTruncation, e.Total)
}

// Is makes errors.Is(err, ErrTruncated) work.
func (e *TruncatedError) Is(target error) bool { return target == ErrTruncated }

// ErrPartialFailure is matched (errors.Is) by *PartialFailureError.
var ErrPartialFailure = errors.New("ray: list result incomplete: partial failure")

// PartialFailureError reports a state API partial_failure_warning: some data
// sources did not answer, so rows may be missing. The rows that were
// returned are still handed back to the caller.
type PartialFailureError struct {
	Resource string
	Warning  string
}

func (e *PartialFailureError) Error() string {
	return fmt.Sprintf("ray: list %s: incomplete result: %s", e.Resource, e.Warning)
}

// Is makes errors.Is(err, ErrPartialFailure) work.
func (e *PartialFailureError) Is(target error) bool { return target == ErrPartialFailure }

// IsNotFound reports whether err is a Ray 404 for a missing object, e.g.
// "Job x does not exist". A bare router 404 ("404: Not Found", i.e. the
// endpoint itself does not exist - wrong address or dashboard module not
// loaded) is deliberately not treated as "not found" so that callers do not
// conclude a resource is gone when they are talking to the wrong server.
func IsNotFound(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound {
		return false
	}
	return !isGenericNotFound(ae.Message)
}

func isGenericNotFound(msg string) bool {
	m := strings.ToLower(strings.TrimSpace(msg))
	switch m {
	case "", "404: not found", "not found", "404 not found", "404 page not found":
		return true
	}
	return strings.HasPrefix(m, "<!doctype") || strings.HasPrefix(m, "<html")
}

// IsAlreadyExists reports whether err is Ray rejecting a job submission
// because the submission_id is taken. Ray 2.60 answers that with HTTP 500
// and a traceback ending in "ValueError: Job with submission_id X already
// exists. Please use a different submission_id."; 400 and 409 are accepted
// too.
func IsAlreadyExists(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.StatusCode {
	case http.StatusBadRequest, http.StatusConflict, http.StatusInternalServerError:
	default:
		return false
	}
	return strings.Contains(strings.ToLower(ae.Message), "already exists") ||
		strings.Contains(strings.ToLower(ae.Body), "already exists")
}

// IsUnauthorized reports whether Ray rejected the credentials: 401 (token
// missing) or 403 (token invalid).
func IsUnauthorized(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.StatusCode == http.StatusUnauthorized || ae.StatusCode == http.StatusForbidden)
}

// IsNoAnswer reports whether err means the address did not answer in time:
// connecting timed out, or a connection was made and no response came
// before the request timeout or the caller's deadline. A refused connection
// or an unknown host is not "no answer": those fail at once.
func IsNoAnswer(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isConnectTimeout reports whether err is an attempt that timed out while
// connecting (TCP or the TLS handshake) rather than waiting for an answer.
func isConnectTimeout(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Timeout() {
		return true
	}
	return strings.Contains(err.Error(), "TLS handshake timeout") // net/http's unexported error
}

// exceptionLine matches the final "SomeError: message" line of a Python
// traceback.
var exceptionLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Exit|Interrupt|Unavailable|Timeout)): (.+)$`)

var spaceRun = regexp.MustCompile(`\s+`)

const maxMessageLen = 2048

// extractMessage turns a Ray error body into a one-line message.
func extractMessage(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "{") {
		var env map[string]any
		if json.Unmarshal([]byte(s), &env) == nil {
			for _, k := range []string{"msg", "message", "error", "detail"} {
				if v, ok := env[k].(string); ok && strings.TrimSpace(v) != "" {
					return clip(strings.TrimSpace(v))
				}
			}
		}
	}
	if strings.Contains(s, "Traceback (most recent call last)") {
		lines := strings.Split(s, "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if m := exceptionLine.FindStringSubmatch(strings.TrimSpace(lines[i])); m != nil {
				return clip(strings.TrimSpace(m[2]))
			}
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); l != "" && l != "." {
				return clip(l)
			}
		}
	}
	return clip(spaceRun.ReplaceAllString(s, " "))
}

func clip(s string) string {
	if len(s) <= maxMessageLen {
		return s
	}
	return truncateUTF8(s, maxMessageLen) + "..."
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
