package resources_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/acctest/plainray"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// elsewhereNamespace is a Ray namespace the provider is not configured with.
const elsewhereNamespace = "raytf-list-elsewhere"

// leakGroups makes, with plain ray.util (never the provider's driver), what
// a leak looks like: "<prefix>-leak-node0/1" and "<prefix>-uni-unified"
// (named like virtual clusters, no record), "<prefix>-plain" (a group no
// virtual cluster can adopt) and, in another namespace, "<prefix>-far-node0".
// Removed when the test ends.
func leakGroups(t *testing.T, prefix string) {
	t.Helper()
	cpu := []map[string]float64{{"CPU": 1}}
	plainray.CreateGroups(t, clusterspec.DefaultNamespace,
		plainray.Group{Name: prefix + "-leak-node0", Strategy: "PACK", Bundles: cpu},
		plainray.Group{Name: prefix + "-leak-node1", Strategy: "PACK", Bundles: cpu},
		plainray.Group{Name: prefix + "-uni-unified", Strategy: "SPREAD", Bundles: []map[string]float64{{"CPU": 1}, {"CPU": 1}}},
		plainray.Group{Name: prefix + "-plain", Strategy: "SPREAD", Bundles: []map[string]float64{{"CPU": 0.5}, {"CPU": 0.5}}})
	plainray.CreateGroups(t, elsewhereNamespace, plainray.Group{Name: prefix + "-far-node0", Strategy: "PACK", Bundles: cpu})
	t.Cleanup(func() {
		plainray.RemoveGroups(t, clusterspec.DefaultNamespace, prefix+"-leak-node0", prefix+"-leak-node1", prefix+"-uni-unified", prefix+"-plain")
		plainray.RemoveGroups(t, elsewhereNamespace, prefix+"-far-node0")
	})
}

// listBlock renders a list block of ray_virtual_cluster with config body.

// ownership and ownerIDs are filters of a list block's config.
func ownership(classes ...string) acctest.Attr {
	return acctest.Attr{Key: "ownership", Expr: acctest.Strings(classes)}
}

func ownerIDs(ids ...string) acctest.Attr {
	return acctest.Attr{Key: "owner_ids", Expr: acctest.Strings(ids)}
}

func listIdentity(name, ns string) map[string]knownvalue.Check {
	return map[string]knownvalue.Check{"name": knownvalue.StringExact(name), "namespace": knownvalue.StringExact(ns)}
}

