package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

//go:embed reference_baseline.py
var referenceSource []byte

// NewReferenceBaseline is the reference's own work (reference_baseline.py:
// create, wait ready, GPU/domain/rank probe per bundle, master address, the
// address/port batch, remove) behind the Baseline protocol.
func NewReferenceBaseline(python, address, dir string) *Baseline {
	return &Baseline{Python: python, Address: address, Dir: dir, Script: referenceSource, ScriptName: "reference_baseline.py"}
}

// RefCycle is one reference cycle's phase times (seconds, measured in Python).
type RefCycle struct {
	OK          bool    `json:"ok"`
	Error       string  `json:"error"`
	CreateReady float64 `json:"create_ready_s"`
	GPUProbes   float64 `json:"gpu_probes_s"`
	Master      float64 `json:"master_s"`
	PortBatch   float64 `json:"port_batch_s"`
	Create      float64 `json:"create_s"`
	Remove      float64 `json:"remove_s"`
	Bundles     int     `json:"bundles"`
	Nodes       int     `json:"nodes"`
	Import      float64 `json:"import_s"`
	Init        float64 `json:"init_s"`
	TFirst      float64 `json:"t_first"`
	TLast       float64 `json:"t_last"`
	// Cold process only, seen from Go: Wall is exec to exit, ColdCreate is
	// exec until the port batch is done, Teardown the rest (remove, exit).
	Wall, ColdCreate, Teardown time.Duration `json:"-"`
}

func parseRefCycle(line string) (RefCycle, error) {
	var c RefCycle
	return c, decodeAnswer("reference baseline", line, &c)
}

func (c *RefCycle) failed() string { return failure(c.OK, c.Error) }

// ReferenceCycle runs the reference's work once in the serving driver.
func (b *Baseline) ReferenceCycle(groups []contract.RequestGroup, useGPUs bool) (RefCycle, error) {
	line, err := b.exchange(map[string]any{"op": "cycle", "groups": groups, "use_gpus": useGPUs})
	if err != nil {
		return RefCycle{}, err
	}
	return parseRefCycle(line)
}

// ReferenceCold runs the reference's work in a fresh python process.
func (b *Baseline) ReferenceCold(groups []contract.RequestGroup, useGPUs bool) (RefCycle, error) {
	raw, _ := json.Marshal(groups)
	line, start, end, err := b.runCold("cold", string(raw), fmt.Sprint(useGPUs))
	if err != nil {
		return RefCycle{}, err
	}
	c, err := parseRefCycle(line)
	if err != nil {
		return c, err
	}
	first := time.Unix(0, int64(c.TFirst*1e9))
	c.Wall = end.Sub(start)
	c.ColdCreate = first.Sub(start) + secs(c.Import) + secs(c.Init) + secs(c.Create)
	c.Teardown = c.Wall - c.ColdCreate
	return c, nil
}

// Layout is how a reference-sized cluster is split into groups.
type Layout string

// Layouts: per-node PACK groups of up to GPUsPerNode bundles, or one unified
// PACK group (use_unified_pg = true, placement_group_strategy = "PACK").
const (
	LayoutPerNode Layout = "per-node"
	LayoutUnified Layout = "unified"
)

// ReferenceSpec is a GPU cluster of the given number of bundles: logical
// nodes of GPUsPerNode bundles (the last one smaller), as the reference's
// bundle_ct_per_node_list = [gpus_per_node] * nodes.
func ReferenceSpec(name string, bundles int, layout Layout) clusterspec.Spec {
	var counts []int
	for left := bundles; left > 0; left -= GPUsPerNode {
		counts = append(counts, min(left, GPUsPerNode))
	}
	s := PerNodeGPUCluster(name, 0)
	s.BundleCtPerNode = counts
	if layout == LayoutUnified {
		s.UseUnifiedPG = true
		s.Strategy = topology.StrategyPack
	}
	return s
}

