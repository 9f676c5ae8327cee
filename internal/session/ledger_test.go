package session

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestClaimPortsReportsOverlaps(t *testing.T) {
	d := &Session{}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}, nil); len(clash) != 0 {
		t.Fatalf("first claim clashed: %v", clash)
	}
	if clash := d.ClaimPorts("infer", topology.PortRange{Low: 3000, High: 4999}, nil); len(clash) != 0 {
		t.Fatalf("disjoint ranges clashed: %v", clash)
	}
	clash := d.ClaimPorts("policy", topology.PortRange{Low: 1900, High: 2100}, nil)
	if len(clash) != 1 || !strings.HasPrefix(clash[0], "train [1400, 1999) on any node") {
		t.Fatalf("overlap not reported: %v", clash)
	}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}, nil); len(clash) != 1 {
		t.Fatalf("re-claiming the same cluster: %v", clash)
	}
}

// Ports are unique per node only: clusters pinned to disjoint nodes (chained
// select_nodes clusters) never clash; a clash names the node both may use.
func TestClaimPortsOnlyWhereNodesMeet(t *testing.T) {
	d := &Session{}
	same := topology.PortRange{Low: 1400, High: 1999}
	if clash := d.ClaimPorts("train", same, []string{"n1", "n2"}); len(clash) != 0 {
		t.Fatalf("first claim clashed: %v", clash)
	}
	if clash := d.ClaimPorts("inference", same, []string{"n3"}); len(clash) != 0 {
		t.Fatalf("disjoint nodes clashed: %v", clash)
	}
	if clash := d.ClaimPorts("teacher", same, []string{"n4", "n5"}); len(clash) != 0 {
		t.Fatalf("third chained cluster clashed: %v", clash)
	}
	clash := d.ClaimPorts("critic", same, []string{"n5", "n2"})
	if len(clash) != 2 || clash[0] != "teacher [1400, 1999) on node n5" || clash[1] != "train [1400, 1999) on node n2" {
		t.Fatalf("shared nodes not named: %v", clash)
	}
	// A cluster not pinned to its nodes may meet any of them.
	clash = d.ClaimPorts("free", same, nil)
	if len(clash) != 4 || clash[1] != "inference [1400, 1999) on node n3" || clash[0] != "critic [1400, 1999) on node n2, node n5" {
		t.Fatalf("unpinned cluster: %v", clash)
	}
	if clash := d.ClaimPorts("wide", topology.PortRange{Low: 1000, High: 1500}, []string{"a", "b", "c", "d", "e"}); len(clash) != 1 ||
		clash[0] != "free [1400, 1999) on node a, node b, node c and 2 more" {
		t.Fatalf("many shared nodes: %v", clash)
	}
}

// claimSpec is a cluster of name in namespace with per-node bundle counts.
func claimSpec(namespace, name string, counts ...int) clusterspec.Spec {
	return clusterspec.Spec{Namespace: namespace, Name: name, BundleCtPerNode: counts}
}

func TestClaimNameTellsDuplicatesFromReplans(t *testing.T) {
	d := &Session{}
	// Two new clusters of one configuration with the same name.
	if d.ClaimName(claimSpec("ns", "a", 1), "", false) {
		t.Fatal("first claim clashed")
	}
	if !d.ClaimName(claimSpec("ns", "a", 1), "", false) {
		t.Fatal("second new cluster of the same name not reported")
	}
	// Another namespace is another name.
	if d.ClaimName(claimSpec("other", "a", 1), "", false) {
		t.Fatal("namespaces are separate")
	}
	// An existing cluster planned again (same owner) is no clash; a new one is.
	if d.ClaimName(claimSpec("ns", "b", 1), "owner1", false) {
		t.Fatal("first plan of an existing cluster clashed")
	}
	if d.ClaimName(claimSpec("ns", "b", 1), "owner1", false) {
		t.Fatal("re-plan of the same cluster clashed")
	}
	if !d.ClaimName(claimSpec("ns", "b", 2), "", false) {
		t.Fatal("a new cluster beside an existing one of the same name not reported")
	}
	// A replacement is planned twice: with its state, then without; only a
	// third cluster of the name clashes.
	if d.ClaimName(claimSpec("ns", "c", 1), "owner2", true) || d.ClaimName(claimSpec("ns", "c", 1), "", false) {
		t.Fatal("a replacement's create half clashed")
	}
	if !d.ClaimName(claimSpec("ns", "c", 1), "", false) {
		t.Fatal("a duplicate beside a replacement not reported")
	}
}

