package resources_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
)

// quotaConfig is a provider in Ray namespace ns, its quota of gpus, and
// the clusters (each of gpus[i] one-GPU bundles, named <prefix>-<label>).
func quotaConfig(ns string, quotaGPUs int, prefix string, clusters map[string]int) string {
	var blocks []fmt.Stringer
	if quotaGPUs > 0 {
		blocks = quotaBlocks(ns, acctest.Attr{Key: "gpus", Expr: fmt.Sprint(quotaGPUs)})
	} else {
		blocks = quotaBlocks(ns)[:1]
	}
	for _, label := range []string{"a", "b"} {
		if n, ok := clusters[label]; ok {
			blocks = append(blocks, acctest.VirtualCluster{Label: label, Name: prefix + "-" + label, Counts: []int{n}, GPUsPerNode: 4})
		}
	}
	return acctest.HCL(blocks...)
}

// quotaBlocks are a provider in Ray namespace ns and, given its limit
// arguments, the namespace's quota ray_namespace_quota.team.
func quotaBlocks(ns string, limits ...acctest.Attr) []fmt.Stringer {
	provider := acctest.Provider{Extra: []acctest.Attr{{Key: "namespace", Expr: acctest.Quote(ns)}}}
	return []fmt.Stringer{provider, acctest.Block{Type: "resource", Labels: []string{"ray_namespace_quota", "team"},
		Attrs: append([]acctest.Attr{{Key: "namespace", Expr: acctest.Quote(ns)}}, limits...)}}
}

// checkQuota checks the quota Ray's KV holds for ns (read with plain ray).
func checkQuota(t *testing.T, ns string, gpus float64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		q := acctest.ReadQuota(t, ns)
		if q == nil || q.Namespace != ns || len(q.Limits) != 1 || q.Limits["GPU"] != gpus {
			return fmt.Errorf("Ray's KV holds quota %+v for %s, want GPU %g", q, ns, gpus)
		}
		return nil
	}
}

// A namespace's quota in Ray's KV caps its clusters: within it the cluster
// lands; a second one that fits beside it alone is refused at plan once a
// group made outside Terraform in the namespace takes the rest, naming the
// quota, the cluster and that group; lowering the quota below use removes
// nothing; the destroy removes the quota.
func TestAccNamespaceQuota_capsTheNamespace(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	prefix := acctest.Name("quota")
	ns := prefix + "-team"
	byHand := prefix + "-byhand"
	q := regexp.QuoteMeta
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(acctest.CheckNoGroupsInRay(t, prefix), func(*terraform.State) error {
			if q := acctest.ReadQuota(t, ns); q != nil {
				return fmt.Errorf("the quota of %s is left in Ray: %+v", ns, q)
			}
			return nil
		}),
		Steps: []resource.TestStep{
			{
				Config: quotaConfig(ns, 3, prefix, map[string]int{"a": 2}),
				Check:  resource.ComposeTestCheckFunc(acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2}), checkQuota(t, ns, 3)),
			},
			{
				PreConfig: func() {
					plainray.CreateGroups(t, ns, plainray.Group{Name: byHand, Strategy: "PACK", Bundles: []map[string]float64{{"GPU": 1}}})
					t.Cleanup(func() { plainray.RemoveGroups(t, ns, byHand) }) // the test may stop before step 3
				},
				Config: quotaConfig(ns, 3, prefix, map[string]int{"a": 2, "b": 1}),
				ExpectError: wrappedRE("Namespace quota exceeded", q("Ray namespace "+ns+" has the quota {GPU: 3}"),
					q(ns+"/"+prefix+"-a (owner"), `\{CPU: \S+, GPU: 2\}`, q(ns+"/"+byHand+" (not a virtual cluster): {GPU: 1}"),
					q(`Virtual cluster "`+prefix+`-b" asks`), "GPU 4 of 3"),
			},
			{
				PreConfig: func() { plainray.RemoveGroups(t, ns, byHand) },
				Config:    quotaConfig(ns, 1, prefix, map[string]int{"a": 2}), // below use: a warning, nothing removed
				Check:     resource.ComposeTestCheckFunc(acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2}), checkQuota(t, ns, 1)),
			},
			{
				Config:      quotaConfig(ns, 1, prefix, map[string]int{"a": 2, "b": 1}),
				ExpectError: wrappedRE("Namespace quota exceeded", "GPU 3 of 1"),
			},
			{ // an import by namespace reads the limits and holds no owner until its apply takes the quota over
				Config:                  quotaConfig(ns, 1, prefix, map[string]int{"a": 2}),
				ResourceName:            "ray_namespace_quota.team",
				ImportState:             true,
				ImportStateId:           ns,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"owner_id"},
			},
		},
	})
}

