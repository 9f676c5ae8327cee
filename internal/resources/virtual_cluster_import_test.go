package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/drift"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Ray keeps resource amounts in units of 1e-4: a constraint of 0.00015 is
// reserved as one of them, and every check (drift, the driver's adoption,
// the data source, raytf_attach) takes what Ray reports for the declared
// amount (drift.SameAmount). The plan after the apply is empty.
func TestAccVirtualCluster_subUnitConstraintPlansEmpty(t *testing.T) {
	name := acctest.Name("subunit")
	const declared = 0.00015
	cfg := virtualCluster{name: name, counts: []int{1}, noGPUs: true,
		constraints: []map[string]float64{{"nvlink_domain_rackA": declared}}}.String()
	vcTest(t, name,
		resource.TestStep{
			Config: cfg,
			Check: resource.ComposeAggregateTestCheckFunc(
				acctest.CheckGroupsInRay(t, name, map[string]int{name + "-node0": 1}),
				func(_ *terraform.State) error {
					groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
					if err != nil {
						return err
					}
					for _, g := range groups {
						for _, b := range g.Bundles {
							got, ok := b.UnitResources["nvlink_domain_rackA"]
							if !ok || !drift.SameAmount(got, declared) {
								return fmt.Errorf("bundle %d of %s reserves nvlink_domain_rackA = %v (present %v); want %v",
									b.BundleIndex, g.Name, got, ok, declared)
							}
						}
					}
					return nil
				},
			),
		},
		// A refresh and plan with the same configuration: no drift, no change.
		resource.TestStep{Config: cfg, PlanOnly: true},
	)
}

// Import by name restores every declared argument from the record in Ray:
// a select_nodes unified [2, 2, 2, 2] cluster with 2 GPUs per node and
// segments of 2, imported into a second directory with the same
// configuration, plans no change; the record in Ray keeps the declaration
// and names the importing state as owner.
func TestAccLifecycle_importRestoresDeclaration(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("decl")
	cfg := fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                     = %q
  bundle_ct_per_node_list  = [2, 2, 2, 2]
  num_gpus_per_node        = 2
  use_unified_pg           = true
  select_nodes             = true
  segment_size             = 2
  ready_timeout            = "2m"
  port_range_low           = 1600
  port_range_high          = 1700
}`, name)
	removeGroupsAtCleanup(t, name)
	first := acctest.NewWorkDir(t, cfg)
	first.MustRun("apply", "-auto-approve")
	before := acctest.ReadRecord(t, name)
	if before == nil || before.SchemaVersion != record.ManifestSchemaVersion || !before.SelectNodes || len(before.SelectedNodeIDs) != 4 {
		t.Fatalf("record after apply: %+v", before)
	}

	second := acctest.NewWorkDir(t, cfg)
	out := second.MustRun("import", "ray_virtual_cluster.t", name)
	if strings.Contains(out, "Import could not recover every argument") {
		t.Errorf("import from a complete record warned:\n%s", out)
	}
	if out, err := second.Run("plan", "-detailed-exitcode"); err != nil || !strings.Contains(out, "No changes") {
		t.Errorf("plan after import is not empty (%v):\n%s", err, out)
	}
	rec := acctest.ReadRecord(t, name)
	switch {
	case rec == nil:
		t.Fatal("no record after import")
	case rec.Owner == before.Owner:
		t.Errorf("import did not take ownership: owner %s", rec.Owner)
	case !slices.Equal(rec.BundleCtPerNodeList, []int{2, 2, 2, 2}) || rec.NumGPUsPerNode != 2 || !rec.UseUnifiedPG ||
		!rec.SelectNodes || rec.SegmentSize == nil || *rec.SegmentSize != 2 || rec.ReadyTimeout != "2m" ||
		!slices.Equal(rec.SelectedNodeIDs, before.SelectedNodeIDs) || rec.PortRangeLow != 1600 || rec.PortRangeHigh != 1700:
		t.Errorf("record after import lost the declaration: %+v", rec)
	}
	second.MustRun("destroy", "-auto-approve")
	if groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name); err != nil || len(groups) > 0 {
		t.Errorf("groups left after the importing state's destroy: %v %v", groups, err)
	}
}

// An import id that names no cluster fails naming the id.
func TestAccVirtualCluster_importUnknownNamesID(t *testing.T) {
	name := acctest.Name("noimp")
	cfg := virtualCluster{name: name, counts: []int{1}, noGPUs: true}.String()
	vcTest(t, name,
		resource.TestStep{Config: cfg},
		resource.TestStep{
			ResourceName:  vcName,
			ImportState:   true,
			ImportStateId: name + "-absent:1,1",
			ExpectError:   regexp.MustCompile(`(?s)Nothing to import.*` + regexp.QuoteMeta(fmt.Sprintf("%q", name+"-absent:1,1")) + `.*names\s+no\s+virtual\s+cluster`),
		},
	)
}

// Groups without a record (made outside this provider) import as before,
// with a warning that names the arguments the import could not recover;
// the import writes a record that keeps them from then on.
func TestAccLifecycle_importWithoutRecordWarns(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("norec")
	removeGroupsAtCleanup(t, name)
	acctest.CreateGroupsOutOfBand(t, name+"-node0", name+"-node1")
	dir := acctest.NewWorkDir(t, fmt.Sprintf(`
resource "ray_virtual_cluster" "t" {
  name                    = %q
  bundle_ct_per_node_list = [1, 1]
}`, name))
	out := dir.MustRun("import", "ray_virtual_cluster.t", name)
	if !strings.Contains(out, "Import could not recover every argument") || !strings.Contains(out, clusterspec.AttrNumGPUsPerNode) ||
		!strings.Contains(out, clusterspec.AttrSelectNodes) {
		t.Errorf("import of unrecorded groups did not warn about what it could not recover:\n%s", out)
	}
	if rec := acctest.ReadRecord(t, name); rec == nil || rec.SchemaVersion != record.ManifestSchemaVersion || len(rec.Groups) != 2 {
		t.Errorf("record after import: %+v", rec)
	}
	dir.MustRun("destroy", "-auto-approve")
	if groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name); err != nil || len(groups) > 0 {
		t.Errorf("groups left after destroy: %v %v", groups, err)
	}
}
