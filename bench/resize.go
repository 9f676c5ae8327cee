package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"
)

// ResizeConfig is the resize part (issue #55): a per-node cluster of Nodes
// one-GPU logical nodes grows by one in place, against the create of the
// same cluster at Nodes+1 and of a one-node cluster, with the real CLI.
type ResizeConfig struct {
	Tofu, Dir, Address, Name string
	Nodes, Reps              int
	Log                      io.Writer
}

// ResizeResult holds the wall time of each command per repetition.
type ResizeResult struct {
	Nodes                    int
	Grow, Shrink, Create1    []time.Duration
	CreateGrown, CreateSmall []time.Duration
	KeptIDs                  bool // every grow kept the groups' ids
}

// resizeHCL is a per-node cluster of var.nodes one-GPU logical nodes.
func resizeHCL(address, name string) string {
	return ProviderHCL(address) + fmt.Sprintf(`
variable "nodes" {
  type = number
}

resource "ray_virtual_cluster" "c" {
  name                    = %q
  bundle_ct_per_node_list = [for _ in range(var.nodes) : 1]
  num_gpus_per_node       = 1
  port_range_low          = 2300
  port_range_high         = 2400
}

output "ids" {
  value = [for g in ray_virtual_cluster.c.placement_groups : g.id]
}
`, name)
}

// RunResize measures, per repetition: apply of Nodes (untimed), apply of
// Nodes+1 (the grow, timed), apply of Nodes (the shrink, timed), destroy;
// then the create of Nodes+1 from nothing and of one node, each destroyed.
func RunResize(ctx context.Context, c ResizeConfig) (ResizeResult, error) {
	logf := logTo(c.Log)
	res := ResizeResult{Nodes: c.Nodes, KeptIDs: true}
	ws, _, err := NewWorkspace(ctx, c.Tofu, c.Dir)
	if err != nil {
		return res, err
	}
	dir, err := ws.Dir("resize", map[string]string{"main.tf": resizeHCL(c.Address, c.Name)})
	if err != nil {
		return res, err
	}
	// No init: the dev_overrides serve the provider (init would ask the registry).
	apply := func(nodes int) (time.Duration, error) {
		wall, code, out, err := ws.Run(ctx, dir, "apply", "-auto-approve", "-no-color", fmt.Sprintf("-var=nodes=%d", nodes))
		if err == nil && code != 0 {
			err = fmt.Errorf("apply of %d nodes exited %d:\n%s", nodes, code, tail(out, 30))
		}
		return wall, err
	}
	destroy := func() error {
		_, code, out, err := ws.Run(context.WithoutCancel(ctx), dir, "destroy", "-auto-approve", "-no-color", "-var=nodes=1")
		if err == nil && code != 0 {
			err = fmt.Errorf("destroy exited %d:\n%s", code, tail(out, 30))
		}
		return err
	}
	ids := func() []string {
		_, _, out, _ := ws.Run(ctx, dir, "output", "-no-color", "-json", "ids")
		var list []string
		_ = json.Unmarshal([]byte(out), &list)
		return list
	}
	timed := func(into *[]time.Duration, nodes int) error {
		wall, err := apply(nodes)
		if err == nil {
			*into = append(*into, wall)
		}
		return err
	}
	for rep := 0; rep < c.Reps && ctx.Err() == nil; rep++ {
		logf(">> resize rep %d: %d nodes, grow to %d, shrink back", rep+1, c.Nodes, c.Nodes+1)
		err := timed(&res.CreateSmall, c.Nodes)
		before := ids()
		if err == nil {
			err = timed(&res.Grow, c.Nodes+1)
		}
		if after := ids(); err == nil && (len(before) != c.Nodes || len(after) != c.Nodes+1 || !slices.Equal(after[:c.Nodes], before)) {
			res.KeptIDs = false
		}
		if err == nil {
			err = timed(&res.Shrink, c.Nodes)
		}
		if derr := destroy(); err == nil {
			err = derr
		}
		if err == nil {
			err = timed(&res.CreateGrown, c.Nodes+1)
			if derr := destroy(); err == nil {
				err = derr
			}
		}
		if err == nil {
			err = timed(&res.Create1, 1)
			if derr := destroy(); err == nil {
				err = derr
			}
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// PrintResize prints the resize rows: a grow against the creates.
func PrintResize(w io.Writer, r ResizeResult) {
	fmt.Fprintf(w, "| command (real CLI, per-node one-GPU groups) | wall min / median / max |\n| --- | --- |\n")
	row := func(what string, ds []time.Duration) {
		if len(ds) > 0 {
			fmt.Fprintf(w, "| %s | %s |\n", what, MinMedianMax(ds))
		}
	}
	row(fmt.Sprintf("apply: grow %d -> %d nodes in place", r.Nodes, r.Nodes+1), r.Grow)
	row(fmt.Sprintf("apply: shrink %d -> %d nodes in place", r.Nodes+1, r.Nodes), r.Shrink)
	row("apply: create 1 node", r.Create1)
	row(fmt.Sprintf("apply: create %d nodes", r.Nodes), r.CreateSmall)
	row(fmt.Sprintf("apply: create %d nodes", r.Nodes+1), r.CreateGrown)
	fmt.Fprintf(w, "\nkept groups' ids unchanged by every grow: %v\n\n", r.KeptIDs)
}