// Terraform plans a forced replacement (-replace) as an update the provider
// sees as no change, then its create half; a tainted cluster only as the
// create half after its refresh. Either takes up the cluster's own claim
// once, when it declares the same shape.
func TestClaimNameTakesForcedReplacements(t *testing.T) {
	d := &Session{}
	if d.ClaimName(claimSpec("ns", "r", 1, 1), "owner1", false) || d.ClaimName(claimSpec("ns", "r", 1, 1), "", false) {
		t.Fatal("the create half of -replace clashed")
	}
	if !d.ClaimName(claimSpec("ns", "r", 1, 1), "", false) {
		t.Fatal("a second create of the name beside -replace not reported")
	}
	d.NoteRefreshed(claimSpec("ns", "t", 2), "owner2")
	if !d.PlannedHere("ns", "t", "owner2") {
		t.Fatal("a refreshed cluster's groups are not its state's own")
	}
	if d.ClaimName(claimSpec("ns", "t", 2), "", false) {
		t.Fatal("the create half of a tainted cluster clashed")
	}
	if !d.ClaimName(claimSpec("ns", "t", 2), "", false) {
		t.Fatal("a second create beside a tainted cluster not reported")
	}
	// Two clusters of one name in state: refreshed first, each planned after.
	d.NoteRefreshed(claimSpec("ns", "two", 1), "owner3")
	d.NoteRefreshed(claimSpec("ns", "two", 1), "owner4")
	if d.ClaimName(claimSpec("ns", "two", 1), "owner3", false) {
		t.Fatal("the first of two refreshed clusters clashed")
	}
	if !d.ClaimName(claimSpec("ns", "two", 1), "owner4", false) {
		t.Fatal("two clusters of one name in state not reported")
	}
}

func TestPlanChooseSeesClustersPlannedBefore(t *testing.T) {
	d := &Session{}
	claim := func(key string, groups []clusterspec.GroupRequest) (others []clusterspec.GroupRequest) {
		d.PlanChoose(key, func(o []clusterspec.GroupRequest) []clusterspec.GroupRequest {
			others = o
			return groups
		})
		return others
	}
	a := []clusterspec.GroupRequest{{Name: "a-node0"}}
	b := []clusterspec.GroupRequest{{Name: "b-node0"}}
	if others := claim("ns/a", a); len(others) != 0 {
		t.Fatal(others)
	}
	if others := claim("ns/b", b); len(others) != 1 || others[0].Name != "a-node0" {
		t.Fatal(others)
	}
	if others := claim("ns/a", a); len(others) != 1 || others[0].Name != "b-node0" {
		t.Fatalf("re-plan of a sees only b: %v", others)
	}
	if others := claim("ns/c", nil); len(others) != 2 {
		t.Fatalf("c sees both: %v", others)
	}
	if others := claim("ns/d", nil); len(others) != 2 {
		t.Fatalf("a failed choice (nil) records nothing: %v", others)
	}
}

// A cluster planned beside another counts on the nodes its plan chose, for
// the label limits of the other's check, with what it asks in all.
func TestPlannedHoldersCarryTheirNodes(t *testing.T) {
	d := &Session{}
	d.PlanAsk("team/a", topology.Resources{"GPU": 2}, map[string]topology.Resources{"n1": {"GPU": 2}})
	got := d.PlannedHolders("team", "team/b")
	if len(got) != 1 || !got[0].Planned || got[0].Resources["GPU"] != 2 || got[0].Nodes["n1"]["GPU"] != 2 {
		t.Fatalf("planned holders %+v", got)
	}
}

// Apply-time node choices of one process see each other's groups (their
// own key's excepted), and a failed create's are forgotten.
func TestChooseNodesCountsOtherChoices(t *testing.T) {
	d := &Session{}
	groupsOf := func(name string) []clusterspec.GroupRequest { return []clusterspec.GroupRequest{{Name: name}} }
	d.ChooseNodes("ns/a", func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if len(others) != 0 {
			t.Fatalf("first choice saw %v", others)
		}
		return groupsOf("a-unified")
	})
	d.ChooseNodes("ns/b", func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if len(others) != 1 || others[0].Name != "a-unified" {
			t.Fatalf("second choice saw %v", others)
		}
		return nil // failed: records nothing
	})
	d.ChooseNodes("ns/a", func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if len(others) != 0 {
			t.Fatalf("a cluster's own choice counted: %v", others)
		}
		return groupsOf("a-unified")
	})
	d.ForgetChosen("ns/a")
	d.ChooseNodes("ns/c", func(others []clusterspec.GroupRequest) []clusterspec.GroupRequest {
		if len(others) != 0 {
			t.Fatalf("a forgotten choice counted: %v", others)
		}
		return nil
	})
}

// The create half of a replacement (planned without prior state) must not
// take the old cluster's groups for another state's: it is known by the
// replacement claim of its first half, or by the owner token of a cluster
// this run planned with state.
func TestPlannedHere(t *testing.T) {
	d := &Session{}
	if d.PlannedHere("ns", "vc", "") || d.PlannedHere("ns", "vc", "tok") {
		t.Fatal("nothing planned yet")
	}
	d.ClaimName(claimSpec("ns", "kept", 1), "tok-kept", false)
	if !d.PlannedHere("ns", "kept", "tok-kept") || d.PlannedHere("ns", "kept", "") || d.PlannedHere("ns", "kept", "other") {
		t.Fatal("a planned cluster is known by its owner token only")
	}
	d.ClaimName(claimSpec("ns", "vc", 1), "tok-vc", true)
	if !d.PlannedHere("ns", "vc", "") || d.PlannedHere("other-ns", "vc", "") {
		t.Fatal("a replacement is known in its namespace")
	}
}
