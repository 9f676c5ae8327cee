package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// ShapesConfig configures RunShapes.
type ShapesConfig struct {
	CLI, Dir, Address string
	Client            *rayclient.Client
	// Floor is baseline.py: a cold python process per repetition gives the
	// start-up that splits the driver's lifetime (traceCLI), and its python
	// and GCS address read the provider's KV for what is left in Ray.
	Floor  *Baseline
	Shapes []Shape
	// Parallelism is every command's -parallelism; 0: the shape's clusters
	// all at once (at least Terraform's default), so that each command is
	// one Ray job and the phase split covers all of it.
	Parallelism int
	// DefaultRows adds, for a shape of more clusters than Terraform's
	// default -parallelism, a row at that default (reported, no target).
	DefaultRows bool
	Reps        int
	Prefix      string
	Log         io.Writer
}

// ShapeRun is one configuration's apply, steady plan and destroy.
type ShapeRun struct {
	Apply, Destroy CLIPhases
	Plan           PlanTimes
	PlanCalls      int // the plan's HTTP requests
	Nodes          int // the nodes holding the applied clusters' bundles (-1: unread)
}

// ShapeSample is one paired repetition: the shape and its single cluster,
// and what Ray held once both were destroyed.
type ShapeSample struct {
	Shape, Single ShapeRun
	Left          RaceLeft
}

// ShapeRow is every sample of one shape at one -parallelism.
type ShapeRow struct {
	Shape Shape
	// Parallelism is the row's -parallelism when it runs fewer clusters at
	// once than the shape has (0: all at once, the row the targets judge).
	Parallelism int
	Samples     []ShapeSample
}

// shapeRows are the rows of cfg's shapes: each at full parallelism and,
// with DefaultRows, the shapes Terraform's default -parallelism splits once
// more at that default.
func shapeRows(cfg ShapesConfig) []*ShapeRow {
	var rows []*ShapeRow
	for _, s := range cfg.Shapes {
		rows = append(rows, &ShapeRow{Shape: s, Parallelism: cfg.Parallelism})
		if cfg.DefaultRows && cfg.Parallelism == 0 && s.Clusters() > terraformParallelism {
			rows = append(rows, &ShapeRow{Shape: s, Parallelism: terraformParallelism})
		}
	}
	return rows
}

// Name is the row's label: the shape's name, and a -parallelism below the
// shape's clusters.
func (r *ShapeRow) Name() string {
	if r.Judged() {
		return r.Shape.Name
	}
	return fmt.Sprintf("%s, -parallelism=%d", r.Shape.Name, r.Parallelism)
}

// Judged reports whether the row runs every cluster of its shape at once:
// the targets hold there; rows at a lower -parallelism are reported.
func (r *ShapeRow) Judged() bool { return r.Parallelism == 0 || r.Parallelism >= r.Shape.Clusters() }

// parallelism is the -parallelism the row's shape and its single cluster
// run with.
func (r *ShapeRow) parallelism() int {
	if r.Parallelism > 0 {
		return r.Parallelism
	}
	return max(r.Shape.Clusters(), terraformParallelism)
}

// RunShapes applies, plans and destroys each shape and its single cluster
// with the real CLI through the recording proxy, paired and alternating in
// order per repetition, the shapes taking turns going first; after each
// pair it reads what Ray still holds.
func RunShapes(ctx context.Context, cfg ShapesConfig) ([]*ShapeRow, error) {
	ws, proxy, _, err := proxiedWorkspace(ctx, cfg.CLI, cfg.Dir, cfg.Address)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	sr := &shapesRun{ctx: ctx, cfg: cfg, ws: ws, proxy: proxy, logf: logTo(cfg.Log),
		left: RaceConfig{Client: cfg.Client, Python: cfg.Floor.Python, GCS: cfg.Floor.Address}}
	rows := shapeRows(cfg)
	for rep := 0; rep < cfg.Reps && ctx.Err() == nil; rep++ {
		cold, err := cfg.Floor.ColdRemove([]string{}) // the python start-up that splits the driver's lifetime
		if err != nil {
			return rows, err
		}
		for k := range rows {
			r := rows[(k+rep)%len(rows)]
			s, err := sr.sample(r, rep, cold.Startup)
			if err != nil {
				return rows, err
			}
			r.Samples = append(r.Samples, s)
		}
	}
	return rows, ctx.Err()
}

