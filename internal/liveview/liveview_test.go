package liveview

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

func standinLiveView(t *testing.T, nodes int) (*LiveView, *standin.Server) {
	t.Helper()
	srv := standin.New(standin.Generate(standin.NVL72(nodes)))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	client, err := rayclient.New(rayclient.Config{Address: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	return NewLiveView(client), srv
}

// Many concurrent reads share one list; the snapshot reuses it; a write
// (invalidate) makes the next read list again and see the change.
func TestLiveViewOneGroupListPerProcess(t *testing.T) {
	view, srv := standinLiveView(t, 8)
	srv.SetPlacementGroups([]standin.PlacementGroup{{PlacementGroupID: "aa", Name: "scale-a", State: raystate.PlacementGroupStateCreated}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g, err := view.Groups(ctx); err != nil || len(g) != 1 {
				t.Errorf("Groups = %v, %v", g, err)
			}
		}()
	}
	wg.Wait()
	if _, err := view.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(rayclient.PathPlacementGroups); n != 1 {
		t.Fatalf("50 reads and a snapshot listed groups %d times, want 1", n)
	}
	srv.SetPlacementGroups(nil)
	view.InvalidateGroups()
	if g, _ := view.Groups(ctx); len(g) != 0 {
		t.Fatalf("after a write: %d groups, want 0", len(g))
	}
	if n := srv.Requests(rayclient.PathPlacementGroups); n != 2 {
		t.Fatalf("groups listed %d times, want 2", n)
	}
}

// A failed list is not kept.
func TestLiveViewGroupListErrorNotCached(t *testing.T) {
	view, srv := standinLiveView(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := view.Groups(ctx); err == nil {
		t.Fatal("cancelled list succeeded")
	}
	if _, err := view.Groups(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(rayclient.PathPlacementGroups); n != 1 {
		t.Fatalf("groups listed %d times, want 1", n)
	}
}
