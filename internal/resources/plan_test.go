package resources

import (
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func TestClaimPortsReportsOverlaps(t *testing.T) {
	d := &ProviderData{}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}); len(clash) != 0 {
		t.Fatalf("first claim clashed: %v", clash)
	}
	if clash := d.ClaimPorts("infer", topology.PortRange{Low: 3000, High: 4999}); len(clash) != 0 {
		t.Fatalf("disjoint ranges clashed: %v", clash)
	}
	clash := d.ClaimPorts("policy", topology.PortRange{Low: 1900, High: 2100})
	if len(clash) != 1 || !strings.HasPrefix(clash[0], "train [1400, 1999)") {
		t.Fatalf("overlap not reported: %v", clash)
	}
	if clash := d.ClaimPorts("train", topology.PortRange{Low: 1400, High: 1999}); len(clash) != 1 {
		t.Fatalf("re-claiming the same cluster: %v", clash)
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
