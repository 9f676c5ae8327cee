package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// CheckGroupsInRay asserts through Ray's state API (of the real dashboard,
// never a proxy) that the groups of prefix are exactly want: each name held
// by one live group - no duplicates - in state CREATED with the given bundle
// count, and no other group of prefix.
func CheckGroupsInRay(t *testing.T, prefix string, want map[string]int) resource.TestCheckFunc {
	return CheckGroupsAt(func() *rayclient.Client { return Client(t) }, prefix, want)
}

// CheckNoGroupsInRay asserts that Ray holds no live group of prefix; it is
// the CheckDestroy of the resource tests.
func CheckNoGroupsInRay(t *testing.T, prefix string) resource.TestCheckFunc {
	return CheckGroupsInRay(t, prefix, map[string]int{})
}

// CheckGroupsAt is CheckGroupsInRay against the cluster of client().
func CheckGroupsAt(client func() *rayclient.Client, prefix string, want map[string]int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		groups, err := LiveGroups(context.Background(), client(), prefix)
		if err != nil {
			return err
		}
		return exactGroups(groups, want)
	}
}

// CheckNoGroupsAt is CheckNoGroupsInRay against the cluster of client().
func CheckNoGroupsAt(client func() *rayclient.Client, prefix string) resource.TestCheckFunc {
	return CheckGroupsAt(client, prefix, map[string]int{})
}

func exactGroups(groups []raystate.PlacementGroup, want map[string]int) error {
	byName := map[string][]raystate.PlacementGroup{}
	for _, g := range groups {
		byName[g.Name] = append(byName[g.Name], g)
	}
	var problems []string
	for name, n := range want {
		got := byName[name]
		switch {
		case len(got) == 0:
			problems = append(problems, name+" is missing")
		case len(got) > 1:
			ids := make([]string, len(got))
			for i, g := range got {
				ids[i] = g.PlacementGroupID + "(" + g.State + ")"
			}
			problems = append(problems, fmt.Sprintf("%s is held by %d groups: %s", name, len(got), strings.Join(ids, ", ")))
		case got[0].State != raystate.PlacementGroupStateCreated:
			problems = append(problems, fmt.Sprintf("%s is %s, want CREATED", name, got[0].State))
		case len(got[0].Bundles) != n:
			problems = append(problems, fmt.Sprintf("%s has %d bundles, want %d", name, len(got[0].Bundles), n))
		}
	}
	for name, got := range byName {
		if _, ok := want[name]; !ok {
			problems = append(problems, fmt.Sprintf("unexpected group %s (%d, %s)", name, len(got), got[0].State))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("the placement groups in Ray do not match: %s", strings.Join(problems, "; "))
	}
	return nil
}

// CheckNoActiveJobs asserts that no submission job whose id starts with
// prefix is still pending or running.
func CheckNoActiveJobs(t *testing.T, prefix string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		jobs, err := ActiveJobs(context.Background(), Client(t), prefix)
		if err != nil {
			return err
		}
		if len(jobs) > 0 {
			ids := make([]string, len(jobs))
			for i, j := range jobs {
				ids[i] = j.SubmissionID + "(" + j.Status + ")"
			}
			return fmt.Errorf("driver jobs still active: %s", strings.Join(ids, ", "))
		}
		return nil
	}
}

// ExpectStateLacks asserts that the state - every attribute value, sensitive
// or not, every output - does not contain secret.
func ExpectStateLacks(secret string) statecheck.StateCheck { return stateLacks(secret) }

type stateLacks string

func (secret stateLacks) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if secret == "" {
		resp.Error = fmt.Errorf("ExpectStateLacks: empty secret")
		return
	}
	if req.State == nil || req.State.Values == nil || req.State.Values.RootModule == nil ||
		len(req.State.Values.RootModule.Resources) == 0 {
		resp.Error = fmt.Errorf("ExpectStateLacks: the state has no resources to check")
		return
	}
	raw, err := json.Marshal(req.State)
	if err != nil {
		resp.Error = err
		return
	}
	if strings.Contains(string(raw), string(secret)) {
		resp.Error = fmt.Errorf("the state holds the secret")
		for _, r := range req.State.Values.RootModule.Resources {
			if one, _ := json.Marshal(r); strings.Contains(string(one), string(secret)) {
				resp.Error = fmt.Errorf("%s: the state holds the secret", r.Address)
			}
		}
	}
}
