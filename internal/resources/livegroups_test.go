package resources

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

const groupsPath = "/api/v0/placement_groups"

func standinProviderData(t *testing.T, nodes int) (*ProviderData, *standin.Server) {
	t.Helper()
	srv := standin.New(standin.Generate(standin.NVL72(nodes)))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client, err := rayclient.New(rayclient.Config{Address: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	return NewProviderData(client, "terraform-ray", "python", "test", nil), srv
}

// Many concurrent reads share one list; the snapshot reuses it; a write
// (invalidate) makes the next read list again and see the change.
func TestLiveGroupsOneListPerProcess(t *testing.T) {
	data, srv := standinProviderData(t, 8)
	srv.SetPlacementGroups([]standin.PlacementGroup{{PlacementGroupID: "aa", Name: "scale-a", State: rayclient.PlacementGroupStateCreated}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g, err := data.LiveGroups(ctx); err != nil || len(g) != 1 {
				t.Errorf("LiveGroups = %v, %v", g, err)
			}
		}()
	}
	wg.Wait()
	if _, err := data.CachedSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(groupsPath); n != 1 {
		t.Fatalf("50 reads and a snapshot listed groups %d times, want 1", n)
	}
	srv.SetPlacementGroups(nil)
	data.InvalidateLiveGroups()
	if g, _ := data.LiveGroups(ctx); len(g) != 0 {
		t.Fatalf("after a write: %d groups, want 0", len(g))
	}
	if n := srv.Requests(groupsPath); n != 2 {
		t.Fatalf("groups listed %d times, want 2", n)
	}
}

// A failed list is not kept.
func TestLiveGroupsErrorNotCached(t *testing.T) {
	data, srv := standinProviderData(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := data.LiveGroups(ctx); err == nil {
		t.Fatal("cancelled list succeeded")
	}
	if _, err := data.LiveGroups(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(groupsPath); n != 1 {
		t.Fatalf("groups listed %d times, want 1", n)
	}
}
