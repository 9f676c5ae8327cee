package rayclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// benchNodes is the bench's 10,000-node topology data source cluster: the
// largest answer the provider reads (about 6.8 MB with detail columns).
const benchNodes = 10000

func tenThousandNodes(b *testing.B) *httptest.Server {
	b.Helper()
	ts := httptest.NewServer(standin.New(standin.Generate(standin.NVL72(benchNodes))))
	b.Cleanup(ts.Close)
	return ts
}

// BenchmarkDecodeNodeList decodes the node list answer alone.
func BenchmarkDecodeNodeList(b *testing.B) {
	ts := tenThousandNodes(b)
	resp, err := http.Get(ts.URL + "/api/v0/nodes?detail=true&limit=10000")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if got, err := rayclient.DecodeNodeList(body); err != nil || got != benchNodes {
			b.Fatalf("decoded %d nodes: %v", got, err)
		}
	}
}

// BenchmarkListNodes is what the topology data source pays for its read:
// the request to a local stand-in, the decode and the envelope's checks.
func BenchmarkListNodes(b *testing.B) {
	ts := tenThousandNodes(b)
	c, err := rayclient.New(rayclient.Config{Address: ts.URL, RetryMax: -1})
	if err != nil {
		b.Fatal(err)
	}
	opts := rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("state", "ALIVE")}, Detail: true}
	b.ReportAllocs()
	for b.Loop() {
		if nodes, err := c.ListNodes(context.Background(), opts); err != nil || len(nodes) != benchNodes {
			b.Fatalf("listed %d nodes: %v", len(nodes), err)
		}
	}
}
