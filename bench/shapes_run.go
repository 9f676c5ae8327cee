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
	Reps        int
	Prefix      string
	Log         io.Writer
}

// parallelism is the -parallelism a shape of clusters clusters (and its
// single cluster) is applied, planned and destroyed with.
func (c ShapesConfig) parallelism(clusters int) int {
	if c.Parallelism > 0 {
		return c.Parallelism
	}
	return max(clusters, terraformParallelism)
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

// ShapeRow is every sample of one shape.
type ShapeRow struct {
	Shape   Shape
	Samples []ShapeSample
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
	rows := make([]*ShapeRow, len(cfg.Shapes))
	for i, s := range cfg.Shapes {
		rows[i] = &ShapeRow{Shape: s}
	}
	for rep := 0; rep < cfg.Reps && ctx.Err() == nil; rep++ {
		cold, err := cfg.Floor.ColdRemove([]string{}) // the python start-up that splits the driver's lifetime
		if err != nil {
			return rows, err
		}
		for k := range rows {
			r := rows[(k+rep)%len(rows)]
			s, err := sr.sample(r.Shape, rep, cold.Startup)
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

// sample runs s and its single cluster, the shape first in even
// repetitions, and reads what Ray holds after both.
func (sr *shapesRun) sample(s Shape, rep int, interp time.Duration) (ShapeSample, error) {
	var out ShapeSample
	many := func() (err error) { out.Shape, err = sr.cycle(s, s.Clusters(), rep, interp); return err }
	single := func() (err error) { out.Single, err = sr.cycle(s.Single(), s.Clusters(), rep, interp); return err }
	err := pair(rep, many, single)
	out.Left = raceLeft(context.WithoutCancel(sr.ctx), sr.left)
	sr.logf("   shapes: %s rep %d: apply %ss vs %ss, plan %ss vs %ss, destroy %ss vs %ss; left %s (%v)", s.Name, rep+1,
		Sec(out.Shape.Apply.Wall), Sec(out.Single.Apply.Wall), Sec(out.Shape.Plan.Wall), Sec(out.Single.Plan.Wall),
		Sec(out.Shape.Destroy.Wall), Sec(out.Single.Destroy.Wall), out.Left.cell(), err)
	return out, err
}

// cycle applies s, plans it (nothing may change) and destroys it, every
// command at the -parallelism of a shape of clusters clusters, so that a
// shape and its single cluster run alike.
func (sr *shapesRun) cycle(s Shape, clusters, rep int, interp time.Duration) (ShapeRun, error) {
	var r ShapeRun
	name := fmt.Sprintf("%s-%s-r%d", sr.cfg.Prefix, s.Key, rep)
	dir, err := sr.ws.Dir("shapes-"+s.Key, map[string]string{"main.tf": shapeHCL(sr.proxy.URL, name, s)})
	if err != nil {
		return r, err
	}
	parallelism := fmt.Sprintf("-parallelism=%d", sr.cfg.parallelism(clusters))
	r.Apply, err = sr.traced(dir, "apply", interp, parallelism)
	if err == nil {
		r.Nodes = nodesHolding(sr.ctx, sr.cfg.Client, name+"-")
		err = sr.plan(&r, dir, parallelism)
	}
	var derr error
	r.Destroy, derr = sr.traced(dir, "destroy", interp, parallelism)
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
