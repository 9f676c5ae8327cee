package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/driver"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Import by name restores every declared argument from the record in Ray:
// a select_nodes unified [2, 2, 2, 2] cluster with 2 GPUs per node and
// segments of 2, imported into a second directory with the same
// configuration, plans only the change of owner; once applied, the record
// in Ray keeps the declaration and names the importing state as owner.
func TestAccLifecycle_importRestoresDeclaration(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("decl")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{2, 2, 2, 2}, GPUsPerNode: 2, Unified: true, SelectNodes: true,
		SegmentSize: 2, ReadyTimeout: "2m", PortLow: 1600, PortHigh: 1700}.String()
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
	// The only change the imported state plans is taking ownership.
	if out := second.MustRun("plan"); !strings.Contains(out, "0 to add, 1 to change, 0 to destroy") ||
		!strings.Contains(out, "owner_id") || strings.Contains(out, "must be replaced") {
		t.Errorf("plan after import plans more than the change of owner:\n%s", out)
	}
	second.MustRun("apply", "-auto-approve")
	if out, err := second.Run("plan", "-detailed-exitcode"); err != nil || !strings.Contains(out, "No changes") {
		t.Errorf("plan after the import's apply is not empty (%v):\n%s", err, out)
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
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{1}, NoGPUs: true}.String()
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
// its apply writes a record that keeps them from then on.
func TestAccLifecycle_importWithoutRecordWarns(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("norec")
	removeGroupsAtCleanup(t, name)
	acctest.CreateGroupsOutOfBand(t, name+"-node0", name+"-node1")
	dir := acctest.NewWorkDir(t, acctest.VirtualCluster{Name: name, Counts: []int{1, 1}}.String())
	out := dir.MustRun("import", "ray_virtual_cluster.t", name)
	if !strings.Contains(out, "Import could not recover every argument") || !strings.Contains(out, clusterspec.AttrNumGPUsPerNode) ||
		!strings.Contains(out, clusterspec.AttrSelectNodes) {
		t.Errorf("import of unrecorded groups did not warn about what it could not recover:\n%s", out)
	}
	if rec := acctest.ReadRecord(t, name); rec != nil {
		t.Errorf("the import wrote a record before any apply: %+v", rec)
	}
	dir.MustRun("apply", "-auto-approve")
	if rec := acctest.ReadRecord(t, name); rec == nil || rec.SchemaVersion != record.ManifestSchemaVersion || len(rec.Groups) != 2 {
		t.Errorf("record after the import's apply: %+v", rec)
	}
	dir.MustRun("destroy", "-auto-approve")
	if groups, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name); err != nil || len(groups) > 0 {
		t.Errorf("groups left after destroy: %v %v", groups, err)
	}
}

func TestAccVirtualCluster_importUnified(t *testing.T) {
	name := acctest.Name("imp")
	cfg := acctest.VirtualCluster{Name: name, Counts: []int{2, 1}, GPUsPerNode: 4, Unified: true, Strategy: "STRICT_SPREAD"}.String()
	vcTest(t, name,
		resource.TestStep{Config: cfg},
		resource.TestStep{
			ResourceName:            vcName,
			ImportState:             true,
			ImportStateId:           name + ":2,1",
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: importIgnore,
		},
		resource.TestStep{
			ResourceName:  vcName,
			ImportState:   true,
			ImportStateId: "no-such-cluster",
			ExpectError:   regexp.MustCompile(`Nothing to import`),
		},
	)
}

