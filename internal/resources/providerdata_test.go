package resources

import (
	"errors"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestClaimPortsReportsOverlaps(t *testing.T) {
	d := &ProviderData{}
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
	d := &ProviderData{}
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

func TestIssuePath(t *testing.T) {
	if got := issuePath("node_resource_constraints[2]").String(); got != "node_resource_constraints[2]" {
		t.Fatalf("indexed path %q", got)
	}
	if got := issuePath("segment_size").String(); got != "segment_size" {
		t.Fatalf("plain path %q", got)
	}
}

func TestClaimNameTellsDuplicatesFromReplans(t *testing.T) {
	d := &ProviderData{}
	// Two new clusters of one configuration with the same name.
	if d.ClaimName("ns", "a", "", false) {
		t.Fatal("first claim clashed")
	}
	if !d.ClaimName("ns", "a", "", false) {
		t.Fatal("second new cluster of the same name not reported")
	}
	// Another namespace is another name.
	if d.ClaimName("other", "a", "", false) {
		t.Fatal("namespaces are separate")
	}
	// An existing cluster planned again (same owner) is no clash; a new one is.
	if d.ClaimName("ns", "b", "owner1", false) {
		t.Fatal("first plan of an existing cluster clashed")
	}
	if d.ClaimName("ns", "b", "owner1", false) {
		t.Fatal("re-plan of the same cluster clashed")
	}
	if !d.ClaimName("ns", "b", "", false) {
		t.Fatal("a new cluster beside an existing one of the same name not reported")
	}
	// A replacement is planned twice: with its state, then without; only a
	// third cluster of the name clashes.
	if d.ClaimName("ns", "c", "owner2", true) || d.ClaimName("ns", "c", "", false) {
		t.Fatal("a replacement's create half clashed")
	}
	if !d.ClaimName("ns", "c", "", false) {
		t.Fatal("a duplicate beside a replacement not reported")
	}
}

func TestClaimCapacityReturnsOtherClusters(t *testing.T) {
	d := &ProviderData{}
	a := []clusterspec.GroupRequest{{Name: "a-node0"}}
	b := []clusterspec.GroupRequest{{Name: "b-node0"}}
	if others := d.ClaimCapacity("ns/a", a); len(others) != 0 {
		t.Fatal(others)
	}
	if others := d.ClaimCapacity("ns/b", b); len(others) != 1 || others[0].Name != "a-node0" {
		t.Fatal(others)
	}
	if others := d.ClaimCapacity("ns/a", a); len(others) != 1 || others[0].Name != "b-node0" {
		t.Fatalf("re-plan of a sees only b: %v", others)
	}
}

// A dashboard address that is really the GCS port gets a hint naming both ports.
func TestUnreachableDetailNamesTheGCSPort(t *testing.T) {
	gcs := errors.New(`ray: GET /api/version: net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x18\x04"`)
	if d := unreachableDetail("http://head:6379", gcs); !strings.Contains(d, "GCS port") || !strings.Contains(d, "8265") {
		t.Errorf("GCS port: %s", d)
	}
	if d := unreachableDetail("http://head:8265", errors.New("connection refused")); strings.Contains(d, "GCS") {
		t.Errorf("refused: %s", d)
	}
}

// Apply-time node choices of one process see each other's groups (their
// own key's excepted), and a failed create's are forgotten.
func TestChooseNodesCountsOtherChoices(t *testing.T) {
	d := &ProviderData{}
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