// shapesRun is what every sample of RunShapes shares.
type shapesRun struct {
	ctx   context.Context
	cfg   ShapesConfig
	ws    *Workspace
	proxy *CountingProxy
	logf  func(format string, args ...any)
	left  RaceConfig // raceLeft reads its Client, Python and GCS
}

// sample runs r's shape and its single cluster, the shape first in even
// repetitions, and reads what Ray holds after both.
func (sr *shapesRun) sample(r *ShapeRow, rep int, interp time.Duration) (ShapeSample, error) {
	var out ShapeSample
	s, p := r.Shape, r.parallelism()
	many := func() (err error) { out.Shape, err = sr.cycle(s, p, rep, interp); return err }
	single := func() (err error) { out.Single, err = sr.cycle(s.Single(), p, rep, interp); return err }
	err := pair(rep, many, single)
	out.Left = raceLeft(context.WithoutCancel(sr.ctx), sr.left)
	sr.logf("   shapes: %s rep %d: apply %ss vs %ss, plan %ss vs %ss, destroy %ss vs %ss; left %s (%v)", r.Name(), rep+1,
		Sec(out.Shape.Apply.Wall), Sec(out.Single.Apply.Wall), Sec(out.Shape.Plan.Wall), Sec(out.Single.Plan.Wall),
		Sec(out.Shape.Destroy.Wall), Sec(out.Single.Destroy.Wall), out.Left.cell(), err)
	return out, err
}

// cycle applies s, plans it (nothing may change) and destroys it, every
// command at -parallelism=parallelism (the shape's), so that a shape and
// its single cluster run alike.
func (sr *shapesRun) cycle(s Shape, parallelism, rep int, interp time.Duration) (ShapeRun, error) {
	var r ShapeRun
	name := fmt.Sprintf("%s-%s-p%d-r%d", sr.cfg.Prefix, s.Key, parallelism, rep)
	dir, err := sr.ws.Dir("shapes-"+s.Key, map[string]string{"main.tf": shapeHCL(sr.proxy.URL, name, s)})
	if err != nil {
		return r, err
	}
	flag := fmt.Sprintf("-parallelism=%d", parallelism)
	r.Apply, err = sr.traced(dir, "apply", interp, flag)
	if err == nil {
		r.Nodes = nodesHolding(sr.ctx, sr.cfg.Client, name+"-")
		err = sr.plan(&r, dir, flag)
	}
	var derr error
	r.Destroy, derr = sr.traced(dir, "destroy", interp, flag)
	if err = errors.Join(err, derr); err != nil {
		return r, fmt.Errorf("%s (rep %d): %w", s.Name, rep+1, err)
	}
	return r, nil
}

// traced runs one traced command; a phase split that failed leaves the
// command's wall time without its phases, and is not an error.
func (sr *shapesRun) traced(dir, command string, interp time.Duration, extra ...string) (CLIPhases, error) {
	ctx := sr.ctx
	if command == "destroy" {
		ctx = context.WithoutCancel(ctx)
	}
	c, _, err := traceCLI(ctx, sr.ws, sr.proxy, dir, command, interp, extra...)
	var split splitError
	if errors.As(err, &split) {
		sr.logf("   %s: no phase split (%d jobs): %v", command, c.Jobs, split.error)
		return c, nil
	}
	return c, err // traceCLI's error holds the end of the output
}

// plan runs the steady plan of the applied configuration into r, counting
// its HTTP requests; one that would change anything is an error.
func (sr *shapesRun) plan(r *ShapeRun, dir string, extra ...string) error {
	sr.proxy.Take()
	wall, cpu, _, err := noChangesPlan(sr.ctx, sr.ws, dir, extra...)
	r.Plan, r.PlanCalls = PlanTimes{Wall: wall, CPU: cpu}, len(sr.proxy.Take())
	if err != nil {
		return fmt.Errorf("steady plan: %w", err)
	}
	return nil
}

// nodesHolding counts the nodes that hold bundles of the live groups whose
// names start with prefix: where Ray placed a shape (-1 when unread).
func nodesHolding(ctx context.Context, c *rayclient.Client, prefix string) int {
	groups, err := liveview.ListLiveGroups(ctx, c)
	if err != nil {
		return -1
	}
	nodes := map[string]bool{}
	for _, g := range groups {
		if !strings.HasPrefix(g.Name, prefix) {
			continue
		}
		for _, b := range g.Bundles {
			if b.NodeID != "" {
				nodes[b.NodeID] = true
			}
		}
	}
	return len(nodes)
}
