package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// Addresses of the resource and data source most tests declare.
const (
	vcName = "ray_virtual_cluster.t"
	dsName = "data.ray_cluster_topology.t"
)

// unreachableProvider points at a port nothing listens on, without retries.
var unreachableProvider = acctest.Provider{Address: "http://127.0.0.1:1", MaxRetries: acctest.Retries(0)}

// onDomain is the constraint that pins a logical node into an NVLink domain.
func onDomain(domain string) map[string]float64 { return map[string]float64{domain: 0.001} }

// at builds a state path: strings are attribute or map keys, ints list indices.
func at(first string, rest ...any) tfjsonpath.Path {
	p := tfjsonpath.New(first)
	for _, step := range rest {
		switch s := step.(type) {
		case string:
			p = p.AtMapKey(s)
		case int:
			p = p.AtSliceIndex(s)
		default:
			panic(fmt.Sprintf("at: path step %v is neither string nor int", step))
		}
	}
	return p
}

// expectVC checks one attribute of ray_virtual_cluster.t.
func expectVC(path tfjsonpath.Path, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(vcName, path, value)
}

// expectDS checks one attribute of data.ray_cluster_topology.t.
func expectDS(path tfjsonpath.Path, value knownvalue.Check) statecheck.StateCheck {
	return statecheck.ExpectKnownValue(dsName, path, value)
}

// intBetween accepts an integer in [low, high).
func intBetween(low, high int64) knownvalue.Check {
	return knownvalue.Int64Func(func(v int64) error {
		if v < low || v >= high {
			return fmt.Errorf("%d is outside [%d, %d)", v, low, high)
		}
		return nil
	})
}

// nodeIPRE matches the worker nodes of the local test cluster (rackA-1 to
// rackC-1), wherever RAY_TF_IP_BASE puts it.
var nodeIPRE = regexp.MustCompile(`^(` + strings.Join(workerIPs(), "|") + `)$`)

func workerIPs() []string {
	var out []string
	for _, name := range []string{"rackA-1", "rackA-2", "rackB-1", "rackB-2", "rackC-1"} {
		out = append(out, regexp.QuoteMeta(acctest.NodeIP(name)))
	}
	return out
}

// wrappedRE turns phrases into one regexp in which every space may be any run
// of whitespace (the CLI wraps long diagnostics).
func wrappedRE(parts ...string) *regexp.Regexp {
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, " ", `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// stateCheckFunc adapts a function of the root module's resource values (by
// address) to a statecheck.StateCheck.
type stateCheckFunc func(resources map[string]map[string]any) error

func (f stateCheckFunc) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resources := map[string]map[string]any{}
	if req.State != nil && req.State.Values != nil && req.State.Values.RootModule != nil {
		for _, r := range req.State.Values.RootModule.Resources {
			resources[r.Address] = r.AttributeValues
		}
	}
	if err := f(resources); err != nil {
		resp.Error = err
	}
}

// portsUniquePerNode is get_available_addresses_and_ports_batch's promise:
// every bundle of address gets its node's IP and a port in [low, high),
// unique per node.
func portsUniquePerNode(address string, low, high int) statecheck.StateCheck {
	return stateCheckFunc(func(resources map[string]map[string]any) error {
		bundles, _ := resources[address]["bundles"].([]any)
		if len(bundles) == 0 {
			return fmt.Errorf("%s has no bundles", address)
		}
		seen := map[string]int{}
		for i, raw := range bundles {
			b, _ := raw.(map[string]any)
			ip, _ := b["node_ip"].(string)
			port, _ := strconv.Atoi(fmt.Sprint(b["port"]))
			if ip == "" || port < low || port >= high {
				return fmt.Errorf("bundle %d: address %s:%v outside [%d, %d)", i, ip, b["port"], low, high)
			}
			key := fmt.Sprintf("%s:%d", ip, port)
			if j, dup := seen[key]; dup {
				return fmt.Errorf("bundles %d and %d were both given %s", j, i, key)
			}
			seen[key] = i
		}
		return nil
	})
}

// logNodes prints the nodes the data source at address reported, so that the
// test log shows the real cluster.
func logNodes(t *testing.T, address string) statecheck.StateCheck {
	return stateCheckFunc(func(resources map[string]map[string]any) error {
		ds, ok := resources[address]
		if !ok {
			return fmt.Errorf("%s not in state", address)
		}
		nodes, _ := ds["nodes"].([]any)
		t.Logf("Ray reports %d nodes (ray %v, session %v):", len(nodes), ds["ray_version"], ds["id"])
		for _, raw := range nodes {
			n, _ := raw.(map[string]any)
			t.Logf("  node %.12v ip=%v head=%v gpus=%v cpus=%v nvlink_domain=%v topo_rank=%v",
				n["node_id"], n["node_ip"], n["is_head_node"], n["gpus"], n["cpus"], n["nvlink_domain"], n["topo_rank"])
		}
		return nil
	})
}

func vcTest(t *testing.T, name string, steps ...resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, name),
		Steps:                    steps,
	})
}

// expectAction is a pre-apply plan check that the cluster is planned for action.
func expectAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(vcName, action)}}
}

// sameAsBundle0 checks that attribute equals bundle 0's field (the master is rank 0).
func sameAsBundle0(attribute, field string) statecheck.StateCheck {
	return statecheck.CompareValuePairs(vcName, at(attribute), vcName, at("bundles", 0, field), compare.ValuesSame())
}

// importIgnore lists what Ray cannot tell an import: fresh probe ports,
// num_gpus_per_node (a property of the hosts, not of the groups), and the
// owner token (an import takes ownership with a token of its own).
var importIgnore = []string{"bundles", "master_port", "num_gpus_per_node", "timeouts", "owner_id"}

// plainCluster is a CPU-only cluster of two logical nodes of one bundle.
func plainCluster(name string) acctest.VirtualCluster {
	return acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, NoGPUs: true}
}

// removeGroupsAtCleanup removes, out of band, whatever groups of cluster
// name a test that runs its own working directories leaves behind.
func removeGroupsAtCleanup(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		if groups, _ := acctest.LiveGroups(context.Background(), acctest.Client(t), name); len(groups) > 0 {
			var names []string
			for _, g := range groups {
				names = append(names, g.Name)
			}
			acctest.RemoveGroupsOutOfBand(t, names...)
		}
	})
}

// serverRayVersion is the version the test cluster's dashboard reports, so
// that the tests run unchanged against every Ray version CI covers.
func serverRayVersion(t *testing.T) string {
	t.Helper()
	v, err := acctest.Client(t).Version(context.Background())
	if err != nil {
		t.Fatalf("asking Ray for its version: %v", err)
	}
	return v.RayVersion
}
