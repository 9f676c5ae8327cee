package acctest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FaultMode is what FaultProxy does to a request a rule selects.
type FaultMode int

const (
	// Fault503 answers 503 Service Unavailable without forwarding.
	Fault503 FaultMode = iota + 1
	// FaultReset resets the connection (hijack, SO_LINGER 0, close) without forwarding.
	FaultReset
	// FaultResetAfterForward forwards the request to Ray and then resets the
	// connection instead of answering: Ray acted on it, the client never hears.
	FaultResetAfterForward
	// FaultAlternate answers 503 and resets the connection in turn.
	FaultAlternate
)

func (m FaultMode) String() string {
	switch m {
	case Fault503:
		return "503"
	case FaultReset:
		return "reset"
	case FaultResetAfterForward:
		return "reset-after-forward"
	case FaultAlternate:
		return "alternate"
	}
	if m == 0 {
		return "forward"
	}
	return fmt.Sprintf("FaultMode(%d)", int(m))
}

// FaultRule selects the requests to break. With First and For both zero it
// breaks every matching request until the next Inject or Clear.
type FaultRule struct {
	Mode FaultMode
	// First breaks only the first N selected requests.
	First int
	// Every selects only every Nth matching request (0 or 1: all of them),
	// so that the faults spread over many calls instead of exhausting one
	// call's retries.
	Every int
	// For breaks matching requests only during this window, from Inject.
	For time.Duration
	// Method, Path (exact) and PathPrefix narrow the matching requests.
	Method, Path, PathPrefix string
	// Distinct breaks each distinct request (method, path, query and body)
	// once only: its retries go through. With FaultResetAfterForward this
	// loses the first answer of every job submission.
	Distinct bool
}

// FaultStats counts what the proxy saw.
type FaultStats struct {
	// Requests is every request received, Forwarded those passed to Ray
	// (FaultResetAfterForward ones included), Faults those broken.
	Requests, Forwarded, Faults int64
	// RuleFaults is the number of faults of the current rule.
	RuleFaults int64
}

// FaultProxy is a reverse proxy on 127.0.0.1 in front of a Ray dashboard that
// injects 503s and connection resets.
type FaultProxy struct {
	// URL is the proxy's base URL, for the provider's address.
	URL string
	// Verbose logs every request to the test log.
	Verbose bool

	t   testing.TB
	srv *httptest.Server
	rp  *httputil.ReverseProxy

	mu         sync.Mutex
	rule       *FaultRule
	ruleStart  time.Time
	ruleHits   int // matching requests seen under the current rule (in the window)
	ruleFaults int64
	ruleSeen   map[string]bool // Distinct: requests already broken
	faultLog   []string

	requests, forwarded, faults atomic.Int64
}

type resetKey struct{}

var errResetAfterForward = errors.New("faultproxy: reset after forward")

// NewFaultProxy starts a proxy for target (a dashboard URL); it is closed
// when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		t.Fatalf("fault proxy: bad target %q: %v", target, err)
	}
	if host := u.Hostname(); !isLoopback(host) {
		t.Fatalf("fault proxy: target %q is not a loopback address", target)
	}
	p := &FaultProxy{t: t}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Header.Del("X-Forwarded-For")
		},
		Transport: &http.Transport{
			Proxy:             nil,
			DialContext:       (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			ForceAttemptHTTP2: false,
			MaxIdleConns:      16,
			IdleConnTimeout:   30 * time.Second,
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request != nil && resp.Request.Context().Value(resetKey{}) != nil {
				_, _ = io.Copy(io.Discard, resp.Body) // let Ray finish answering
				resp.Body.Close()
				return errResetAfterForward
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, errResetAfterForward) {
				resetConn(w)
				return
			}
			http.Error(w, "fault proxy: upstream error: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve)) // listens on 127.0.0.1
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Inject makes r the active rule (replacing any other) and restarts its counters.
func (p *FaultProxy) Inject(r FaultRule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.ruleStart, p.ruleHits, p.ruleFaults, p.ruleSeen = &r, time.Now(), 0, 0, map[string]bool{}
}

// Stats returns the counters.
func (p *FaultProxy) Stats() FaultStats {
	p.mu.Lock()
	rf := p.ruleFaults
	p.mu.Unlock()
	return FaultStats{Requests: p.requests.Load(), Forwarded: p.forwarded.Load(), Faults: p.faults.Load(), RuleFaults: rf}
}

// FaultLog lists the broken requests ("<mode> <method> <path>") in order.
func (p *FaultProxy) FaultLog() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.faultLog...)
}

// decide returns the fault for r, or 0 to forward it. It may replace
// r.Body with a copy.
func (p *FaultProxy) decide(r *http.Request) FaultMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	rule := p.rule
	if rule == nil {
		return 0
	}
	if (rule.Method != "" && !strings.EqualFold(rule.Method, r.Method)) ||
		(rule.Path != "" && r.URL.Path != rule.Path) ||
		(rule.PathPrefix != "" && !strings.HasPrefix(r.URL.Path, rule.PathPrefix)) {
		return 0
	}
	if rule.For > 0 && time.Since(p.ruleStart) > rule.For {
		return 0
	}
	var key string
	if rule.Distinct {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), body...))
		if key = hex.EncodeToString(sum[:]); p.ruleSeen[key] {
			return 0
		}
	}
	p.ruleHits++
	if rule.Every > 1 && p.ruleHits%rule.Every != 0 {
		return 0
	}
	if rule.First > 0 && p.ruleFaults >= int64(rule.First) {
		return 0
	}
	mode := rule.Mode
	if mode == FaultAlternate {
		mode = Fault503
		if p.ruleFaults%2 == 1 {
			mode = FaultReset
		}
	}
	if key != "" {
		p.ruleSeen[key] = true
	}
	p.ruleFaults++
	p.faultLog = append(p.faultLog, fmt.Sprintf("%s %s %s", mode, r.Method, r.URL.Path))
	return mode
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	mode := p.decide(r)
	if p.Verbose {
		p.t.Logf("fault proxy: %s %s %s -> %v", time.Now().Format("15:04:05.000"), r.Method, r.URL.RequestURI(), mode)
	}
	switch mode {
	case Fault503:
		p.faults.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "fault proxy: injected 503\n")
	case FaultReset:
		p.faults.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		resetConn(w)
	case FaultResetAfterForward:
		p.faults.Add(1)
		p.forwarded.Add(1)
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resetKey{}, true)))
	default:
		p.forwarded.Add(1)
		p.rp.ServeHTTP(w, r)
	}
}

// resetConn aborts the client connection with a TCP RST.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fault proxy: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(fmt.Sprintf("fault proxy: hijack: %v", err))
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
