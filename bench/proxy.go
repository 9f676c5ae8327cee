package bench

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// ProxyEvent is one request that went through the CountingProxy.
type ProxyEvent struct {
	Method, Route string // route: path with ids replaced, e.g. GET /api/jobs/{id}
	Start, End    time.Time
	Status        int
	Bytes         int64 // response body bytes
	Body          []byte
}

// CountingProxy is a reverse proxy on loopback in front of the Ray dashboard
// that records every request. Point the provider's address at URL to count
// exactly what a `tofu plan` or `tofu apply` sends.
type CountingProxy struct {
	URL string

	srv    *http.Server
	ln     net.Listener
	mu     sync.Mutex
	events []ProxyEvent
	// OnResponse, when set, gets every job-API request (/api/jobs/...)
	// with its response body as soon as the answer was forwarded.
	OnResponse func(ev ProxyEvent, body []byte)
}

var jobIDRoute = regexp.MustCompile(`^/api/jobs/[^/]+`)

// Route normalizes a request path: query dropped, job ids replaced by {id}.
func Route(method, path string) string {
	if path != "/api/jobs/" && strings.HasPrefix(path, "/api/jobs/") {
		path = jobIDRoute.ReplaceAllString(path, "/api/jobs/{id}")
	}
	return method + " " + path
}

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
	keep   *bytes.Buffer // the response body, when kept
}

func (w *countingWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }
func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	if w.keep != nil {
		w.keep.Write(b[:n])
	}
	return n, err
}

// StartProxy listens on 127.0.0.1 (a free port) and forwards to target.
func StartProxy(target string) (*CountingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &CountingProxy{URL: "http://" + ln.Addr().String(), ln: ln}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	// A provider that exits cancels its last background request: not news.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev := ProxyEvent{Method: r.Method, Route: Route(r.Method, r.URL.Path), Start: time.Now()}
		if r.Method == http.MethodPost && r.URL.Path == "/api/jobs/" && r.Body != nil {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
			_ = r.Body.Close()
			ev.Body = body
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		cw := &countingWriter{ResponseWriter: w}
		p.mu.Lock()
		hook := p.OnResponse
		p.mu.Unlock()
		if hook != nil && strings.HasPrefix(r.URL.Path, "/api/jobs/") {
			cw.keep = &bytes.Buffer{}
		}
		rp.ServeHTTP(cw, r)
		ev.End, ev.Status, ev.Bytes = time.Now(), cw.status, cw.n
		if cw.keep != nil {
			hook(ev, decodeBody(w.Header().Get("Content-Encoding"), cw.keep.Bytes()))
		}
		p.mu.Lock()
		p.events = append(p.events, ev)
		p.mu.Unlock()
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Take returns the events recorded since the last Take and forgets them.
func (p *CountingProxy) Take() []ProxyEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	ev := p.events
	p.events = nil
	sort.Slice(ev, func(i, j int) bool { return ev[i].Start.Before(ev[j].Start) })
	return ev
}

// SetOnResponse sets (nil: clears) the OnResponse hook.
func (p *CountingProxy) SetOnResponse(f func(ev ProxyEvent, body []byte)) {
	p.mu.Lock()
	p.OnResponse = f
	p.mu.Unlock()
}

// Close stops the proxy.
func (p *CountingProxy) Close() { _ = p.srv.Close() }

// RouteCounts summarizes events as "GET /api/v0/placement_groups x51, ...",
// most frequent first.
func RouteCounts(events []ProxyEvent) string {
	n := map[string]int{}
	for _, e := range events {
		n[e.Route]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if n[keys[i]] != n[keys[j]] {
			return n[keys[i]] > n[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s x%d", k, n[k])
	}
	return strings.Join(parts, ", ")
}

// CountRoute counts events of one route.
func CountRoute(events []ProxyEvent, route string) int {
	c := 0
	for _, e := range events {
		if e.Route == route {
			c++
		}
	}
	return c
}

// TotalBytes sums the response bytes.
func TotalBytes(events []ProxyEvent) int64 {
	var b int64
	for _, e := range events {
		b += e.Bytes
	}
	return b
}

// Busy returns the union of the events' [Start, End] intervals: the wall
// time during which at least one request was in flight.
func Busy(events []ProxyEvent) time.Duration {
	if len(events) == 0 {
		return 0
	}
	ev := append([]ProxyEvent(nil), events...)
	sort.Slice(ev, func(i, j int) bool { return ev[i].Start.Before(ev[j].Start) })
	var total time.Duration
	cs, ce := ev[0].Start, ev[0].End
	for _, e := range ev[1:] {
		if e.Start.After(ce) {
			total += ce.Sub(cs)
			cs, ce = e.Start, e.End
		} else if e.End.After(ce) {
			ce = e.End
		}
	}
	return total + ce.Sub(cs)
}
