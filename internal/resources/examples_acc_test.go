package resources_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// exampleConfig joins an example's .tf files except versions.tf, whose
// registry source address the in-process test provider does not serve.
func exampleConfig(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", dir, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("example %s: no .tf files (%v)", dir, err)
	}
	sort.Strings(files)
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n    ray = { source = \"registry.terraform.io/hashicorp/ray\" }\n  }\n}\n")
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
		steps[i].ConfigVariables = config.Variables{"name": config.StringVariable(name)}
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
	exampleTest(t, "quickstart", name, resource.TestStep{
		Check: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 16}),
			resource.TestCheckOutput("world_size", "16"),
			resource.TestMatchOutput("master", regexp.MustCompile(`^127\.0\.0\.12:1[4-9]\d\d$`)),
			resource.TestCheckResourceAttr("ray_virtual_cluster.training", "bundles.0.topo_rank", "2"),
			resource.TestCheckResourceAttr("ray_virtual_cluster.training", "bundles.15.topo_rank", "5"),
		),
	})
}

func TestAccExample_trainingInference(t *testing.T) {
	name := acctest.Name("ex-split")
	exampleTest(t, "training-inference", name, resource.TestStep{
		Check: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-train-unified": 8, name + "-infer-node0": 2, name + "-infer-node1": 2}),
			resource.TestCheckResourceAttr("ray_virtual_cluster.training", "nvlink_domain_per_bundle.7", "nvlink_domain_rackA"),
			resource.TestCheckResourceAttr("ray_virtual_cluster.training", "nvlink_domain_per_bundle.0", "nvlink_domain_rackA"),
			resource.TestCheckResourceAttr("ray_virtual_cluster.inference", "bundles.0.nvlink_domain", "nvlink_domain_rackB"),
			resource.TestCheckResourceAttr("ray_virtual_cluster.inference", "bundles.3.nvlink_domain", "nvlink_domain_rackB"),
			resource.TestMatchResourceAttr("ray_virtual_cluster.inference", "bundles.0.port", regexp.MustCompile(`^[34]\d\d\d$`)),
		),
	})
}

func TestAccExample_nvlinkSegments(t *testing.T) {
	name := acctest.Name("ex-seg")
	exampleTest(t, "nvlink-segments", name, resource.TestStep{
		Check: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-unified": 16}),
			resource.TestCheckResourceAttr("ray_virtual_cluster.t", "bundles.0.nvlink_domain", "nvlink_domain_rackA"),
			resource.TestCheckResourceAttr("ray_virtual_cluster.t", "bundles.8.nvlink_domain", "nvlink_domain_rackB"),
		),
	})
}

func TestAccExample_import(t *testing.T) {
	name := acctest.Name("ex-imp")
	exampleTest(t, "import", name, resource.TestStep{
		PreConfig: func() { acctest.CreateGroupsOutOfBand(t, name+"-node0", name+"-node1") },
		Check: resource.ComposeAggregateTestCheckFunc(
			acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
			resource.TestCheckResourceAttr("ray_virtual_cluster.legacy", "placement_groups.0.state", "CREATED"),
		),
	})
}
