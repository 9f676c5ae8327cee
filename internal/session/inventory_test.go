package session

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

func pg(name string, detached bool, bundles ...map[string]float64) raystate.PlacementGroup {
	g := raystate.PlacementGroup{Name: name, State: "CREATED", IsDetached: detached}
	for _, b := range bundles {
		g.Bundles = append(g.Bundles, raystate.Bundle{UnitResources: b})
	}
	return g
}

var cpu1 = map[string]float64{"CPU": 1}

// Group names sort into clusters ("<name>-unified", "<name>-node<i>") and
// other groups; unnamed groups and names outside the prefix are left out.
func TestListCandidates(t *testing.T) {
	live := []raystate.PlacementGroup{
		pg("a-node1", true, cpu1), pg("a-node0", true, cpu1), pg("b-unified", true, cpu1),
		pg("scratch", true, cpu1), pg("", true, cpu1), pg("x-nodes", true, cpu1), pg("other-node0", true, cpu1),
	}
	got := ListCandidates(live, "")
	var names []string
	for _, c := range got {
		names = append(names, c.Name+map[bool]string{true: "/cluster", false: "/group"}[c.Cluster])
	}
	want := "a/cluster b/cluster other/cluster scratch/group x-nodes/group"
	if strings.Join(names, " ") != want {
		t.Fatalf("candidates %v, want %s", names, want)
	}
	if got[0].Groups[0].Name != "a-node0" || len(got[0].Groups) != 2 {
		t.Fatalf("cluster a's groups: %+v", got[0].Groups)
	}
	if got := ListCandidates(live, "a"); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("prefix a: %+v", got)
	}
}

// Whoever owns a record decides its class; groups without a record are
// no_state when a cluster could adopt them, not_a_cluster when none can.
func TestListClass(t *testing.T) {
	mine := &record.Manifest{Owner: "tok-mine"}
	for _, tc := range []struct {
		rec     *record.Manifest
		problem string
		want    string
	}{
		{mine, "", OwnedHere},
		{&record.Manifest{Owner: "tok-other"}, "", OwnedOther},
		{&record.Manifest{}, "", OwnedNone},
		{nil, "", OwnedNone},
		{nil, "bad shape", NotACluster},
	} {
		if got := ListClass(tc.rec, []string{"tok-mine"}, tc.problem); got != tc.want {
			t.Errorf("ListClass(%+v, %q) = %s, want %s", tc.rec, tc.problem, got, tc.want)
		}
	}
	if got := ListClass(mine, nil, ""); got != OwnedOther {
		t.Errorf("without owner_ids no record is this state's: got %s", got)
	}
}

// Groups a ray_virtual_cluster cannot declare are named with the reason.
func TestAdoptProblem(t *testing.T) {
	gpu2 := map[string]float64{"CPU": 1, "GPU": 2}
	for _, tc := range []struct {
		c    ListCandidate
		want string
	}{
		{ListCandidate{Name: "ok", Cluster: true, Groups: []raystate.PlacementGroup{pg("ok-node0", true, cpu1, cpu1), pg("ok-node1", true, cpu1)}}, ""},
		{ListCandidate{Name: "scratch", Groups: []raystate.PlacementGroup{pg("scratch", true, cpu1)}}, "its name is not a virtual cluster's"},
		{ListCandidate{Name: "gap", Cluster: true, Groups: []raystate.PlacementGroup{pg("gap-node1", true, cpu1)}}, `leave out "gap-node0"`},
		{ListCandidate{Name: "both", Cluster: true, Groups: []raystate.PlacementGroup{pg("both-unified", true, cpu1), pg("both-node0", true, cpu1)}}, "one or the other"},
		{ListCandidate{Name: "job", Cluster: true, Groups: []raystate.PlacementGroup{pg("job-node0", false, cpu1)}}, "not detached"},
		{ListCandidate{Name: "mix", Cluster: true, Groups: []raystate.PlacementGroup{pg("mix-unified", true, cpu1, map[string]float64{"CPU": 2})}}, "differ"},
		{ListCandidate{Name: "g", Cluster: true, Groups: []raystate.PlacementGroup{pg("g-node0", true, gpu2)}}, "2 GPUs"},
		{ListCandidate{Name: "h", Cluster: true, Groups: []raystate.PlacementGroup{pg("h-node0", true, map[string]float64{"CPU": 0.5})}}, "0.5 CPUs"},
	} {
		got := AdoptProblem(tc.c)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("AdoptProblem(%s) = %q, want %q", tc.c.Name, got, tc.want)
		}
	}
}

// The warning about groups no cluster can adopt gives their shape and,
// when their bundles fit a cluster, the arguments of one.
func TestNotAClusterDetail(t *testing.T) {
	c := ListCandidate{Name: "scratch", Groups: []raystate.PlacementGroup{pg("scratch", true, map[string]float64{"CPU": 2, "GPU": 1, "rack": 0.1},
		map[string]float64{"CPU": 2, "GPU": 1, "rack": 0.1})}}
	got := NotAClusterDetail(c, "ns", AdoptProblem(c))
	for _, want := range []string{`"scratch": CREATED, detached, 2 bundles of {CPU = 2, GPU = 1, rack = 0.1}`,
		"bundle_ct_per_node_list     = [2]", "use_gpus                    = true", "max_colocated_worker_groups = 2",
		"node_resource_constraints   = [{rack = 0.1}]"} {
		if !strings.Contains(got, want) {
			t.Errorf("detail lacks %q:\n%s", want, got)
		}
	}
	c.Groups = []raystate.PlacementGroup{pg("scratch", true, cpu1, map[string]float64{"CPU": 2})}
	if got := NotAClusterDetail(c, "ns", AdoptProblem(c)); !strings.Contains(got, "No ray_virtual_cluster has this shape either") ||
		strings.Contains(got, "bundle_ct_per_node_list") {
		t.Errorf("a shape no cluster has gets no arguments:\n%s", got)
	}
}
