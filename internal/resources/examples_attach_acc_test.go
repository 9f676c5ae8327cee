package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
)

// attachReport is the JSON line examples/attach/train.py prints.
type attachReport struct {
	Name          string `json:"name"`
	Namespace     string `json:"namespace"`
	WorldSize     int    `json:"world_size"`
	MasterAddress string `json:"master_address"`
	MasterPort    int    `json:"master_port"`
	Ranks         []struct {
		Rank   int    `json:"rank"`
		NodeID string `json:"node_id"`
		GPUIDs []int  `json:"gpu_ids"`
	} `json:"ranks"`
}

// submittedJobRE finds the submission id in `ray job submit`'s output.
var submittedJobRE = regexp.MustCompile(`Job '(raysubmit_[A-Za-z0-9]+)' submitted`)

// attachJobTree copies what submit.sh uploads (examples/attach and the
// raytf_attach package) into a fresh directory laid out as the repository,
// with a run marker in each. The local test cluster's nodes share one
// runtime_resources directory: a package Ray saw before may sit in one
// node's cache while another node's agent deleted or rewrote its files
// (seen: "Local directory ... does not exist on the cluster"). Fresh
// contents give fresh package URIs; the files run are the repository's.
func attachJobTree(t *testing.T) string {
	t.Helper()
	root, tree := acctest.RepoRoot(t), t.TempDir()
	marker := []byte(acctest.Name("run") + "\n")
	for _, dir := range []string{filepath.Join("examples", "attach"), filepath.Join("python", "src", "raytf_attach")} {
		if err := os.MkdirAll(filepath.Join(tree, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				continue // __pycache__
			}
			data, err := os.ReadFile(filepath.Join(root, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tree, dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(tree, dir, "RAYTF_TEST_RUN"), marker, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}

// submitAttachJob runs examples/attach/submit.sh, the command of the attach
// guide, in a copy made by attachJobTree with the Ray venv's `ray` first on
// PATH, and returns train.py's report.
func submitAttachJob(t *testing.T, name, namespace string) (*attachReport, error) {
	t.Helper()
	bin := os.Getenv("RAY_BIN")
	if bin == "" {
		t.Fatal("RAY_BIN is not set (source scripts/env.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join("examples", "attach", "submit.sh"), name, namespace)
	cmd.Dir = attachJobTree(t)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RAY_ADDRESS="+plainray.Address())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("examples/attach/submit.sh %s %s (%s):\n%s", name, namespace, time.Since(start).Round(100*time.Millisecond), out)
	if m := submittedJobRE.FindSubmatch(out); m != nil { // keep the shared cluster's job list short
		t.Cleanup(func() { _, _ = acctest.Client(t).DeleteJob(context.Background(), string(m[1])) })
	}
	if err != nil {
		return nil, fmt.Errorf("the attach job failed: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, `{"name"`) {
			var r attachReport
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return nil, fmt.Errorf("train.py's report %q: %v", line, err)
			}
			return &r, nil
		}
	}
	return nil, fmt.Errorf("train.py printed no report")
}

// attachedWorkersMatch checks that the actors the attached job started, one
// per bundle in rank order, run where the resource's bundles say: same node,
// same GPU, and that the job sees the resource's master address and port.
func attachedWorkersMatch(t *testing.T, vc map[string]any) error {
	name, _ := vc["name"].(string)
	namespace, _ := vc["namespace"].(string)
	report, err := submitAttachJob(t, name, namespace)
	if err != nil {
		return err
	}
	bundles, _ := vc["bundles"].([]any)
	if report.Name != name || report.Namespace != namespace || report.WorldSize != len(bundles) || len(report.Ranks) != len(bundles) || len(bundles) == 0 {
		return fmt.Errorf("the job attached to %s/%s with %d ranks (world size %d); state has %s/%s with %d bundles",
			report.Namespace, report.Name, len(report.Ranks), report.WorldSize, namespace, name, len(bundles))
	}
	for i, raw := range bundles {
		b, _ := raw.(map[string]any)
		got := report.Ranks[i]
		gpu, err := strconv.Atoi(fmt.Sprint(b["gpu_id"])) // a json.Number in the state
		if got.Rank != i || got.NodeID != b["node_id"] || err != nil || len(got.GPUIDs) != 1 || got.GPUIDs[0] != gpu {
			return fmt.Errorf("rank %d ran on node %s with GPUs %v; state's bundle %d is node %v GPU %v",
				got.Rank, got.NodeID, got.GPUIDs, i, b["node_id"], b["gpu_id"])
		}
	}
	if report.MasterAddress != vc["master_address"] || fmt.Sprint(report.MasterPort) != fmt.Sprint(vc["master_port"]) {
		return fmt.Errorf("the job's master is %s:%d, the state's %v:%v", report.MasterAddress, report.MasterPort,
			vc["master_address"], vc["master_port"])
	}
	return nil
}

// The attach guide end to end: Terraform applies examples/attach/main.tf,
// then examples/attach/submit.sh runs train.py as a Ray job that attaches
// and places one actor per bundle in rank order.
func TestAccExample_attach(t *testing.T) {
	name := acctest.Name("attach2-ex")
	exampleTest(t, "attach", name, resource.TestStep{
		Check: acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 2, name + "-node1": 2}),
		ConfigStateChecks: []statecheck.StateCheck{stateCheckFunc(func(resources map[string]map[string]any) error {
			return attachedWorkersMatch(t, resources["ray_virtual_cluster.train"])
		})},
	})
}
