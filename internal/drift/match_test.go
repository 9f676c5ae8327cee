package drift

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec/clusterspectest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// MatchVectors is python/tests/testdata/live_match.json: the cases every
// copy of the live-match rule (Go, driver.py, raytf_attach) must agree on.
type MatchVectors struct {
	AmountUnit float64 `json:"amount_unit"`
	Amounts    []struct {
		A    float64 `json:"a"`
		B    float64 `json:"b"`
		Same bool    `json:"same"`
	} `json:"amounts"`
	Resources []struct {
		A    map[string]float64 `json:"a"`
		B    map[string]float64 `json:"b"`
		Same bool               `json:"same"`
	} `json:"resources"`
	Groups []struct {
		Name   string `json:"name"`
		Record struct {
			ID          string            `json:"id"`
			BundleCount int               `json:"bundle_count"`
			BundleNodes map[string]string `json:"bundle_nodes"`
		} `json:"record"`
		Live []struct {
			ID          string            `json:"id"`
			State       string            `json:"state"`
			BundleNodes map[string]string `json:"bundle_nodes"`
		} `json:"live"`
		Want []string `json:"want"`
	} `json:"groups"`
}

func readMatchVectors(t *testing.T) MatchVectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(clusterspectest.RepoRoot(t), "python", "tests", "testdata", "live_match.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v MatchVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// mismatchKinds is how the vectors spell MatchRecorded's answer.
func mismatchKinds(ms []LiveMismatch) []string {
	out := []string{}
	for _, m := range ms {
		if m.Kind == MismatchMoved {
			out = append(out, fmt.Sprintf("%s:%d", m.Kind, m.Bundle))
		} else {
			out = append(out, m.Kind)
		}
	}
	return out
}

func TestMatchVectors(t *testing.T) {
	v := readMatchVectors(t)
	if v.AmountUnit != topology.ResourceUnit {
		t.Errorf("vectors use amount unit %g, contract %g", v.AmountUnit, topology.ResourceUnit)
	}
	for _, c := range v.Amounts {
		if SameAmount(c.A, c.B) != c.Same || SameAmount(c.B, c.A) != c.Same {
			t.Errorf("SameAmount(%v, %v) != %v", c.A, c.B, c.Same)
		}
	}
	for _, c := range v.Resources {
		if SameResources(c.A, c.B) != c.Same || SameResources(c.B, c.A) != c.Same {
			t.Errorf("SameResources(%v, %v) != %v", c.A, c.B, c.Same)
		}
	}
	for _, c := range v.Groups {
		rec := RecordedGroup{ID: c.Record.ID, BundleCount: c.Record.BundleCount, BundleNodes: map[int]string{}}
		for k, n := range c.Record.BundleNodes {
			i, _ := strconv.Atoi(k)
			rec.BundleNodes[i] = n
		}
		var live []raystate.PlacementGroup
		for _, l := range c.Live {
			g := raystate.PlacementGroup{PlacementGroupID: l.ID, Name: c.Name, State: l.State}
			for k, n := range l.BundleNodes {
				i, _ := strconv.Atoi(k)
				g.Bundles = append(g.Bundles, raystate.Bundle{BundleIndex: i, NodeID: n})
			}
			live = append(live, g)
		}
		if _, got := MatchRecorded(rec, live); !slices.Equal(mismatchKinds(got), c.Want) {
			t.Errorf("%s: mismatches %v, want %v", c.Name, mismatchKinds(got), c.Want)
		}
	}
}
