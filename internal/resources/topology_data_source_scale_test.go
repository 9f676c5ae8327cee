package resources_test

import (
	"context"
	"math/big"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/standin"
)

// The data source at 10,000 NVL72 nodes, through the provider's protocol
// server and the stand-in dashboard (no Ray, no CLI): sizes and content, not
// time. bench/ times the same reads (topoplan).
func TestTopologyDataSourceAtTenThousandNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000-node read")
	}
	const n, selected = 10000, 8192
	srv := httptest.NewServer(standin.New(standin.Generate(standin.NVL72(n))))
	defer srv.Close()
	ctx := context.Background()
	provider, dsType, err := acctest.InProcessProvider(ctx, srv.URL, "ray_cluster_topology")
	if err != nil {
		t.Fatal(err)
	}
	read := func(args map[string]tftypes.Value) map[string]tftypes.Value {
		t.Helper()
		cfg, err := tfprotov6.NewDynamicValue(dsType, acctest.ObjectWith(dsType, args))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := provider.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "ray_cluster_topology", Config: &cfg})
		if err != nil || acctest.DiagErrors(resp.Diagnostics) != nil {
			t.Fatalf("read: %v %v", err, acctest.DiagErrors(resp.Diagnostics))
		}
		state, err := resp.State.Unmarshal(dsType)
		if err != nil {
			t.Fatal(err)
		}
		var vals map[string]tftypes.Value
		if err := state.As(&vals); err != nil {
			t.Fatal(err)
		}
		return vals
	}
	count := func(v tftypes.Value) int {
		var l []tftypes.Value
		if err := v.As(&l); err == nil {
			return len(l)
		}
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	def := read(nil)
	if count(def["nodes"]) != 0 || count(def["topology"]) != n || count(def["selected_node_ids"]) != 0 {
		t.Errorf("default: %d nodes, %d topology entries, %d selected", count(def["nodes"]), count(def["topology"]), count(def["selected_node_ids"]))
	}
	var gpus, cpus big.Float
	_ = def["total_gpus"].As(&gpus)
	_ = def["total_cpus"].As(&cpus)
	if g, _ := gpus.Int64(); g != 4*(n-1) {
		t.Errorf("total_gpus %s", gpus.String())
	}
	if c, _ := cpus.Int64(); c != 72*n {
		t.Errorf("total_cpus %s", cpus.String())
	}

	seg := read(map[string]tftypes.Value{"segment_size": tftypes.NewValue(tftypes.Number, 4),
		"num_nodes": tftypes.NewValue(tftypes.Number, selected)})
	if count(seg["selected_node_ids"]) != selected || count(seg["node_resource_constraints"]) != selected || count(seg["remaining_node_ids"]) != n-selected {
		t.Errorf("segment selection: %d selected, %d constraints, %d remaining", count(seg["selected_node_ids"]),
			count(seg["node_resource_constraints"]), count(seg["remaining_node_ids"]))
	}
	var msg string
	_ = seg["message"].As(&msg)
	if msg != "Topology-aware allocation: 8192 training nodes in 114 NVLink domains (segment_size=4)" {
		t.Errorf("message %q", msg)
	}

	all := read(map[string]tftypes.Value{"include_nodes": tftypes.NewValue(tftypes.Bool, true)})
	var nodes []tftypes.Value
	_ = all["nodes"].As(&nodes)
	if len(nodes) != n {
		t.Fatalf("all: %d nodes", len(nodes))
	}
	var first map[string]tftypes.Value
	_ = nodes[0].As(&first)
	var head bool
	_ = first["is_head_node"].As(&head)
	if !head || count(first["resources"]) != 6 || count(first["labels"]) != 2 {
		t.Errorf("first node (head, topo_rank 1): %v", first)
	}
}
