package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

// The 64-bundle part (BENCH_PART=gpu64) runs on scripts/ray-cluster.sh's
// gpu8x8 node table: 8 nodes of 8 logical GPUs in 4 NVLink domains of 2.
const (
	// WideGPUsPerNode is the gpu8x8 table's GPUs per worker node, and the
	// bundles of each logical node of the part's clusters.
	WideGPUsPerNode = 8
	// WideSegmentSize is the clusters' segment_size: one NVLink domain.
	WideSegmentSize = 2
	// FloorBundles is the size of the apply-against-its-floor row.
	FloorBundles = 16
	// GPU64Ratio is the target of the 64-bundle rows: apply+destroy at
	// most this times NeMo-RL's cold path.
	GPU64Ratio = 0.25
	// FloorRatio is the target of the apply against its floor plus the
	// plain probe (issue 53: job + placement + probe).
	FloorRatio = 1.2
)

// SegmentSpec is a GPU cluster of bundles/WideGPUsPerNode logical nodes of
// WideGPUsPerNode bundles that chooses its nodes in segments of
// WideSegmentSize and pins them to their NVLink domain (select_nodes,
// pinning = "domain"): what NeMo-RL's algorithms do for a segment_size
// (prepare_segment_topology, node_resource_constraints).
func SegmentSpec(name string, bundles int, layout Layout) clusterspec.Spec {
	s := wideSpec(name, bundles, layout)
	seg := WideSegmentSize
	s.SegmentSize = &seg
	s.SelectNodes = true
	s.Pinning = clusterspec.PinningDomain
	return s
}

// wideSpec is the plain cluster of bundles in logical nodes of
// WideGPUsPerNode (no node choice, no segment).
func wideSpec(name string, bundles int, layout Layout) clusterspec.Spec {
	s := ReferenceSpec(name, 0, layout)
	s.NumGPUsPerNode = WideGPUsPerNode
	for left := bundles; left > 0; left -= WideGPUsPerNode {
		s.BundleCtPerNode = append(s.BundleCtPerNode, min(left, WideGPUsPerNode))
	}
	if layout == LayoutUnified {
		s.UseUnifiedPG, s.Strategy = true, topology.StrategyPack
	}
	return s
}

// wideHCL renders the resource block of wideSpec or SegmentSpec.
func wideHCL(spec clusterspec.Spec) string {
	var extra []string
	if spec.UseUnifiedPG {
		extra = append(extra, `  use_unified_pg           = true`, `  placement_group_strategy = "PACK"`)
	}
	if spec.SegmentSize != nil {
		extra = append(extra, fmt.Sprintf("  segment_size             = %d", *spec.SegmentSize))
	}
	if spec.SelectNodes {
		extra = append(extra, `  select_nodes             = true`, fmt.Sprintf("  pinning                  = %q", spec.Pinning))
	}
	block := PerNodeHCL("bench", spec)
	return strings.Replace(block, "\n}\n", "\n"+strings.Join(extra, "\n")+"\n}\n", 1)
}

// GPU64Config configures the 64-bundle rows and the apply-against-its-floor
// row, run on one cluster.
type GPU64Config struct {
	CLI, Dir, Address string
	Client            *rayclient.Client
	// Floor is baseline.py (the cold placement floor, the python start-up);
	// NeMo runs NeMo-RL's cold path (nil: the 64-bundle rows have no ratio).
	Floor, NeMo *Baseline
	Prefix      string
	Layouts     []Layout
	Bundles     int // the NeMo-RL rows' size (64)
	Reps        int
	Wait        time.Duration
	Log         io.Writer
}

// GPU64Sample is one apply+destroy beside NeMo-RL's cold path.
type GPU64Sample struct {
	Apply, Destroy CLIPhases
	NeMo           NeMoCycle
}

// GPU64Row is every sample of one layout.
type GPU64Row struct {
	Layout         Layout
	Bundles, Nodes int
	Samples        []GPU64Sample
}

// FloorSample is one apply (and its destroy) of FloorBundles beside its
// floor: the empty job plus one cold python process placing the same
// groups (ColdCreate).
type FloorSample struct {
	Apply, Destroy CLIPhases
	EmptyJob       time.Duration
	Cold           BaselineTimes
}

// ColdToReady is the cold placement floor: exec of the process until its
// groups were ready (start-up, import ray, ray.init, create + ready).
func (f FloorSample) ColdToReady() time.Duration {
	return f.Cold.Startup + secs(f.Cold.Import) + secs(f.Cold.Init) + secs(f.Cold.Ready)
}

// Floor is the whole floor of an apply: the empty job plus ColdToReady.
func (f FloorSample) Floor() time.Duration { return f.EmptyJob + f.ColdToReady() }

// PlainProbe is the cold process's plain probe after ready: each bundle's
// GPU id and a free port, one worker start per node.
func (f FloorSample) PlainProbe() time.Duration { return secs(f.Cold.Probe) }

// FloorWithProbe is Floor plus PlainProbe: what an apply costs at least when
// it reports GPU ids and ports by probing after the groups are ready.
func (f FloorSample) FloorWithProbe() time.Duration { return f.Floor() + f.PlainProbe() }

// GPU64Result is the part's outcome.
type GPU64Result struct {
	Rows  []GPU64Row
	Floor []FloorSample
}

