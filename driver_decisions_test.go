package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// driverPlumbing are the driver's top-level functions that decide nothing of
// their own: reading and writing Ray and the KV, the probe's mechanics, the
// request's shape, output, and the parity-tested rules (contract.SharedRules).
// Every other top-level function is a decision DESIGN.md must list.
var driverPlumbing = []string{
	// shape.py
	"_is_number", "_is_int", "_is_str_map", "check_shape", "load_request", "check_version", "parse_request", "parse_groups",
	// rayapi.py, gcs_direct.py, runstate.py
	"import_ray", "auth_metadata", "installed_ray_version", "emit", "progress",
	// nodes.py, groups.py, kv.py
	"is_resource_key", "cluster_view", "node_view", "rank_from_label", "node_topology",
	"norm_bundle", "same_amount", "same_bundle", "table_bundles", "lookup", "is_detached", "wait_removed",
	"now", "kv_get", "kv_read", "kv_put", "kv_del", "kv_put_new", "kv_keys", "other_owner",
	"owner_digest", "owner_prefix", "digest_owners", "digest_request",
	// probe.py, reservations.py, wave.py
	"_bind_free_ports", "_probe_in_bundle", "_fire", "_wait_one", "node_locks", "group_result", "probe_groups",
	"reservation", "owned", "run_token", "holder", "read_reservations", "node_totals", "placed_nodes", "group_shares", "add_to",
	"renew_key", "refresh_lock", "stop_keeping", "listed_reservations", "share_on", "same_shares",
	// quotas.py, gcs_direct.py
	"add_res", "ask_of", "group_of", "namespace_groups", "held_by", "larger", "fits",
	// actions.py, main.py
	"do_record", "do_read", "new_result", "install_signal_handlers", "run_single", "main",
}

// designDecisions returns the names in the first column of DESIGN.md's table
// of what the driver decides.
func designDecisions(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## What driver.py decides, and why inside the job\n")
	if !ok {
		t.Fatal("DESIGN.md has no section \"What driver.py decides, and why inside the job\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*)`").FindAllStringSubmatch(cells[1], -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// TestDesignListsDriverDecisions: every top-level function of the driver's
// modules is a decision DESIGN.md lists (with why it runs inside the job) or
// plumbing named above; every name listed exists.
func TestDesignListsDriverDecisions(t *testing.T) {
	defined := map[string]string{}
	paths, _ := filepath.Glob("internal/driver/driverpy/*.py")
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^def ([A-Za-z_][A-Za-z0-9_]*)\(`).FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = path
		}
	}
	listed := designDecisions(t)
	if len(listed) == 0 {
		t.Fatal("DESIGN.md's table of driver decisions lists no function")
	}
	batcher, err := os.ReadFile("internal/driver/batcher.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range listed {
		switch {
		case name == "Batcher" && strings.Contains(string(batcher), "\ntype Batcher struct"):
		case defined[name] == "":
			t.Errorf("DESIGN.md lists %s, which no driver module defines", name)
		case slices.Contains(driverPlumbing, name):
			t.Errorf("%s is both a listed decision and plumbing", name)
		}
	}
	for name, path := range defined {
		if !slices.Contains(listed, name) && !slices.Contains(driverPlumbing, name) {
			t.Errorf("%s defines %s: list the decision in DESIGN.md (\"What driver.py decides\"), or add it to driverPlumbing if it decides nothing", path, name)
		}
	}
	for _, name := range driverPlumbing {
		if defined[name] == "" {
			t.Errorf("driverPlumbing names %s, which no driver module defines", name)
		}
	}
}
