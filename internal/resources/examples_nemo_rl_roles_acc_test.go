package resources_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
)

// nemoRLRolesTest applies an example whose cluster names are NeMo-RL's
// behind var.prefix, and checks the groups Ray holds.
func nemoRLRolesTest(t *testing.T, dir, prefix string, groups map[string]int, checks ...statecheck.StateCheck) {
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, prefix),
		Steps: []resource.TestStep{{
			Config:            exampleConfig(t, dir),
			ConfigVariables:   config.Variables{"prefix": config.StringVariable(prefix + "-")},
			Check:             acctest.CheckGroupsInRay(t, prefix, groups),
			ConfigStateChecks: checks,
		}},
	})
}

// examples/nemo-rl-single-controller: the SingleController's sc_train_cluster
// and sc_inference_cluster, one 4-GPU node each, on different nodes.
func TestAccExample_nemoRLSingleController(t *testing.T) {
	prefix := acctest.Name("nemo-sc")
	train, inference := prefix+"-sc_train_cluster", prefix+"-sc_inference_cluster"
	nemoRLRolesTest(t, "nemo-rl-single-controller", prefix, map[string]int{train + "-node0": 4, inference + "-node0": 4},
		statecheck.ExpectKnownValue("ray_virtual_cluster.train", at("segment_size"), knownvalue.Null()),
		statecheck.ExpectKnownOutputValue("launch", knownvalue.StringRegexp(literal("--map sc_train_cluster="+train+" --map sc_inference_cluster="+inference))))
}

// examples/nemo-rl-opd-teachers: GRPO's colocated grpo_policy_cluster (one
// complete 2-node segment) and the teacher_math cluster on a node the policy
// does not hold. Through the CLI: the teachers are for_each instances, which
// the testing framework's state checks cannot address.
func TestAccExample_nemoRLOPDTeachers(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("nemo-opd")
	policy, teacher := prefix+"-grpo_policy_cluster", prefix+"-teacher_math"
	removeGroupsAtCleanup(t, prefix)
	// NewWorkDir writes its own required_providers block.
	w := acctest.NewWorkDir(t, strings.TrimPrefix(exampleConfig(t, "nemo-rl-opd-teachers"), acctest.RequiredTestProvider.String()))
	vars := []string{"-var", "prefix=" + prefix + "-"}
	w.MustRun(append([]string{"apply", "-auto-approve"}, vars...)...)
	if err := acctest.CheckGroupsInRay(t, prefix, map[string]int{policy + "-node0": 2, policy + "-node1": 2, teacher + "-node0": 4})(nil); err != nil {
		t.Error(err)
	}
	if out := w.MustRun("output", "-raw", "launch"); !strings.Contains(out, "--map teacher_math="+teacher) {
		t.Errorf("launch line does not map the teacher: %s", out)
	}
	w.MustRun(append([]string{"destroy", "-auto-approve"}, vars...)...)
	if err := acctest.CheckNoGroupsInRay(t, prefix)(nil); err != nil {
		t.Error(err)
	}
}

// literal matches s anywhere.
func literal(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }
