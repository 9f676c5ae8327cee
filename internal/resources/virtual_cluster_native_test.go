package resources

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/session"
)

// The server's version is asked once per provider process, and a feature it
// lacks is an error naming the attribute and the version.
func TestCheckRayVersionAsksOnceAndGates(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/version" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		_, _ = w.Write([]byte(`{"version": "4", "ray_version": "2.55.1", "ray_commit": "x", "session_name": "s"}`))
	}))
	defer srv.Close()
	client, err := rayclient.New(rayclient.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	data := session.New(client, "ns", "python", "test", nil)
	spec := clusterspec.Spec{Name: "vc", BundleCtPerNode: []int{1}, UseUnifiedPG: true,
		TopologyStrategy: map[string]string{"raytf.io/nvlink-domain": clusterspec.TopologyLabelStrategy}}.WithDefaults()
	for i := 0; i < 3; i++ {
		var diags diag.Diagnostics
		checkRayVersion(context.Background(), data, spec, &diags)
		if diags.ErrorsCount() != 1 || !strings.Contains(diags.Errors()[0].Detail(), "Ray 2.55.1") {
			t.Fatalf("plan %d: %v", i, diags)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("version asked %d times, want once", calls.Load())
	}
	var diags diag.Diagnostics
	spec.TopologyStrategy = nil
	checkRayVersion(context.Background(), data, spec, &diags)
	if len(diags) != 0 {
		t.Fatalf("2.55.1 without topology_strategy: %v", diags)
	}
}