// The list resource finds the virtual clusters of the provider's namespace,
// its own and leaked ones, with their identity and (include_resource) the
// state import gives them; its filters pick them by owner and name, it lists
// another namespace only when asked, and never lists a group no cluster
// can adopt as a result. Needs Terraform >= 1.14 (terraform query).
func TestAccList_query(t *testing.T) {
	acctest.SkipWithoutQuery(t)
	prefix := acctest.Name("lq")
	own, leak, far := prefix+"-own", prefix+"-leak", prefix+"-far"
	ns := clusterspec.DefaultNamespace
	leakShape := []querycheck.KnownValueCheck{
		{Path: tfjsonpath.New("bundle_ct_per_node_list"), KnownValue: knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(1), knownvalue.Int64Exact(1)})},
		{Path: tfjsonpath.New("use_gpus"), KnownValue: knownvalue.Bool(false)},
		{Path: tfjsonpath.New("pinning"), KnownValue: knownvalue.Null()}, // at its default: left out of generated configuration
		{Path: tfjsonpath.New("owner_id"), KnownValue: knownvalue.Null()},
	}
	ownShape := []querycheck.KnownValueCheck{
		{Path: tfjsonpath.New("port_range_low"), KnownValue: knownvalue.Int64Exact(41000)},
		{Path: tfjsonpath.New("owner_id"), KnownValue: knownvalue.StringExact("")}, // never another state's token
		{Path: tfjsonpath.New("placement_groups").AtSliceIndex(1).AtMapKey("name"), KnownValue: knownvalue.StringExact(own + "-node1")},
	}
	prefixFilter := acctest.Attr{Key: "name_prefix", Expr: acctest.Quote(prefix)}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t); leakGroups(t, prefix) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy:             acctest.CheckNoGroupsInRay(t, own),
		Steps: []resource.TestStep{
			{
				Config: acctest.HCL(acctest.RequiredTestProvider, acctest.VirtualCluster{Name: own, Counts: []int{1, 1}, NoGPUs: true, PortLow: 41000, PortHigh: 41999}),
			},
			{
				Query:  true,
				Config: acctest.HCL(acctest.Provider{}, acctest.List("all", true, prefixFilter)),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("ray_virtual_cluster.all", 3), // not -plain (warned about), not -far (elsewhere)
					querycheck.ExpectIdentity("ray_virtual_cluster.all", listIdentity(prefix+"-uni", ns)),
					querycheck.ExpectIdentity("ray_virtual_cluster.all", listIdentity(own, ns)),
					querycheck.ExpectIdentity("ray_virtual_cluster.all", listIdentity(leak, ns)),
					querycheck.ExpectResourceDisplayName("ray_virtual_cluster.all", queryfilter.ByResourceIdentity(listIdentity(leak, ns)),
						knownvalue.StringRegexp(regexp.MustCompile(`no state: no record`))),
					querycheck.ExpectResourceDisplayName("ray_virtual_cluster.all", queryfilter.ByResourceIdentity(listIdentity(own, ns)),
						knownvalue.StringRegexp(regexp.MustCompile(`other state, owner`))),
					querycheck.ExpectResourceKnownValues("ray_virtual_cluster.all", queryfilter.ByResourceIdentity(listIdentity(leak, ns)), leakShape),
					querycheck.ExpectResourceKnownValues("ray_virtual_cluster.all", queryfilter.ByResourceIdentity(listIdentity(own, ns)), ownShape),
				},
			},
			{
				Query: true,
				Config: acctest.HCL(acctest.Provider{},
					acctest.List("none", false, prefixFilter, ownership("no_state")),
					acctest.List("other", false, prefixFilter, ownership("other_state")),
					acctest.List("mine", false, prefixFilter, ownership("this_state"), ownerIDs("not-a-real-owner")),
					acctest.List("named", false, acctest.Attr{Key: "name_prefix", Expr: acctest.Quote(leak)}),
					acctest.List("far", false, prefixFilter, acctest.Attr{Key: "namespace", Expr: acctest.Quote(elsewhereNamespace)})),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("ray_virtual_cluster.none", 2),
					querycheck.ExpectIdentity("ray_virtual_cluster.none", listIdentity(leak, ns)),
					querycheck.ExpectLength("ray_virtual_cluster.other", 1),
					querycheck.ExpectIdentity("ray_virtual_cluster.other", listIdentity(own, ns)),
					querycheck.ExpectLength("ray_virtual_cluster.mine", 0),
					querycheck.ExpectLength("ray_virtual_cluster.named", 1),
					querycheck.ExpectLength("ray_virtual_cluster.far", 1),
					querycheck.ExpectIdentity("ray_virtual_cluster.far", listIdentity(far, elsewhereNamespace)),
				},
			},
		},
	})
}