// RunGPU64 applies and destroys, with the real CLI through the recording
// proxy, a segment_size = 2 cluster of cfg.Bundles in each layout beside
// NeMo-RL's cold path on the same shape, then a unified cluster of
// FloorBundles beside its floor; provider and baseline alternate in order
// from one repetition to the next.
func RunGPU64(ctx context.Context, cfg GPU64Config) (*GPU64Result, error) {
	ws, proxy, _, err := proxiedWorkspace(ctx, cfg.CLI, cfg.Dir, cfg.Address)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	g := &gpu64Run{ctx: ctx, cfg: cfg, ws: ws, proxy: proxy, logf: logTo(cfg.Log)}
	res := &GPU64Result{}
	for _, l := range cfg.Layouts {
		spec := SegmentSpec(cfg.Prefix, cfg.Bundles, l)
		res.Rows = append(res.Rows, GPU64Row{Layout: l, Bundles: cfg.Bundles, Nodes: len(spec.BundleCtPerNode)})
	}
	for rep := 0; rep < cfg.Reps && ctx.Err() == nil; rep++ {
		for k := range res.Rows {
			r := &res.Rows[(k+rep)%len(res.Rows)] // the layouts take turns going first
			s, err := g.segmentSample(r.Layout, rep)
			if err != nil {
				return res, err
			}
			r.Samples = append(r.Samples, s)
		}
		f, err := g.floorSample(rep)
		if err != nil {
			return res, err
		}
		res.Floor = append(res.Floor, f)
	}
	return res, ctx.Err()
}

// gpu64Run is what every sample of RunGPU64 shares.
type gpu64Run struct {
	ctx   context.Context
	cfg   GPU64Config
	ws    *Workspace
	proxy *CountingProxy
	logf  func(format string, args ...any)
}

// pair runs provider and baseline, the provider first in even repetitions.
func pair(rep int, provider, baseline func() error) error {
	first, second := provider, baseline
	if rep%2 == 1 {
		first, second = baseline, provider
	}
	if err := first(); err != nil {
		return err
	}
	return second()
}

// segmentSample is one apply+destroy of the segment cluster in layout l and
// one NeMo-RL cold path on the same shape.
func (g *gpu64Run) segmentSample(l Layout, rep int) (GPU64Sample, error) {
	var s GPU64Sample
	name := fmt.Sprintf("%s-g%d-%s-r%d", g.cfg.Prefix, g.cfg.Bundles, l, rep)
	spec := SegmentSpec(name, g.cfg.Bundles, l)
	if err := WaitUntilPlaceable(g.ctx, g.cfg.Client, spec, g.cfg.Wait, g.logf); err != nil {
		return s, err
	}
	cold, err := g.cfg.Floor.ColdRemove([]string{}) // the python start-up that splits the driver's lifetime
	if err != nil {
		return s, err
	}
	provider := func() error {
		var err error
		s.Apply, s.Destroy, err = g.applyDestroy(spec, cold.Startup)
		return err
	}
	nemo := func() error {
		if g.cfg.NeMo == nil {
			return nil
		}
		var err error
		s.NeMo, err = g.cfg.NeMo.NeMoCold(name+"-nemo", spec.BundleCtPerNode, WideGPUsPerNode, l == LayoutUnified, WideSegmentSize)
		return err
	}
	err = pair(rep, provider, nemo)
	g.logf("   gpu64 %s rep %d: apply %ss destroy %ss | NeMo-RL cold %ss (%v)", l, rep+1,
		Sec(s.Apply.Wall), Sec(s.Destroy.Wall), Sec(s.NeMo.Wall), err)
	return s, err
}

// applyDestroy traces the apply and the destroy of spec with the CLI.
func (g *gpu64Run) applyDestroy(spec clusterspec.Spec, interp time.Duration) (CLIPhases, CLIPhases, error) {
	dir, err := g.ws.Dir("gpu64", map[string]string{"main.tf": ProviderHCL(g.proxy.URL) + "\n" + wideHCL(spec)})
	if err != nil {
		return CLIPhases{}, CLIPhases{}, err
	}
	apply, out, err := traceCLI(g.ctx, g.ws, g.proxy, dir, "apply", interp)
	destroy, _, derr := traceCLI(context.WithoutCancel(g.ctx), g.ws, g.proxy, dir, "destroy", interp)
	if err != nil {
		return apply, destroy, fmt.Errorf("%w\n%s", err, tail(out, 20))
	}
	return apply, destroy, derr
}

// floorSample is one apply+destroy of a plain unified cluster of
// FloorBundles and its floor: the empty job, and one cold python process
// placing the same groups.
func (g *gpu64Run) floorSample(rep int) (FloorSample, error) {
	var f FloorSample
	name := fmt.Sprintf("%s-f%d-r%d", g.cfg.Prefix, FloorBundles, rep)
	spec := wideSpec(name, FloorBundles, LayoutUnified)
	if err := WaitUntilPlaceable(g.ctx, g.cfg.Client, spec, g.cfg.Wait, g.logf); err != nil {
		return f, err
	}
	provider := func() error {
		cold, err := g.cfg.Floor.ColdRemove([]string{})
		if err != nil {
			return err
		}
		f.Apply, f.Destroy, err = g.applyDestroy(spec, cold.Startup)
		return err
	}
	floor := func() error {
		var err error
		if f.EmptyJob, err = EmptyJob(g.ctx, g.cfg.Client, name+"-emptyjob"); err != nil {
			return fmt.Errorf("empty job: %w", err)
		}
		groups := DriverSpec(contract.ActionCreate, BaselineNamespace, spec, ReadyTimeout).Groups
		if f.Cold, err = g.cfg.Floor.ColdCreate(renamed(groups, name, name+"-floor")); err != nil {
			return fmt.Errorf("cold placement floor: %w", err)
		}
		return nil
	}
	err := pair(rep, provider, floor)
	g.logf("   floor %d rep %d: apply %ss | empty job %ss + cold placement %ss = %ss, + plain probe %ss (%v)", FloorBundles, rep+1,
		Sec(f.Apply.Wall), Sec(f.EmptyJob), Sec(f.ColdToReady()), Sec(f.Floor()), Sec(f.PlainProbe()), err)
	return f, err
}
