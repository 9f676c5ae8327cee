package resources_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// enforcesGPUDomainSelector reports whether the test cluster's Ray refuses a
// GB200/GB300 selector on some bundles only (Ray >= 2.56.0).
func enforcesGPUDomainSelector(t *testing.T) bool {
	t.Helper()
	need, _ := clusterspec.ParseRayVersion(clusterspec.GPUDomainSelectorMinRayVersion)
	return !parsedRayVersion(t).Less(need)
}

// gpuDomainConfig is a CPU-only unified cluster of three logical nodes whose
// selectors select ray.io/accelerator-type per node ("" for an empty selector).
func gpuDomainConfig(name string, values ...string) string {
	expr := "["
	for i, v := range values {
		if i > 0 {
			expr += ", "
		}
		if v == "" {
			expr += "{}"
		} else {
			expr += fmt.Sprintf(`{ %q = %q }`, clusterspec.AcceleratorTypeLabel, v)
		}
	}
	return acctest.VirtualCluster{Name: name, Counts: []int{1, 1, 1}, NoGPUs: true, Unified: true, Strategy: "SPREAD",
		Extra: []acctest.Attr{labelSelectors(expr + "]")}}.String()
}

// A unified group selecting GB200 for some logical nodes only fails the plan
// on Ray >= 2.56.0 naming the selectors without it and the fix (Ray would
// refuse the group at creation); Ray 2.55.1 takes the selector as a plain
// label match, so there the plan goes on to the live check, which finds no
// GB200 node on the test cluster. The same selector on every node passes
// the rule and also meets the live check. Nothing is created.
func TestAccVirtualCluster_gpuDomainSelectorOnSomeBundles(t *testing.T) {
	acctest.PreCheck(t)
	name := acctest.Name("native-gb200")
	noNode := regexp.MustCompile(`(?s)No node matches the label selector.*node_label_selectors\[0\]`)
	mixed := noNode
	if enforcesGPUDomainSelector(t) {
		mixed = regexp.MustCompile(`(?s)GPU-domain\s+selector\s+on\s+only\s+some\s+bundles.*` +
			`node_label_selectors\[1\]\s+\(no\s+ray\.io/accelerator-type\),\s+node_label_selectors\[2\]\s+\("GB300"\).*use_unified_pg\s+=\s+false`)
	}
	vcTest(t, name,
		resource.TestStep{Config: gpuDomainConfig(name, "GB200", "", "GB300"), ExpectError: mixed},
		resource.TestStep{Config: gpuDomainConfig(name, "GB200", "GB200", "GB200"), ExpectError: noNode},
	)
}