// The workflow with the real CLI: a cluster left by a lost state and
// groups made with plain ray.util are found by terraform query, whose
// -generate-config-out writes import blocks and configuration that import
// and then plan empty; destroy removes them. Listing writes nothing to Ray
// (the records are unchanged, the leak gets none), and it warns about the
// group no cluster can adopt. A cluster of this state is listed as
// this_state through owner_ids.
func TestAccList_generateConfig(t *testing.T) {
	acctest.SkipWithoutQuery(t)
	acctest.PreCheck(t)
	prefix := acctest.Name("lg")
	lost, leak := prefix+"-lost", prefix+"-leak"
	leakGroups(t, prefix)

	// A state that is lost afterwards: its working directory is never destroyed.
	gone := acctest.NewWorkDir(t, acctest.HCL(acctest.VirtualCluster{Label: "lost", Name: lost, Counts: []int{2, 1}, NoGPUs: true, Colocated: 1,
		SegmentSize: 1, PortLow: 42000, PortHigh: 42999}, acctest.Output("owner", "ray_virtual_cluster.lost.owner_id")))
	gone.MustRun("apply", "-auto-approve")
	owner := strings.TrimSpace(gone.MustRun("output", "-raw", "owner"))
	before := acctest.ReadRecord(t, lost)

	w := acctest.NewWorkDir(t, acctest.Provider{}.String())
	t.Cleanup(func() {
		if _, err := w.Run("destroy", "-auto-approve"); err != nil {
			t.Logf("cleanup destroy: %v", err)
		}
		acctest.RemoveGroupsOutOfBand(t, lost+"-node0", lost+"-node1")
	})
	writeQuery := func(text string) {
		if err := os.WriteFile(filepath.Join(w.Dir, "leaks.tfquery.hcl"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Reservations a killed apply leaves: the leak's (groups live, no record) and a stale one.
	ns, stale := clusterspec.DefaultNamespace, prefix+"-gone"
	acctest.WriteReservation(t, leak, map[string]any{"cluster": ns + "/" + leak, "owner": "aaaa1111-killed-apply",
		"groups": []string{leak + "-node0", leak + "-node1"}, "nodes": map[string]any{}, "token": "t1", "claimed_at": time.Now().Unix() - 100})
	acctest.WriteReservation(t, stale, map[string]any{"cluster": ns + "/" + stale, "owner": "bbbb2222-killed-apply",
		"groups": []string{stale + "-node0"}, "nodes": map[string]any{"some-node": map[string]float64{"CPU": 1}}, "token": "t2", "claimed_at": 0})
	t.Cleanup(func() { acctest.WriteReservation(t, stale, nil); acctest.WriteReservation(t, leak, nil) })

	prefixFilter := acctest.Attr{Key: "name_prefix", Expr: acctest.Quote(prefix)}
	leaks := acctest.List("leaks", true, prefixFilter)
	writeQuery(acctest.HCL(leaks, acctest.List("mine", false, prefixFilter, ownership("this_state"), ownerIDs(owner))))
	w.MustRun("init")
	out := w.MustRun("query")
	for _, want := range []string{lost, leak, "Placement groups that no ray_virtual_cluster can adopt: " + prefix + "-plain",
		"its name is not a virtual cluster's", "this state, owner " + record.OwnerPrefix(owner),
		"Check placement_group_strategy of " + prefix + "-uni before importing it",
		"Reservation no state owns: " + ns + "/" + stale, "It holds nothing any more",
		"Reservation no state owns: " + ns + "/" + leak, "but the cluster has no record", record.OwnerPrefix("aaaa1111-killed-apply") + "…"} { // a plain token, shown as its digest's prefix
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("terraform query output lacks %q", want)
		}
	}
	writeQuery(leaks.String()) // generate configuration for the leaks only
	w.MustRun("query", "-generate-config-out=generated.tf")
	if strings.Contains(out, prefix+"-far") {
		t.Errorf("terraform query listed %s-far of namespace %s, which the list block did not ask for", prefix, elsewhereNamespace)
	}
	generated, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated.tf:\n%s", generated)
	for _, want := range []string{"import {", `name      = "` + lost + `"`, `name      = "` + leak + `"`, `name      = "` + prefix + `-uni"`,
		"use_unified_pg", "bundle_ct_per_node_list", "segment_size"} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated.tf lacks %q", want)
		}
	}
	if after := acctest.ReadRecord(t, lost); after == nil || after.Owner != before.Owner || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("listing changed the record of %s: before %+v, after %+v", lost, before, after)
	}
	if rec := acctest.ReadRecord(t, leak); rec != nil {
		t.Errorf("listing wrote a record for %s: %+v", leak, rec)
	}

	// Import what the query found, then the plan is empty.
	w.MustRun("apply", "-auto-approve")
	if out, err := w.Run("plan", "-detailed-exitcode"); err != nil || !strings.Contains(out, "No changes.") {
		t.Fatalf("the plan after importing the generated configuration is not empty (%v)", err)
	}
	w.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, lost)(nil); err != nil {
		t.Error(err)
	}
	for _, name := range []string{leak, prefix + "-uni"} {
		if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
			t.Error(err)
		}
	}
	// The import took the leak's reservation over, so its destroy released it.
	if left := acctest.Reservations(t, leak); len(left) != 0 {
		t.Errorf("the leak's reservation outlived its destroy: %v", left)
	}
}
