package resources_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// badConfigs are configurations that must fail at plan with the attribute
// named, before any request reaches Ray.
var badConfigs = []struct {
	name, attrs, want string
}{
	{"empty name", `name = ""`, `(?s)Invalid cluster name.*name`},
	{"shell metacharacters", `name = "vc;rm -rf /"`, `(?s)Invalid cluster name.*rm -rf`},
	{"command substitution", `name = "$${HOME}$(whoami)"`, `Invalid cluster name`},
	{"unicode name", `name = "кластер"`, `Invalid cluster name`},
	{"leading dash", `name = "-vc"`, `Invalid cluster name`},
	{"space in name", `name = "my vc"`, `Invalid cluster name`},
	{"name too long", `name = "` + strings.Repeat("a", 101) + `"`, `Invalid cluster name`},
	{"empty bundle list", `bundle_ct_per_node_list = []`, `(?s)bundle_ct_per_node_list.*at least 1`},
	{"negative count", `bundle_ct_per_node_list = [2, -1]`, `(?s)bundle_ct_per_node_list.*between 0 and 4096`},
	{"all zero counts", `bundle_ct_per_node_list = [0, 0]`, `(?s)No bundles requested.*at least one count must be > 0`},
	{"huge list", `bundle_ct_per_node_list = [` + strings.Repeat("1,", clusterspec.MaxLogicalNodes) + `1]`,
		fmt.Sprintf(`(?s)Too many logical nodes.*%d entries`, clusterspec.MaxLogicalNodes+1)},
	{"huge count", `bundle_ct_per_node_list = [100000]`, `(?s)bundle_ct_per_node_list.*between 0 and 4096`},
	{"more bundles than GPUs", `bundle_ct_per_node_list = [2, 9]`, `(?s)Too many bundles for one node.*node 1 asks for 9 bundles but num_gpus_per_node is 8`},
	{"null count", `bundle_ct_per_node_list = [1, null]`, `(?s)bundle_ct_per_node_list`},
	{"list as string", `bundle_ct_per_node_list = "2,2"`, `(?s)Incorrect attribute value type.*bundle_ct_per_node_list`},
	{"zero GPUs per node", `num_gpus_per_node = 0`, `(?s)num_gpus_per_node.*between 1 and 4096`},
	{"negative GPUs per node", `num_gpus_per_node = -4`, `(?s)num_gpus_per_node.*between 1 and 4096`},
	{"fractional GPUs per node", `num_gpus_per_node = 1.5`, `(?s)num_gpus_per_node`},
	{"zero colocated groups", `max_colocated_worker_groups = 0`, `(?s)max_colocated_worker_groups.*between 1 and 1024`},
	{"too many colocated groups", `max_colocated_worker_groups = 5000`, `(?s)max_colocated_worker_groups.*between 1 and 1024`},
	{"lowercase strategy", `placement_group_strategy = "pack"`, `(?s)placement_group_strategy "pack" must be one of PACK,.*did you mean "PACK"\?`},
	{"unknown strategy", `placement_group_strategy = "RANDOM"`, `(?s)placement_group_strategy "RANDOM" must be one of`},
	{"empty strategy", `placement_group_strategy = ""`, `(?s)placement_group_strategy "" must be one of`},
	{"zero segment size", `segment_size = 0`, `(?s)segment_size.*at least 1`},
	{"segment does not divide", "bundle_ct_per_node_list = [1, 1, 1]\nsegment_size = 2\nuse_unified_pg = true", `(?s)segment_size does not divide the node count.*\(3.*\(2\)`},
	{"constraints length mismatch", `node_resource_constraints = [{ nvlink_domain_x = 0.001 }]`, `(?s)node_resource_constraints length \(1\) must match bundle_ct_per_node_list length \(2\)`},
	{"constraint on CPU", `node_resource_constraints = [{ CPU = 1 }, {}]`, `(?s)node_resource_constraints.*node 0 constrains "CPU".*cannot be overridden`},
	{"constraint empty key", `node_resource_constraints = [{ "" = 1 }, {}]`, `(?s)empty resource name`},
	{"constraint zero amount", `node_resource_constraints = [{}, { nvlink_domain_x = 0 }]`, `(?s)node 1 constraint "nvlink_domain_x" = 0 must be a finite number > 0`},
	{"constraint negative amount", `node_resource_constraints = [{}, { nvlink_domain_x = -1 }]`, `(?s)must be a finite number > 0`},
	{"inverted port range", "port_range_low = 2000\nport_range_high = 1500", `(?s)port_range_high.*2000.*1500`},
	{"empty port range", "port_range_low = 1500\nport_range_high = 1500", `(?s)Invalid port range`},
	{"port zero", `port_range_low = 0`, `(?s)port_range_low.*between 1 and 65535`},
	{"port too high", `port_range_high = 70000`, `(?s)port_range_high.*between 2 and 65536`},
	{"bad ready timeout", `ready_timeout = "soon"`, `(?s)Invalid\s+Time\s+Duration\s+String\s+Value.*ready_timeout.*invalid\s+duration`},
	{"negative ready timeout", `ready_timeout = "-5s"`, `(?s)ready_timeout.*positive Go duration`},
	{"unknown attribute", `gpus = 4`, `(?s)Unsupported argument.*gpus`},
}

// TestAccVirtualCluster_badInput plans every bad configuration against a
// dashboard stand-in that counts requests: none may be sent.
func TestAccVirtualCluster_badInput(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no request should reach Ray", http.StatusTeapot)
	}))
	defer srv.Close()
	steps := make([]resource.TestStep, 0, len(badConfigs))
	for _, c := range badConfigs {
		attrs := c.attrs
		defaults := map[string]string{"name": `name = "vc"`, "bundle_ct_per_node_list": `bundle_ct_per_node_list = [2, 2]`}
		for key, line := range defaults {
			if !strings.Contains(attrs, key+" =") {
				attrs = line + "\n" + attrs
			}
		}
		// The attributes stay raw HCL: many are not valid values of the schema.
		steps = append(steps, resource.TestStep{
			Config: acctest.HCL(acctest.Provider{Address: srv.URL, MaxRetries: acctest.Retries(0)},
				acctest.RawBlock("resource", []string{"ray_virtual_cluster", "t"}, attrs)),
			PlanOnly: true,
			// The CLI wraps long messages, so any space may be a line break.
			ExpectError: regexp.MustCompile(strings.ReplaceAll(c.want, " ", `\s+`)),
		})
	}
	if len(steps) < 30 {
		t.Fatalf("only %d bad configurations", len(steps))
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheckCLI(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps:                    steps,
	})
	if n := requests.Load(); n != 0 {
		t.Fatalf("bad configurations sent %d requests to Ray", n)
	}
}
