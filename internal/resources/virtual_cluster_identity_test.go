package resources_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
)

// The cluster's resource identity is its name and Ray namespace, and an
// import block with identity = { name, namespace } instead of an id imports
// it: the imported plan reads the cluster's groups from Ray. Resource
// identity needs Terraform or OpenTofu 1.12; older CLIs skip this test.
func TestAccIdentity_importBlock(t *testing.T) {
	name := acctest.Name("ident")
	identity := map[string]knownvalue.Check{
		"name": knownvalue.StringExact(name), "namespace": knownvalue.StringExact(clusterspec.DefaultNamespace),
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		// The import block is only planned, so this state still owns the
		// cluster and its destroy removes the groups.
		CheckDestroy: acctest.CheckNoGroupsInRay(t, name),
		Steps: []resource.TestStep{
			{
				Config:            acctest.HCL(acctest.RequiredTestProvider, plainCluster(name)),
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(vcName, identity)},
				Check:             acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1, name + "-node1": 1}),
			},
			{
				ResourceName:    vcName,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
				// The import plans one change: this state taking ownership at apply.
				ExpectNonEmptyPlan: true,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(vcName, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(vcName, at("owner_id")),
					plancheck.ExpectKnownValue(vcName, at("bundle_ct_per_node_list"), knownvalue.ListExact(
						[]knownvalue.Check{knownvalue.Int64Exact(1), knownvalue.Int64Exact(1)})),
				}},
			},
			{
				// An identity naming another namespace than the provider's is
				// refused before anything is read or claimed.
				ResourceName:           vcName,
				ImportState:            true,
				ImportStateKind:        resource.ImportBlockWithResourceIdentity,
				ImportStateConfigExact: true,
				Config: acctest.HCL(acctest.RequiredTestProvider, plainCluster(name), acctest.Block{Type: "import",
					Attrs: []acctest.Attr{{Key: "to", Expr: vcName}, {Key: "identity", Expr: fmt.Sprintf(`{ name = %q, namespace = "elsewhere" }`, name)}}}),
				ExpectError: wrappedRE("Import identity names another Ray namespace", `identity.namespace is "elsewhere"`,
					`provider works in Ray namespace "`+clusterspec.DefaultNamespace+`"`),
			},
		},
	})
}
