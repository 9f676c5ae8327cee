package resources_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// grpoWorker is one worker of python/tests/standin/grpo_standin.py's report.
type grpoWorker struct {
	PlacementGroup string `json:"placement_group"`
	BundleIndex    int    `json:"bundle_index"`
	NodeID         string `json:"node_id"`
	GPUIDs         []int  `json:"gpu_ids"`
}

// grpoCluster is one cluster of that report, keyed by the cluster's name.
type grpoCluster struct {
	IsRayVirtualCluster bool         `json:"is_ray_virtual_cluster"`
	Class               string       `json:"class"`
	Master              []any        `json:"master"`
	Workers             []grpoWorker `json:"workers"`
}

// runGRPOStandin runs the NeMo-RL stand-in's GRPO setup through
// `python -m raytf_attach.run` with the Ray venv's python, mapping NeMo-RL's
// cluster names to the declared ones; it returns stdout, stderr and the error.
func runGRPOStandin(t *testing.T, namespace, trainName, inferenceName string, scriptArgs ...string) (string, string, error) {
	t.Helper()
	root := acctest.RepoRoot(t)
	args := []string{"-m", "raytf_attach.run", "--namespace", namespace,
		"--map", "grpo_train_cluster=" + trainName, "--map", "grpo_inference_cluster=" + inferenceName,
		"--", filepath.Join(root, "python", "tests", "standin", "grpo_standin.py"), "--address", plainray.GCSAddress()}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plainray.Python(t), append(args, scriptArgs...)...)
	cmd.Dir = t.TempDir()
	for _, kv := range plainray.Env() {
		if !strings.HasPrefix(kv, "RAY_ADDRESS=") && !strings.HasPrefix(kv, "PYTHONPATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH="+strings.Join([]string{
		filepath.Join(root, "python", "src"), filepath.Join(root, "python", "tests", "standin")}, string(os.PathListSeparator)))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("raytf_attach.run %s: %v\n%s", strings.Join(scriptArgs, " "), err, plainray.Tail(stderr.String()))
	return stdout.String(), stderr.String(), err
}

// allGroupIDs lists every placement group Ray knows, removed ones included,
// so a group made and removed by the run shows up too.
func allGroupIDs(t *testing.T) (map[string]string, error) {
	groups, err := acctest.Client(t).ListPlacementGroups(context.Background(), rayclient.ListOptions{})
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, g := range groups {
		ids[g.PlacementGroupID] = g.Name + " (" + g.State + ")"
	}
	return ids, nil
}

// noNewGroups runs fn and fails when a placement group appeared in Ray meanwhile.
func noNewGroups(t *testing.T, fn func() error) error {
	before, err := allGroupIDs(t)
	if err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	after, err := allGroupIDs(t)
	if err != nil {
		return err
	}
	var added []string
	for id, what := range after {
		if _, ok := before[id]; !ok {
			added = append(added, id+" "+what)
		}
	}
	if len(added) > 0 {
		return fmt.Errorf("new placement groups appeared in Ray: %v", added)
	}
	return nil
}

// workersOnDeclaredBundles checks one cluster of the report against its
// resource in state: one worker per bundle, each on its bundle's node and GPU.
func workersOnDeclaredBundles(name string, got grpoCluster, vc map[string]any) error {
	if !got.IsRayVirtualCluster || got.Class != "AttachedRayVirtualCluster" {
		return fmt.Errorf("%s: NeMo-RL got a %s (isinstance RayVirtualCluster: %v), not the attached cluster", name, got.Class, got.IsRayVirtualCluster)
	}
	bundles, _ := vc["bundles"].([]any)
	if len(got.Workers) != len(bundles) || len(bundles) == 0 {
		return fmt.Errorf("%s: %d workers for %d bundles", name, len(got.Workers), len(bundles))
	}
	byBundle := map[string]map[string]any{}
	for _, raw := range bundles {
		b, _ := raw.(map[string]any)
		byBundle[fmt.Sprintf("%v/%v", b["placement_group"], b["bundle_index"])] = b
	}
	for _, w := range got.Workers {
		b := byBundle[fmt.Sprintf("%s/%d", w.PlacementGroup, w.BundleIndex)]
		if b == nil {
			return fmt.Errorf("%s: a worker ran in %s[%d], not a bundle in state", name, w.PlacementGroup, w.BundleIndex)
		}
		gpu, err := strconv.Atoi(fmt.Sprint(b["gpu_id"]))
		if w.NodeID != b["node_id"] || err != nil || len(w.GPUIDs) != 1 || w.GPUIDs[0] != gpu {
			return fmt.Errorf("%s: worker of %s[%d] ran on node %s GPUs %v; state says node %v GPU %v",
				name, w.PlacementGroup, w.BundleIndex, w.NodeID, w.GPUIDs, b["node_id"], b["gpu_id"])
		}
	}
	if len(got.Master) != 2 || got.Master[0] != vc["master_address"] || fmt.Sprint(got.Master[1]) != fmt.Sprint(vc["master_port"]) {
		return fmt.Errorf("%s: master %v, state %v:%v", name, got.Master, vc["master_address"], vc["master_port"])
	}
	return nil
}

