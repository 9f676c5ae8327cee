// Package rayclienttest holds instruments for tests and benchmarks of code
// that uses rayclient; nothing in it is built into the provider.
package rayclienttest

import (
	"net/http"
	"sync/atomic"
)

// Counter counts the HTTP attempts of a rayclient.Client, retries included:
// set rayclient.Config.WrapTransport to its Wrap method.
type Counter struct {
	next http.RoundTripper
	n    atomic.Int64
}

// Wrap makes c the client's transport in front of next.
func (c *Counter) Wrap(next http.RoundTripper) http.RoundTripper {
	c.next = next
	return c
}

// RoundTrip counts the attempt and passes it on.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// Count is the number of attempts so far.
func (c *Counter) Count() int64 { return c.n.Load() }
