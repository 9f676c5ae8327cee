package resources_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// exampleConfig joins an example's .tf files (the examples' own HCL, as a
// user has it) except versions.tf, whose registry source address the
// in-process test provider does not serve.
func exampleConfig(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("example %s: no .tf files (%v)", dir, err)
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString(acctest.RequiredTestProvider.String())
	for _, f := range files {
		if filepath.Base(f) == "versions.tf" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

func exampleTest(t *testing.T, dir, name string, steps ...resource.TestStep) {
	for i := range steps {
		steps[i].Config = exampleConfig(t, dir)
		if steps[i].ConfigVariables == nil {
			steps[i].ConfigVariables = config.Variables{}
		}
		steps[i].ConfigVariables["name"] = config.StringVariable(name)
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, name),
		Steps:                    steps,
	})
}

func TestAccExample_quickstart(t *testing.T) {
	name := acctest.Name("ex-quick")
	const training = "ray_virtual_cluster.training"
	exampleTest(t, "quickstart", name, resource.TestStep{
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 16}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("world_size", knownvalue.Int64Exact(16)),
			statecheck.ExpectKnownOutputValue("master", knownvalue.StringRegexp(regexp.MustCompile(`^`+regexp.QuoteMeta(acctest.NodeIP("rackA-2"))+`:1[4-9]\d\d$`))),
			statecheck.ExpectKnownValue(training, at("bundles", 0, "topo_rank"), knownvalue.Int64Exact(2)),
			statecheck.ExpectKnownValue(training, at("bundles", 15, "topo_rank"), knownvalue.Int64Exact(5)),
		},
	})
}

func TestAccExample_trainingInference(t *testing.T) {
	name := acctest.Name("ex-split")
	const training, inference = "ray_virtual_cluster.training", "ray_virtual_cluster.inference"
	exampleTest(t, "training-inference", name, resource.TestStep{
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-train-unified": 8, name + "-infer-node0": 2, name + "-infer-node1": 2}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("training_domains", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("nvlink_domain_rackA")})),
			statecheck.ExpectKnownOutputValue("inference_domains", knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("nvlink_domain_rackB")})),
			statecheck.ExpectKnownValue(training, at("nvlink_domain_per_bundle"), knownvalue.ListSizeExact(8)),
			statecheck.ExpectKnownValue(inference, at("bundles"), knownvalue.ListSizeExact(4)),
			statecheck.ExpectKnownValue(inference, at("bundles", 0, "port"), intBetween(3000, 5000)),
		},
	})
}

func TestAccExample_nvlinkSegments(t *testing.T) {
	name := acctest.Name("ex-seg")
	exampleTest(t, "nvlink-segments", name, resource.TestStep{
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 16}),
		ConfigStateChecks: []statecheck.StateCheck{
			expectVC(at("bundles", 0, "nvlink_domain"), knownvalue.StringExact("nvlink_domain_rackA")),
			expectVC(at("bundles", 8, "nvlink_domain"), knownvalue.StringExact("nvlink_domain_rackB")),
			statecheck.ExpectKnownOutputValue("selected_nodes", knownvalue.ListSizeExact(4)),
			statecheck.ExpectKnownOutputValue("rank_to_domain", knownvalue.ListSizeExact(16)),
			statecheck.ExpectKnownOutputValueAtPath("rank_to_domain", tfjsonpath.New(0), knownvalue.StringExact("0:nvlink_domain_rackA:2")),
			statecheck.ExpectKnownOutputValueAtPath("rank_to_domain", tfjsonpath.New(15), knownvalue.StringExact("15:nvlink_domain_rackB:5")),
		},
	})
}

func TestAccExample_quotasAndNodeLoss(t *testing.T) {
	name := acctest.Name("ex-loss")
	ns := name + "-ns"
	exampleTest(t, "quotas-and-node-loss", name, resource.TestStep{
		ConfigVariables: config.Variables{"namespace": config.StringVariable(ns)},
		Check: resource.ComposeTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-rollout-node0": 2, name + "-rollout-node1": 2, name + "-trainer-node0": 4}),
			checkQuota(t, ns, 12)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("quota_gpus", knownvalue.Float64Exact(12)),
			statecheck.ExpectKnownOutputValue("rollout_recovery_timeout", knownvalue.StringExact("15m")),
			statecheck.ExpectKnownValue("ray_virtual_cluster.trainer", at("selected_node_ids"), knownvalue.ListSizeExact(1)),
		},
	})
}

func TestAccExample_import(t *testing.T) {
	name := acctest.Name("ex-imp")
	exampleTest(t, "import", name, resource.TestStep{
		PreConfig: func() { acctest.CreateGroupsOutOfBand(t, name+"-node0", name+"-node1") },
		Check:     acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownOutputValue("groups", knownvalue.ListExact([]knownvalue.Check{
				knownvalue.StringExact(name + "-node0=" + raystate.PlacementGroupStateCreated),
				knownvalue.StringExact(name + "-node1=" + raystate.PlacementGroupStateCreated),
			})),
		},
	})
}

// TestAccExample_anyGPUCluster applies the example for an ordinary GPU cluster
// (no segment_size, no topology attributes): three per-node PACK groups of two
// GPUs each, checked in Ray.
func TestAccExample_anyGPUCluster(t *testing.T) {
	name := acctest.Name("ex-any")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, name),
		Steps: []resource.TestStep{{
			Config: exampleConfig(t, "any-gpu-cluster"),
			ConfigVariables: config.Variables{
				"name": config.StringVariable(name), "nodes": config.IntegerVariable(3), "gpus_per_node": config.IntegerVariable(2),
			},
			Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 2, name + "-node1": 2, name + "-node2": 2}),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("world_size", knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownOutputValue("placement", knownvalue.ListSizeExact(6)),
				statecheck.ExpectKnownValue("ray_virtual_cluster.workers", at("placement_groups", 0, "strategy"), knownvalue.StringExact("PACK")),
			},
		}},
	})
}

// The inference fleet grows by one engine and shrinks back in place: the
// engines it keeps keep their groups (same ids).
func TestAccExample_inferenceFleet(t *testing.T) {
	name := acctest.Name("ex-fleet")
	const fleet = "ray_virtual_cluster.fleet"
	engines := func(n int) config.Variables { return config.Variables{"engines": config.IntegerVariable(n)} }
	group := func(i int) string { return name + "-node" + strconv.Itoa(i) }
	keptIDs := statecheck.CompareValue(compare.ValuesSame())
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(fleet, plancheck.ResourceActionUpdate)}}
	keep := func() []statecheck.StateCheck {
		return []statecheck.StateCheck{keptIDs.AddStateValue(fleet, at("placement_groups", 0, "id"))}
	}
	exampleTest(t, "inference-fleet", name,
		resource.TestStep{
			ConfigVariables:   engines(2),
			Check:             acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1}),
			ConfigStateChecks: keep(),
		},
		resource.TestStep{
			ConfigVariables:  engines(3),
			ConfigPlanChecks: update,
			Check:            acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1, group(2): 1}),
			ConfigStateChecks: append(keep(),
				statecheck.ExpectKnownOutputValue("world_size", knownvalue.Int64Exact(3))),
		},
		resource.TestStep{
			ConfigVariables:   engines(2),
			ConfigPlanChecks:  update,
			Check:             acctest.CheckGroupsInRay(t, name, map[string]int{group(0): 1, group(1): 1}),
			ConfigStateChecks: keep(),
		},
	)
}
