package rayclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// silentServer accepts requests and never answers them.
func silentServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An address that accepts and never answers is "no answer", whether the
// request timeout or the caller's deadline ends the wait, and the error
// names what was tried.
func TestNoAnswerFromSilentListener(t *testing.T) {
	addr := silentServer(t)
	c := newTestClient(t, addr, func(cfg *Config) { cfg.RequestTimeout = 50 * time.Millisecond; cfg.RetryMax = 1 })
	_, err := c.Version(context.Background())
	var re *RequestError
	if !IsNoAnswer(err) || !errors.As(err, &re) || re.Path != "/api/version" ||
		!strings.Contains(err.Error(), "request timeout 50ms") {
		t.Fatalf("per-attempt timeout: err = %v, want a no-answer RequestError for /api/version", err)
	}
	c = newTestClient(t, addr, func(cfg *Config) { cfg.RequestTimeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.ListNodes(ctx, ListOptions{}); !IsNoAnswer(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller's deadline: err = %v, want no answer", err)
	}
}

// A refused connection is not "no answer": it fails at once, and callers
// keep treating it as a cluster that is not there yet.
func TestRefusedIsNotNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	ln.Close()
	c := newTestClient(t, addr, func(cfg *Config) { cfg.RetryMax = -1 })
	_, err = c.Version(context.Background())
	if err == nil || IsNoAnswer(err) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("err = %v, want a refused connection that is not no-answer", err)
	}
}

// fullBacklog listens with a backlog of 0 and fills it with one connection
// that is never accepted: Linux then drops further connection attempts, so
// connecting hangs until the dialer gives up.
func fullBacklog(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skipf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Skipf("bind: %v", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Skipf("listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	var filled []net.Conn
	t.Cleanup(func() {
		for _, c := range filled {
			c.Close()
		}
	})
	// Fill the queue; the attempt that times out shows it is full.
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return "http://" + addr
		}
		filled = append(filled, c)
	}
	t.Skip("this kernel does not drop connection attempts to a full listen queue")
	return ""
}

// Connecting is bounded by the connect timeout, not the request timeout,
// and the error says which one ran out.
func TestConnectTimeout(t *testing.T) {
	addr := fullBacklog(t)
	c := newTestClient(t, addr, func(cfg *Config) {
		cfg.ConnectTimeout = 100 * time.Millisecond
		cfg.RequestTimeout = time.Minute
		cfg.RetryMax = -1
	})
	_, err := c.Version(context.Background())
	if !IsNoAnswer(err) || !strings.Contains(err.Error(), "connect timeout 100ms") {
		t.Fatalf("err = %v, want a connect timeout of 100ms", err)
	}
	if connect, request := c.Timeouts(); connect != 100*time.Millisecond || request != time.Minute {
		t.Fatalf("Timeouts() = %s, %s", connect, request)
	}
}

func TestConnectTimeoutDefault(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1")
	if connect, _ := c.Timeouts(); connect != DefaultConnectTimeout {
		t.Fatalf("connect timeout = %s, want %s", connect, DefaultConnectTimeout)
	}
}