// ReferenceConfig configures the provider-vs-reference comparison.
type ReferenceConfig struct {
	Apply *ApplyConfig // Client, JobPython, Namespace, Prefix, Wait, Log
	// Ref serves reference_baseline.py (warm) and runs it cold; Floor is
	// the bare-creation baseline (baseline.py), kept as the floor.
	Ref, Floor *Baseline
	// NeMo runs NeMo-RL's own RayVirtualCluster cold (nil: skipped, see
	// NewNeMoBaseline).
	NeMo    *Baseline
	Sizes   []int // bundles per cluster
	Layouts []Layout
	Reps    int
}

// ReferenceSample is one repetition of one layout and size.
type ReferenceSample struct {
	ProviderPair
	Warm, Cold RefCycle
	// ColdDelete is the reference's cold path for a delete: a fresh python
	// process that imports ray, connects, removes the groups (made just
	// before by the warm floor driver) and exits.
	ColdDelete BaselineTimes
	// EmptyJob is the job floor (see EmptyJob), measured next to the rest.
	EmptyJob        time.Duration
	Floor           BaselineTimes
	PlacementNodes  int
	ProviderBundles int
	// NeMo is NeMo-RL's own cold path on the same cluster shape (zero when
	// the NeMo-RL baseline is skipped).
	NeMo NeMoCycle
}

// ReferenceResult is every sample of one layout and size.
type ReferenceResult struct {
	Layout  Layout
	Bundles int
	Samples []ReferenceSample
}

// RunReference measures, interleaved and paired in one run, the provider's
// create and delete (driver.Run with the resource's Spec, as apply) against
// the reference's work in a warm driver and in a fresh process, with the
// bare-creation floor, for each layout and size.
func RunReference(ctx context.Context, cfg ReferenceConfig) ([]ReferenceResult, error) {
	a := cfg.Apply
	var results []ReferenceResult
	for _, l := range cfg.Layouts {
		for _, n := range cfg.Sizes {
			results = append(results, ReferenceResult{Layout: l, Bundles: n})
		}
	}
	var interp time.Duration // python start-up; measured below, then every run is split again
	for rep := 0; rep < cfg.Reps; rep++ {
		for i := range results {
			r := &results[i]
			s, err := retryBusy(a.logf, fmt.Sprintf("%s %d bundles rep %d", r.Layout, r.Bundles, rep+1), func(attempt int) (ReferenceSample, error) {
				return cfg.oneSample(ctx, r.Layout, r.Bundles, rep, attempt, interp)
			})
			if err != nil {
				return results, fmt.Errorf("%s %d bundles, repetition %d: %w", r.Layout, r.Bundles, rep+1, err)
			}
			r.Samples = append(r.Samples, s)
			a.logf("   %-8s %2d bundles rep %d: provider create %ss delete %ss | reference cold %ss (create %ss) cold delete %ss warm %ss | floor %ss, empty job %ss",
				r.Layout, r.Bundles, rep+1, Sec(s.Create.Total), Sec(s.Delete.Total), Sec(s.Cold.Wall), Sec(s.Cold.ColdCreate), Sec(s.ColdDelete.Wall),
				Sec(secs(s.Warm.Create+s.Warm.Remove)), Sec(secs(s.Floor.Ready)), Sec(s.EmptyJob))
		}
	}
	// Split every driver process's lifetime with the fresh processes'
	// python start-up measured in this run.
	var cold []time.Duration
	var pairs []*ProviderPair
	for i := range results {
		for j := range results[i].Samples {
			s := &results[i].Samples[j]
			cold = append(cold, s.Cold.ColdCreate-secs(s.Cold.Import)-secs(s.Cold.Init)-secs(s.Cold.Create), s.ColdDelete.Startup)
			pairs = append(pairs, &s.ProviderPair)
		}
	}
	resplitAll(Median(cold), pairs)
	return results, nil
}