// Import in a second directory, once applied, takes ownership: the first directory's
// destroy then only forgets the cluster (with a warning naming the other
// owner), and after the second directory destroys it, the first one's plan
// says it was destroyed by the state that had imported it.
func TestAccLifecycle_importTakesOwnership(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("import")
	removeGroupsAtCleanup(t, name)
	first := acctest.NewWorkDir(t, plainCluster(name).String())
	first.MustRun("apply", "-auto-approve")
	var ids map[string]string
	if err := groupIDs(t, name, &ids)(nil); err != nil {
		t.Fatal(err)
	}

	second := acctest.NewWorkDir(t, plainCluster(name).String())
	second.MustRun("import", "ray_virtual_cluster.t", name)
	if out := second.MustRun("apply", "-auto-approve"); !strings.Contains(out, "Import took ownership of the virtual cluster") {
		t.Errorf("the import's apply did not say it took ownership:\n%s", out)
	}
	if out := second.MustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes") ||
		strings.Contains(out, "imported by another state") {
		t.Errorf("plan after import is not empty, or warns the new owner:\n%s", out)
	}
	// The former owner's plan says who took the cluster, from the note the
	// import left in Ray's job records.
	from, to := stateOwner(t, first), stateOwner(t, second)
	note, err := acctest.Client(t).GetJob(context.Background(), driver.TransferID(clusterspec.DefaultNamespace, name))
	if err != nil || note.Metadata["raytf_transfer_from"] != record.OwnerDigest(from) || note.Metadata["raytf_transfer_to"] != record.OwnerDigest(to) {
		t.Fatalf("Ray holds no note of the transfer from %s to %s: %+v, %v", from, to, note, err)
	}
	out := first.MustRun("plan")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "Virtual cluster imported by another state") || !strings.Contains(flat, "(owner "+record.OwnerPrefix(to)+"…)") ||
		!strings.Contains(flat, "this state's destroy only forgets it") {
		t.Errorf("the former owner's plan does not warn that another state took the cluster:\n%s", out)
	}

	// A copy of the first state destroys: it no longer owns the cluster.
	firstCopy := acctest.NewWorkDir(t, plainCluster(name).String())
	copyState(t, first, firstCopy)
	out = firstCopy.MustRun("destroy", "-auto-approve")
	if !strings.Contains(out, "Virtual cluster left to its owner") || !strings.Contains(out, "another Terraform state (owner") ||
		!strings.Contains(out, "Virtual cluster imported by another state") {
		t.Errorf("destroy by the former owner did not warn:\n%s", out)
	}
	if err := sameGroupIDs(t, name, &ids)(nil); err != nil {
		t.Fatalf("the former owner's destroy touched the groups: %v", err)
	}

	second.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
		t.Fatal(err)
	}
	if left := acctest.JobRecordsLeft(t, name, 10*time.Second); len(left) > 0 {
		t.Errorf("the owner's destroy left job records or the transfer note in Ray: %v", left)
	}
	out = first.MustRun("plan")
	flat = strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "Virtual cluster is gone") || !strings.Contains(flat, "by another Terraform state (owner") ||
		!strings.Contains(flat, "that had imported it") || !strings.Contains(flat, "will be created") {
		t.Errorf("the first state's plan does not say what happened:\n%s", out)
	}
}

// stateOwner reads the owner_id of the one cluster in w's local state.
func stateOwner(t *testing.T, w *acctest.WorkDir) string {
	t.Helper()
	owners := stateOwners(t, w)
	if len(owners) != 1 {
		t.Fatalf("state of %s holds %d resources, want one cluster: %v", w.Dir, len(owners), owners)
	}
	for _, owner := range owners {
		return owner
	}
	return ""
}

