package resources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// readerConfig is an application's configuration: it only reads cluster name.
func readerConfig(name string) string {
	return acctest.HCL(
		acctest.Block{Type: "data", Labels: []string{"ray_virtual_cluster", "app"}, Attrs: []acctest.Attr{{Key: "name", Expr: acctest.Quote(name)}}},
		acctest.Output("cluster", "data.ray_virtual_cluster.app"))
}

// readFromSecondState applies readerConfig in its own working directory and
// state and returns the data source's value.
func readFromSecondState(t *testing.T, w *acctest.WorkDir) map[string]any {
	t.Helper()
	w.MustRun("apply", "-auto-approve")
	var out map[string]any
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "cluster")), &out); err != nil {
		t.Fatalf("output -json cluster: %v", err)
	}
	return out
}

// sameAsOwner compares what the reader saw with the owning resource's state,
// attribute by attribute (the data source's groups carry no drift).
func sameAsOwner(read, owned map[string]any) error {
	for _, k := range []string{"bundles", "master_address", "master_port", "world_size", "node_count", "use_gpus",
		"num_gpus_per_node", "max_colocated_worker_groups", "use_unified_pg", "placement_group_strategy",
		"bundle_ct_per_node_list", "sorted_bundle_indices", "nvlink_domain_per_bundle", "port_range_low", "port_range_high", "namespace"} {
		if fmt.Sprint(read[k]) != fmt.Sprint(owned[k]) {
			return fmt.Errorf("%s: the data source read %v, the owner's state has %v", k, read[k], owned[k])
		}
	}
	// The reader sees the digest of the owner's token, never the token.
	if tok, _ := owned["owner_id"].(string); tok == "" || read["owner_id"] != record.OwnerDigest(tok) {
		return fmt.Errorf("owner_id: the data source read %v, want the digest of the owner's %q", read["owner_id"], tok)
	}
	readGroups, _ := read["placement_groups"].([]any)
	ownedGroups, _ := owned["placement_groups"].([]any)
	if len(readGroups) != len(ownedGroups) || len(readGroups) == 0 {
		return fmt.Errorf("placement_groups: read %v, owned %v", readGroups, ownedGroups)
	}
	for i := range readGroups {
		og := map[string]any{}
		for k, v := range ownedGroups[i].(map[string]any) {
			if k != "drift" {
				og[k] = v
			}
		}
		if fmt.Sprint(readGroups[i]) != fmt.Sprint(og) {
			return fmt.Errorf("placement_groups[%d]: read %v, owned %v", i, readGroups[i], og)
		}
	}
	return nil
}

// sameAsRay compares the reader's groups and bundle nodes with the state API.
func sameAsRay(t *testing.T, name string, read map[string]any) error {
	live, err := acctest.LiveGroups(context.Background(), acctest.Client(t), name)
	if err != nil {
		return err
	}
	byName := map[string]raystate.PlacementGroup{}
	for _, g := range live {
		byName[g.Name] = g
	}
	groups, _ := read["placement_groups"].([]any)
	if len(groups) != len(live) {
		return fmt.Errorf("the data source read %d groups, Ray has %d", len(groups), len(live))
	}
	for _, raw := range groups {
		g := raw.(map[string]any)
		pg, ok := byName[g["name"].(string)]
		if !ok || pg.PlacementGroupID != g["id"] || pg.State != g["state"] || fmt.Sprint(len(pg.Bundles)) != fmt.Sprint(g["bundle_count"]) {
			return fmt.Errorf("group %v: Ray reports %+v", g, pg)
		}
	}
	for _, raw := range read["bundles"].([]any) {
		b := raw.(map[string]any)
		pg := byName[b["placement_group"].(string)]
		index := int(b["bundle_index"].(float64))
		if index >= len(pg.Bundles) || pg.Bundles[index].NodeID != b["node_id"] {
			return fmt.Errorf("bundle %v: Ray places it on %+v", b, pg.Bundles)
		}
	}
	return nil
}

// A second configuration, with a state of its own, reads the cluster the
// first one owns: the same groups, bundles and master as the owner's state
// and Ray, and its destroy leaves the cluster alone.
func TestAccVirtualClusterDataSource_secondState(t *testing.T) {
	name := acctest.Name("attach2-ds")
	var reader *acctest.WorkDir
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProviderFactories,
		CheckDestroy: func(s *terraform.State) error {
			if err := acctest.CheckNoGroupsInRay(t, name)(s); err != nil {
				return err
			}
			if reader == nil { // the step failed before it read
				return nil
			}
			// After the owner's destroy the reader is told who destroyed it.
			out, err := reader.Run("plan")
			if err == nil || !wrappedRE("Virtual cluster not found", fmt.Sprintf(`virtual cluster %q in Ray namespace "terraform-ray": it was destroyed at`, name),
				"by the Terraform state with owner").MatchString(out) {
				return fmt.Errorf("reading a destroyed cluster: err=%v\n%s", err, out)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: acctest.VirtualCluster{Name: name, Counts: []int{2, 1}, GPUsPerNode: 4}.String(),
			ConfigStateChecks: []statecheck.StateCheck{stateCheckFunc(func(resources map[string]map[string]any) error {
				owned := resources[vcName]
				reader = acctest.NewWorkDir(t, readerConfig(name))
				read := readFromSecondState(t, reader)
				if err := sameAsOwner(read, owned); err != nil {
					return err
				}
				if read["id"] != "terraform-ray/"+name || read["schema_version"] != float64(record.ManifestSchemaVersion) || read["created_at"] == "" {
					return fmt.Errorf("record fields: %v", read)
				}
				if err := sameAsRay(t, name, read); err != nil {
					return err
				}
				// Reading again changes nothing: same record, same groups.
				again := readFromSecondState(t, reader)
				if diff := cmp.Diff(read, again); diff != "" {
					return fmt.Errorf("a second read differs (-first +second):\n%s", diff)
				}
				reader.MustRun("destroy", "-auto-approve")
				return sameAsRay(t, name, read)
			})},
		}},
	})
}

// Reading what is not a cluster fails with a message naming it.
func TestAccVirtualClusterDataSource_notACluster(t *testing.T) {
	acctest.SkipUnlessAcc(t)
	acctest.PreCheck(t)
	name := acctest.Name("attach2-none")
	reader := acctest.NewWorkDir(t, readerConfig(name))
	out, err := reader.Run("plan")
	if err == nil || !wrappedRE("Virtual cluster not found", fmt.Sprintf(`no virtual cluster %q in Ray namespace "terraform-ray"`, name),
		"no record in Ray's internal KV").MatchString(out) {
		t.Fatalf("reading a cluster never applied: err=%v\n%s", err, out)
	}

	// Groups made outside the provider have no record.
	acctest.CreateGroupsOutOfBand(t, name+"-node0")
	t.Cleanup(func() { acctest.RemoveGroupsOutOfBand(t, name+"-node0") })
	out, err = reader.Run("plan")
	if err == nil || !wrappedRE("Virtual cluster not found", "placement groups named like it exist", regexp.QuoteMeta(fmt.Sprintf(`"%s-node0" (CREATED)`, name)),
		"terraform import").MatchString(out) {
		t.Fatalf("reading groups without a record: err=%v\n%s", err, out)
	}
	if !strings.Contains(out, `data.ray_virtual_cluster.app`) {
		t.Errorf("the error does not point at the data source:\n%s", out)
	}
}