// examples/nemo-rl-grpo declares GRPO's two clusters; a script built like
// grpo.py's setup, run through raytf_attach.run, gets them from its own
// RayVirtualCluster calls and places one worker per bundle on the declared
// node and GPU without creating a placement group. A call that asks for
// another shape fails with every difference listed, and creates nothing.
func TestAccExample_nemoRLGRPO(t *testing.T) {
	prefix := acctest.Name("nemo")
	name := prefix + "-grpo" // groups <prefix>-grpo_train_cluster-node<i>, ...
	train, inference := name+"_train_cluster", name+"_inference_cluster"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, prefix),
		Steps: []resource.TestStep{{
			Config:          exampleConfig(t, "nemo-rl-grpo"),
			ConfigVariables: config.Variables{"name": config.StringVariable(name)},
			Check: acctest.CheckGroupsInRay(t, prefix, map[string]int{
				train + "-node0": 4, train + "-node1": 4, inference + "-node0": 4}),
			ConfigStateChecks: []statecheck.StateCheck{stateCheckFunc(func(resources map[string]map[string]any) error {
				trainVC, inferenceVC := resources["ray_virtual_cluster.train"], resources["ray_virtual_cluster.inference"]
				namespace, _ := trainVC["namespace"].(string)
				// GRPO with cluster.num_nodes 3, gpus_per_node 4, segment_size 2 and one inference node.
				err := noNewGroups(t, func() error {
					stdout, _, err := runGRPOStandin(t, namespace, train, inference,
						"--num-nodes", "3", "--gpus-per-node", "4", "--inference-nodes", "1", "--segment-size", "2")
					if err != nil {
						return fmt.Errorf("the GRPO stand-in failed: %v", err)
					}
					lines := strings.Split(strings.TrimSpace(stdout), "\n")
					var report map[string]grpoCluster
					if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil {
						return fmt.Errorf("report %q: %v", stdout, err)
					}
					if err := workersOnDeclaredBundles(train, report[train], trainVC); err != nil {
						return err
					}
					return workersOnDeclaredBundles(inference, report[inference], inferenceVC)
				})
				if err != nil {
					return err
				}
				// Four nodes for training and the generation band for the master port: three differences, one error.
				return noNewGroups(t, func() error {
					_, stderr, err := runGRPOStandin(t, namespace, train, inference,
						"--num-nodes", "5", "--gpus-per-node", "4", "--inference-nodes", "1", "--segment-size", "2",
						"--master-port-range-low", "3000", "--master-port-range-high", "4999")
					if err == nil {
						return fmt.Errorf("a GRPO setup asking for [4, 4, 4, 4] and ports [3000, 4999) ran on the declared [4, 4] with [1400, 1999)")
					}
					for _, want := range []string{
						"ShapeMismatchError: RayVirtualCluster(name='grpo_train_cluster') does not match the ray_virtual_cluster declared as " + namespace + "/" + train + " (3 differences)",
						"bundle_ct_per_node_list: NeMo-RL asks for [4, 4, 4, 4], Terraform declared [4, 4] -> set bundle_ct_per_node_list = [4, 4, 4, 4]",
						"port_range_low: NeMo-RL asks for 3000, Terraform declared 1400 -> set port_range_low = 3000",
						"port_range_high: NeMo-RL asks for 4999, Terraform declared 1999 -> set port_range_high = 4999",
						"Nothing was attached or created.",
					} {
						if !strings.Contains(stderr, want) {
							return fmt.Errorf("the mismatch error lacks %q:\n%s", want, plainray.Tail(stderr))
						}
					}
					return nil
				})
			})},
		}},
	})
}