// stateOwners reads the owner_id of every resource instance in w's local
// state, by resource address ("" for one without).
func stateOwners(t *testing.T, w *acctest.WorkDir) map[string]string {
	t.Helper()
	data, err := os.ReadFile(w.Dir + "/terraform.tfstate")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes struct {
					OwnerID string `json:"owner_id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state of %s: %v", w.Dir, err)
	}
	out := map[string]string{}
	for _, r := range st.Resources {
		for _, i := range r.Instances {
			out[r.Type+"."+r.Name] = i.Attributes.OwnerID
		}
	}
	return out
}

// copyState copies from's local state file into to.
func copyState(t *testing.T, from, to *acctest.WorkDir) {
	t.Helper()
	data, err := os.ReadFile(from.Dir + "/terraform.tfstate")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to.Dir+"/terraform.tfstate", data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// An import that is only planned moves nothing (issue: a speculative plan in
// a pull request took clusters): another state plans an import block of the
// cluster and a third imports it with the CLI, neither applies; the record
// still names the first state, Ray holds no ownership note, the first
// state's plan is empty and warns nothing, and its destroy removes the
// groups.
func TestAccLifecycle_plannedImportMovesNothing(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("pimp")
	removeGroupsAtCleanup(t, name)
	first := acctest.NewWorkDir(t, plainCluster(name).String())
	first.MustRun("apply", "-auto-approve")
	before := acctest.ReadRecord(t, name)
	if before == nil || before.Owner == "" {
		t.Fatalf("record after apply: %+v", before)
	}

	importBlock := acctest.Block{Type: "import", Attrs: []acctest.Attr{{Key: "to", Expr: vcName}, {Key: "id", Expr: acctest.Quote(name)}}}
	planner := acctest.NewWorkDir(t, acctest.HCL(plainCluster(name), importBlock))
	out := strings.Join(strings.Fields(planner.MustRun("plan")), " ")
	for _, want := range []string{"1 to import, 0 to add, 1 to change, 0 to destroy", "Apply takes ownership of the imported virtual cluster",
		"(owner " + record.OwnerPrefix(before.Owner) + "…", "Nothing has changed in Ray"} {
		if !strings.Contains(out, want) {
			t.Errorf("the import's plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, before.Owner) {
		t.Errorf("the import's plan shows the owner's full owner_id:\n%s", out)
	}
	cli := acctest.NewWorkDir(t, plainCluster(name).String())
	cli.MustRun("import", "ray_virtual_cluster.t", name)
	if owner := stateOwner(t, cli); owner != "" {
		t.Errorf("the CLI import's state holds owner_id %q before any apply, want \"\"", owner)
	}

	if rec := acctest.ReadRecord(t, name); rec == nil || rec.Owner != before.Owner || rec.UpdatedAt != before.UpdatedAt {
		t.Fatalf("a planned import changed the record in Ray: before %+v, after %+v", before, rec)
	}
	if _, err := acctest.Client(t).GetJob(context.Background(), driver.TransferID(clusterspec.DefaultNamespace, name)); !rayclient.IsNotFound(err) {
		t.Errorf("a planned import left an ownership note in Ray: %v", err)
	}
	if out, err := first.Run("plan", "-detailed-exitcode"); err != nil || !strings.Contains(out, "No changes") || strings.Contains(out, "imported") {
		t.Errorf("the owner's plan after another state's planned import is not empty and quiet (%v):\n%s", err, out)
	}
	first.MustRun("destroy", "-auto-approve")
	if err := acctest.CheckNoGroupsInRay(t, name)(nil); err != nil {
		t.Fatal(err)
	}
	if left := acctest.JobRecordsLeft(t, name, 10*time.Second); len(left) > 0 {
		t.Errorf("job records left in Ray after the commands ended: %v", left)
	}
}

// A cluster whose workers hold every GPU of its bundles is imported into a
// second state, by the CLI and by an import block: the import's refresh and
// plan, and the apply that takes it over, keep the GPU ids and ports of the
// cluster's record and run no probe task in its groups (a probe would wait
// for a GPU the workers hold until ready_timeout); the workers live on.
func TestAccLifecycle_importBusyCluster(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("busyimp")
	removeGroupsAtCleanup(t, name)
	busy := acctest.VirtualCluster{Name: name, Counts: []int{1, 1}, GPUsPerNode: 4, ReadyTimeout: "20s", PortLow: 1700, PortHigh: 1800}
	first := acctest.NewWorkDir(t, acctest.HCL(busy, acctest.Output("placement", `[for b in ray_virtual_cluster.t.bundles : "${b.node_id}/${b.gpu_id}/${b.port}"]`)))
	first.MustRun("apply", "-auto-approve")
	placement := first.MustRun("output", "-json", "placement")
	var workers []*acctest.BundleWorker
	for i := range 2 {
		workers = append(workers, acctest.StartBundleWorker(t, fmt.Sprintf("%s-node%d", name, i), 0, 0, 1))
	}

	// An import block that is only planned: it reads the record, runs nothing in the groups.
	planned := acctest.NewWorkDir(t, acctest.HCL(busy)+fmt.Sprintf("\nimport {\n  to = ray_virtual_cluster.t\n  id = %q\n}\n", name))
	if out := planned.MustRun("plan"); !strings.Contains(out, "1 to import") {
		t.Errorf("the import block's plan:\n%s", out)
	}

	second := acctest.NewWorkDir(t, acctest.HCL(busy, acctest.Output("placement", `[for b in ray_virtual_cluster.t.bundles : "${b.node_id}/${b.gpu_id}/${b.port}"]`)))
	second.MustRun("import", "ray_virtual_cluster.t", name)
	if out := second.MustRun("apply", "-auto-approve"); !strings.Contains(out, "Import took ownership of the virtual cluster") {
		t.Errorf("the import's apply did not take ownership:\n%s", out)
	}
	if got := second.MustRun("output", "-json", "placement"); got != placement {
		t.Errorf("the imported cluster's GPU ids and ports %s differ from its record's %s", got, placement)
	}
	for i, w := range workers {
		if _, _, err := w.Where(); err != nil {
			t.Errorf("the worker in bundle %d is gone after the import: %v", i, err)
		}
	}
	second.MustRun("destroy", "-auto-approve")
}