func (cfg *ReferenceConfig) oneSample(ctx context.Context, layout Layout, bundles, rep, attempt int, interp time.Duration) (ReferenceSample, error) {
	a := cfg.Apply
	var s ReferenceSample
	name := fmt.Sprintf("%s-%s%02d-r%d-%d", a.Prefix, string(layout[0]), bundles, rep, attempt)
	spec := ReferenceSpec(name, bundles, layout)
	if err := WaitUntilPlaceable(ctx, a.Client.Client, spec, a.Wait, a.logf); err != nil {
		return s, err
	}
	groups := DriverSpec(contract.ActionCreate, a.Namespace, spec, ReadyTimeout).Groups
	busy := func(err error) error {
		if err != nil && (strings.Contains(err.Error(), "Timeout") || strings.Contains(err.Error(), "not ready")) {
			return fmt.Errorf("%w: %v", errBusy, err)
		}
		return err
	}
	provider := func() error {
		cr, dr, err := a.providerCycle(ctx, spec, interp)
		if err != nil {
			return err
		}
		nodes := map[string]bool{}
		for _, g := range cr.Result.Groups {
			for _, b := range g.Bundles {
				nodes[b.NodeID] = true
				s.ProviderBundles++
			}
		}
		s.PlacementNodes = len(nodes)
		s.Create, s.CreateRun, s.Delete, s.DeleteRun = cr.Phases, cr, dr.Phases, dr
		return nil
	}
	reference := func() error {
		var err error
		if s.Warm, err = cfg.Ref.ReferenceCycle(renamed(groups, name, name+"-ref"), true); err != nil {
			return busy(err)
		}
		if s.Cold, err = cfg.Ref.ReferenceCold(renamed(groups, name, name+"-refcold"), true); err != nil {
			return busy(err)
		}
		if cfg.NeMo != nil {
			if s.NeMo, err = cfg.NeMo.NeMoCold(name+"-nemo", spec.BundleCtPerNode, GPUsPerNode, layout == LayoutUnified, 0); err != nil {
				return busy(err)
			}
			if s.NeMo.Bundles != bundles {
				return fmt.Errorf("NeMo-RL baseline: %d addresses for %d bundles", s.NeMo.Bundles, bundles)
			}
		}
		if s.Floor, err = cfg.Floor.Cycle(renamed(groups, name, name+"-floor")); err != nil {
			return busy(err)
		}
		doomed := renamed(groups, name, name+"-refdel")
		names := groupNames(doomed)
		if _, err = cfg.Floor.Create(doomed); err != nil {
			_, _ = cfg.Floor.Remove(names)
			return busy(err)
		}
		if s.ColdDelete, err = cfg.Floor.ColdRemove(names); err != nil {
			_, _ = cfg.Floor.Remove(names)
			return err
		}
		s.EmptyJob, err = EmptyJob(ctx, a.Client.Client, name+"-emptyjob")
		return err
	}
	first, second := provider, reference
	if rep%2 == 1 { // alternate, so neither side always runs on a warmer cluster
		first, second = reference, provider
	}
	if err := first(); err != nil {
		return s, err
	}
	if err := second(); err != nil {
		return s, err
	}
	if s.ProviderBundles != bundles || s.Warm.Bundles != bundles || s.Cold.Bundles != bundles {
		return s, fmt.Errorf("bundles probed: provider %d, reference warm %d, cold %d; want %d",
			s.ProviderBundles, s.Warm.Bundles, s.Cold.Bundles, bundles)
	}
	return s, nil
}

