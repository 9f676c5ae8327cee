package resources_test

import (
	"regexp"
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
// does not hold.
func TestAccExample_nemoRLOPDTeachers(t *testing.T) {
	prefix := acctest.Name("nemo-opd")
	policy, teacher := prefix+"-grpo_policy_cluster", prefix+"-teacher_math"
	nemoRLRolesTest(t, "nemo-rl-opd-teachers", prefix, map[string]int{policy + "-node0": 2, policy + "-node1": 2, teacher + "-node0": 4},
		statecheck.ExpectKnownValue("ray_virtual_cluster.policy", at("max_colocated_worker_groups"), knownvalue.Int64Exact(2)),
		statecheck.ExpectKnownOutputValue("teacher_nodes", knownvalue.MapSizeExact(1)),
		statecheck.ExpectKnownOutputValue("launch", knownvalue.StringRegexp(literal("--map teacher_math="+teacher))))
}

// literal matches s anywhere.
func literal(s string) *regexp.Regexp { return regexp.MustCompile(regexp.QuoteMeta(s)) }
