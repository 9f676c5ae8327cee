package bench

import (
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient/rayclienttest"
)

// Client is a dashboard client whose HTTP attempts, retries included, are
// counted (RequestCount).
type Client struct {
	*rayclient.Client
	requests *rayclienttest.Counter
}

// NewClient connects nothing yet; it builds a counted client for address.
func NewClient(address string) (*Client, error) {
	counter := new(rayclienttest.Counter)
	c, err := rayclient.New(rayclient.Config{Address: address, WrapTransport: counter.Wrap})
	if err != nil {
		return nil, err
	}
	return &Client{Client: c, requests: counter}, nil
}

// RequestCount is the number of HTTP attempts so far.
func (c *Client) RequestCount() int64 { return c.requests.Count() }