// Two states apply a two-GPU cluster each at the same moment in a namespace
// whose quota (declared by a third state) holds one of them: one lands, the
// other fails naming the quota, and Ray holds the winner's groups alone.
func TestAccNamespaceQuota_racingStatesCannotBothLand(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("qrace")
	ns := prefix + "-team"
	quota := acctest.NewWorkDirDestroyed(t, quotaConfig(ns, 2, prefix, nil))
	quota.MustRun("apply", "-auto-approve")
	var dirs []*acctest.WorkDir
	var names []string
	for i := range 2 {
		name := fmt.Sprintf("%s-%d", prefix, i)
		dirs = append(dirs, acctest.NewWorkDirDestroyed(t, quotaConfig(ns, 0, name, map[string]int{"a": 2})))
		names = append(names, name)
	}
	var landed []string
	for _, r := range applyAtOnce(t, dirs, names) {
		switch {
		case r.err == nil:
			landed = append(landed, r.name)
		case !regexp.MustCompile(`(?s)(Namespace\s+quota\s+exceeded|Ray\s+namespace\s+` + regexp.QuoteMeta(ns) + `\s+has\s+quota)`).MatchString(r.out):
			t.Errorf("%s failed without naming the quota:\n%s", r.name, r.out)
		default:
			t.Logf("%s was refused after %s: %s", r.name, r.took, firstLine(r.out, "quota"))
		}
	}
	if len(landed) != 1 {
		t.Fatalf("%d of the two clusters landed (%v); the quota holds one", len(landed), landed)
	}
	groups, err := acctest.LiveGroups(t.Context(), acctest.Client(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if !strings.HasPrefix(g.Name, landed[0]+"-") {
			t.Errorf("Ray holds %s, of the cluster that was refused", g.Name)
		}
	}
}

// firstLine is the first line of out that holds word.
func firstLine(out, word string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, word) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// terraform query lists the namespace's quota and its use: what each
// holder holds and the total against each limit, the label limits too.
// Listing writes nothing.
func TestAccNamespaceQuota_queryListsUsage(t *testing.T) {
	acctest.SkipWithoutQuery(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("qlist")
	ns := prefix + "-team"
	w := acctest.NewWorkDirDestroyed(t, labelQuotaConfig(ns, 3, prefix, map[string]int{"a-rackA": 2}))
	w.MustRun("apply", "-auto-approve")
	before := acctest.ReadQuota(t, ns)
	if err := os.WriteFile(filepath.Join(w.Dir, "usage.tfquery.hcl"),
		[]byte(acctest.List("team", false, acctest.Attr{Key: "namespace", Expr: acctest.Quote(ns)}).String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(w.MustRun("query")), " ")
	rackA := " on nodes labelled " + domainLabel + "=rackA"
	for _, want := range []string{"Namespace quota: " + ns, "has the quota {GPU: 8}, {GPU: 3}" + rackA,
		"In use: GPU 2 of 8, GPU 2 of 3" + rackA, ns + "/" + prefix + "-a (owner"} {
		if !strings.Contains(out, want) {
			t.Errorf("terraform query output lacks %q:\n%s", want, out)
		}
	}
	if after := acctest.ReadQuota(t, ns); after == nil || before == nil || after.Owner != before.Owner {
		t.Errorf("listing changed the quota: before %+v, after %+v", before, after)
	}
}

// labelQuotaConfig is a provider in Ray namespace ns, its quota (8 GPUs, of
// which at most rackAGPUs on the nodes of rack A) and clusters, each of one
// logical node of n one-GPU bundles in a rack ("a-rackA": n=2, Ray places it;
// select_nodes chooses the nodes of a cluster named with "-sel").
func labelQuotaConfig(ns string, rackAGPUs int, prefix string, clusters map[string]int) string {
	blocks := quotaBlocks(ns, acctest.Attr{Key: "gpus", Expr: "8"},
		acctest.Attr{Key: "node_label_limits", Expr: fmt.Sprintf(`[{ labels = { %q = "rackA" }, gpus = %d }]`, domainLabel, rackAGPUs)})
	for _, label := range []string{"a-rackA", "b-rackA", "b-rackA-sel", "b-rackB", "c-rackA"} {
		n, ok := clusters[label]
		if !ok {
			continue
		}
		rack := strings.Split(label, "-")[1]
		blocks = append(blocks, acctest.VirtualCluster{Label: strings.ReplaceAll(label, "-", "_"), Name: prefix + "-" + label[:1],
			Counts: []int{n}, GPUsPerNode: 4, SelectNodes: strings.HasSuffix(label, "-sel"),
			Extra: []acctest.Attr{{Key: "node_label_selectors", Expr: fmt.Sprintf(`[{ %q = %q }]`, domainLabel, rack)}}})
	}
	return acctest.HCL(blocks...)
}

// A quota's node_label_limits cap what the namespace holds on one rack. A
// cluster Ray places is checked once Ray has placed it: over the limit, its
// apply fails and Ray keeps none of its groups. A cluster whose nodes the
// plan chooses (select_nodes) is refused at plan. A cluster on another rack
// lands, Ray's KV holds the label limit, lowering it below use removes
// nothing, and an import reads it back.
func TestAccNamespaceQuota_nodeLabelLimits(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	prefix := acctest.Name("qlabel")
	ns := prefix + "-team"
	over := regexp.QuoteMeta("GPU 3 of 2 on nodes labelled " + domainLabel + "=rackA")
	noB := func() {
		groups, err := acctest.LiveGroups(t.Context(), acctest.Client(t), prefix+"-b")
		if err != nil || len(groups) > 0 {
			t.Errorf("Ray holds %d groups of the refused cluster (%v)", len(groups), err)
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, prefix),
		Steps: []resource.TestStep{
			{
				Config: labelQuotaConfig(ns, 2, prefix, map[string]int{"a-rackA": 2}),
				Check: resource.ComposeTestCheckFunc(acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2}),
					func(*terraform.State) error {
						q := acctest.ReadQuota(t, ns)
						if q == nil || len(q.LabelLimits) != 1 || q.LabelLimits[0].Labels[domainLabel] != "rackA" || q.LabelLimits[0].Limits["GPU"] != 2 {
							return fmt.Errorf("Ray's KV holds quota %+v, want 2 GPUs on rack A", q)
						}
						return nil
					}),
			},
			{ // Ray places it on rack A: refused after placement, its groups removed
				Config:      labelQuotaConfig(ns, 2, prefix, map[string]int{"a-rackA": 2, "b-rackA": 1}),
				ExpectError: wrappedRE("quota", over),
			},
			{ // the plan chooses its nodes on rack A: refused at plan
				PreConfig:   noB, // the refused apply removed what it made
				Config:      labelQuotaConfig(ns, 2, prefix, map[string]int{"a-rackA": 2, "b-rackA-sel": 1}),
				PlanOnly:    true,
				ExpectError: wrappedRE("Namespace quota exceeded", `Virtual cluster "`+prefix+`-b"`, over),
			},
			{ // another rack: within every limit
				Config: labelQuotaConfig(ns, 2, prefix, map[string]int{"a-rackA": 2, "b-rackB": 1}),
				Check:  acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2, prefix + "-b-node0": 1}),
			},
			{ // raising the limit lets another cluster land on rack A
				Config: labelQuotaConfig(ns, 3, prefix, map[string]int{"a-rackA": 2, "b-rackB": 1, "c-rackA": 1}),
				Check: acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2, prefix + "-b-node0": 1,
					prefix + "-c-node0": 1}),
			},
			{ // lowered below what rack A holds: a warning, nothing removed
				Config: labelQuotaConfig(ns, 1, prefix, map[string]int{"a-rackA": 2, "b-rackB": 1, "c-rackA": 1}),
				Check: acctest.CheckGroupsInRay(t, prefix, map[string]int{prefix + "-a-node0": 2, prefix + "-b-node0": 1,
					prefix + "-c-node0": 1}),
			},
			{ // an import reads the label limits back from the quota's note
				Config:                  labelQuotaConfig(ns, 1, prefix, map[string]int{"a-rackA": 2, "b-rackB": 1, "c-rackA": 1}),
				ResourceName:            "ray_namespace_quota.team",
				ImportState:             true,
				ImportStateId:           ns,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"owner_id"},
			},
		},
	})
}

// A namespace the provider's own `namespace` would refuse is refused at
// plan, naming the attribute, before anything reaches Ray.
func TestAccNamespaceQuota_invalidNamespace(t *testing.T) {
	steps := []resource.TestStep{}
	for _, ns := range []string{"", "two words"} {
		steps = append(steps, resource.TestStep{
			Config: acctest.HCL(acctest.Block{Type: "resource", Labels: []string{"ray_namespace_quota", "team"},
				Attrs: []acctest.Attr{{Key: "namespace", Expr: acctest.Quote(ns)}, {Key: "gpus", Expr: "1"}}}),
			PlanOnly:    true,
			ExpectError: wrappedRE("Attribute namespace must be 1 to 63 letters, digits"),
		})
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		Steps:                    steps,
	})
}