// PrintReference prints the provider/reference ratios per layout and size,
// the reference's own phase split, and the provider's phase split (through
// PrintApply, whose "python" columns are then the bare-creation floor).
func PrintReference(out io.Writer, results []ReferenceResult) {
	fmt.Fprintln(out, "Provider = driver.Run with the resource's Spec (+ Create's live check), create then delete. Reference = the same groups with the "+
		"reference's own work (bench/reference_baseline.py): create + wait ready, one GPU id/NVLink domain/topo_rank task per bundle and the "+
		"topology sort, the master address, the address/port batch, then remove. cold create = a fresh python process from exec until the port "+
		"batch is done; cold delete = a fresh python process that imports ray, connects, removes the groups and exits (the reference's cold path "+
		"for a delete); cold teardown = the remove and exit of the cold create process, which had already connected; warm = a driver connected "+
		"once. empty job = a Ray job running `true`, submit until SUCCEEDED: what any driver job pays before its own work. floor = bare create+ready in the warm driver (no probes), the lower bound of any placement. Medians of the repetitions, seconds; "+
		"ratios are provider / reference.")
	fmt.Fprintln(out)
	t := NewTable(out, "layout", "bundles", "reps", "provider create", "ref cold create", "create / cold",
		"provider delete", "ref cold delete", "delete / cold", "ref cold teardown", "delete / teardown", "empty job",
		"provider create+delete", "ref cold process", "total / cold", "ref warm create", "create / warm", "floor")
	for _, r := range results {
		var pc, pd, pt, cc, cd, ct, cw, wc, fl, ej []time.Duration
		for _, s := range r.Samples {
			pc, pd, pt = append(pc, s.Create.Total), append(pd, s.Delete.Total), append(pt, s.Create.Total+s.Delete.Total)
			cc, cd, ct, cw = append(cc, s.Cold.ColdCreate), append(cd, s.ColdDelete.Wall), append(ct, s.Cold.Teardown), append(cw, s.Cold.Wall)
			wc, fl, ej = append(wc, secs(s.Warm.Create)), append(fl, secs(s.Floor.Ready)), append(ej, s.EmptyJob)
		}
		t.Row(string(r.Layout), fmt.Sprint(r.Bundles), fmt.Sprint(len(r.Samples)),
			Sec(Median(pc)), Sec(Median(cc)), Ratio(Median(pc), Median(cc)),
			Sec(Median(pd)), Sec(Median(cd)), Ratio(Median(pd), Median(cd)), Sec(Median(ct)), Ratio(Median(pd), Median(ct)), Sec(Median(ej)),
			Sec(Median(pt)), Sec(Median(cw)), Ratio(Median(pt), Median(cw)),
			Sec(Median(wc)), Ratio(Median(pc), Median(wc)), Sec(Median(fl)))
	}
	t.Flush()
	fmt.Fprintln(out)

	fmt.Fprintln(out, "Where the reference's time goes (warm driver / cold process, medians, seconds):")
	fmt.Fprintln(out)
	t = NewTable(out, "layout", "bundles", "nodes", "create+ready", "GPU/domain probes", "master", "port batch", "remove",
		"cold: python+import", "cold: ray.init", "cold: create..ports", "cold: teardown")
	for _, r := range results {
		var cr, gp, ms, pb, rm, im, in, cc, td []time.Duration
		nodes := 0
		for _, s := range r.Samples {
			cr, gp, ms = append(cr, secs(s.Warm.CreateReady)), append(gp, secs(s.Warm.GPUProbes)), append(ms, secs(s.Warm.Master))
			pb, rm = append(pb, secs(s.Warm.PortBatch)), append(rm, secs(s.Warm.Remove))
			im = append(im, s.Cold.ColdCreate-secs(s.Cold.Init)-secs(s.Cold.Create))
			in, cc, td = append(in, secs(s.Cold.Init)), append(cc, secs(s.Cold.Create)), append(td, s.Cold.Teardown)
			nodes = max(nodes, s.Warm.Nodes)
		}
		t.Row(string(r.Layout), fmt.Sprint(r.Bundles), fmt.Sprint(nodes), Sec(Median(cr)), Sec(Median(gp)), Sec(Median(ms)),
			Sec(Median(pb)), Sec(Median(rm)), Sec(Median(im)), Sec(Median(in)), Sec(Median(cc)), Sec(Median(td)))
	}
	t.Flush()
	fmt.Fprintln(out)

	for _, l := range []Layout{LayoutPerNode, LayoutUnified} {
		var ar []ApplyResult
		for _, r := range results {
			if r.Layout != l {
				continue
			}
			res := ApplyResult{Groups: r.Bundles}
			for _, s := range r.Samples {
				res.Samples = append(res.Samples, ApplySample{ProviderPair: s.ProviderPair, Warm: s.Floor})
			}
			ar = append(ar, res)
		}
		if len(ar) == 0 {
			continue
		}
		fmt.Fprintf(out, "#### Provider phases, %s layout (columns are bundles; \"python\" below = the floor)\n\n", l)
		PrintApply(out, ar)
	}
}
