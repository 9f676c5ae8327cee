package bench

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

//go:embed nemo_baseline.py
var nemoSource []byte

// NeMoSrcEnv names the NeMo-RL checkout the NeMo-RL baseline imports
// nemo_rl.distributed.virtual_cluster from; nothing of NeMo-RL is committed.
const NeMoSrcEnv = "NEMO_RL_SRC"

// NewNeMoBaseline is NeMo-RL's own RayVirtualCluster (nemo_baseline.py) run
// cold, from the checkout in $NEMO_RL_SRC. It returns nil and the reason when
// the variable is unset or the module does not import with python.
func NewNeMoBaseline(python, address, dir string) (*Baseline, string) {
	if os.Getenv(NeMoSrcEnv) == "" {
		return nil, NeMoSrcEnv + " is not set: point it at a NeMo-RL checkout (git clone https://github.com/NVIDIA-NeMo/RL) to measure NeMo-RL's own code"
	}
	b := &Baseline{Python: python, Address: address, Dir: dir, Script: nemoSource, ScriptName: "nemo_baseline.py"}
	line, _, _, err := b.runCold("check")
	if err != nil {
		return nil, err.Error()
	}
	var c struct {
		OK     bool   `json:"ok"`
		Error  string `json:"error"`
		Module string `json:"module"`
	}
	if err := json.Unmarshal([]byte(line), &c); err != nil || !c.OK {
		return nil, fmt.Sprintf("NeMo-RL baseline skipped: %s", c.Error)
	}
	return b, ""
}

// NeMoCycle is one cold run of NeMo-RL's RayVirtualCluster: RefCycle's
// fields (create_s = constructor .. port batch, master_s, port_batch_s,
// remove_s = shutdown) plus the module import and _init_placement_groups.
type NeMoCycle struct {
	RefCycle
	NeMoImport float64 `json:"nemo_import_s"`
	InitGroups float64 `json:"init_groups_s"`
	// SegmentTopology is prepare_segment_topology (0 without a segment
	// size), counted in InitGroups.
	SegmentTopology float64 `json:"segment_topology_s"`
}

// NeMoCold runs NeMo-RL's cold path once in a fresh python process: import,
// RayVirtualCluster(bundle_ct_per_node_list=counts, PACK), the groups (one
// unified group or one per node), master address, the address/port batch of
// every bundle, shutdown, exit. A segment above 0 is NeMo-RL's segment_size,
// with the node choice its algorithms make for it (prepare_segment_topology).
func (b *Baseline) NeMoCold(name string, counts []int, gpusPerNode int, unified bool, segment int) (NeMoCycle, error) {
	var c NeMoCycle
	if b == nil {
		return c, errors.New("no NeMo-RL baseline")
	}
	raw, _ := json.Marshal(counts)
	args := []string{name, string(raw), fmt.Sprint(gpusPerNode), fmt.Sprint(unified)}
	if segment > 0 {
		args = append(args, fmt.Sprint(segment))
	}
	line, start, end, err := b.runCold("cold", args...)
	if err != nil {
		return c, err
	}
	if err := decodeAnswer("NeMo-RL baseline", line, &c); err != nil {
		return c, err
	}
	first := time.Unix(0, int64(c.TFirst*1e9))
	c.Wall = end.Sub(start)
	c.ColdCreate = first.Sub(start) + secs(c.Import) + secs(c.NeMoImport) + secs(c.Init) + secs(c.Create)
	c.Teardown = c.Wall - c.ColdCreate
	return c, nil
}

// RatioStats is the median and range of per-pair ratios a/b.
func RatioStats(a, b []time.Duration) string {
	var rs []time.Duration // ratios scaled by 1000, to reuse Median
	for i := range a {
		if i < len(b) && b[i] > 0 {
			rs = append(rs, time.Duration(float64(a[i])/float64(b[i])*1000))
		}
	}
	if len(rs) == 0 {
		return "-"
	}
	lo, hi := MinMax(rs)
	return fmt.Sprintf("%.2f (%.2f-%.2f)", float64(Median(rs))/1000, float64(lo)/1000, float64(hi)/1000)
}

// NeMoFullSize is the largest row the bench measures; the local cluster has
// 20 GPUs, so it is measured by the gpu64 part on its own 64-GPU cluster.
const NeMoFullSize = 64

// PrintNeMo prints, per layout and size, the provider's create+delete
// (driver.Run, as in the table above) against the whole cold process of
// reference_baseline.py and of NeMo-RL's own RayVirtualCluster, paired per
// repetition, and where NeMo-RL's cold path spends its time. skipped is why
// the NeMo-RL baseline did not run ("" when it did).
func PrintNeMo(out io.Writer, results []ReferenceResult, skipped string) {
	if skipped != "" {
		fmt.Fprintf(out, "NeMo-RL's own code: not measured (%s).\n\n", skipped)
	}
	fmt.Fprintln(out, "Provider create+delete (driver.Run) against the whole cold process of reference_baseline.py and of NeMo-RL's own "+
		"RayVirtualCluster (bench/nemo_baseline.py with $"+NeMoSrcEnv+": import, RayVirtualCluster(...), _init_placement_groups, "+
		"get_master_address_and_port, get_available_addresses_and_ports_batch over every bundle, shutdown, exit), paired and interleaved "+
		"in one run. Ratios: median of the per-repetition ratios (min-max).")
	fmt.Fprintln(out)
	t := NewTable(out, "layout", "bundles", "reps", "provider create+delete", "reference_baseline cold", "provider / reference_baseline",
		"NeMo-RL cold", "provider / NeMo-RL", "NeMo: python+import ray", "NeMo: import nemo_rl", "NeMo: ray.init",
		"NeMo: _init_placement_groups", "NeMo: master", "NeMo: port batch", "NeMo: shutdown+exit")
	seen := map[Layout]bool{}
	for _, r := range results {
		seen[r.Layout] = true
		var pt, rc, nc, py, ni, in, ig, ms, pb, td []time.Duration
		for _, s := range r.Samples {
			pt, rc = append(pt, s.Create.Total+s.Delete.Total), append(rc, s.Cold.Wall)
			if s.NeMo.OK {
				n := s.NeMo
				nc = append(nc, n.Wall)
				py = append(py, n.ColdCreate-secs(n.NeMoImport)-secs(n.Init)-secs(n.Create))
				ni, in, ig = append(ni, secs(n.NeMoImport)), append(in, secs(n.Init)), append(ig, secs(n.InitGroups))
				ms, pb, td = append(ms, secs(n.Master)), append(pb, secs(n.PortBatch)), append(td, n.Teardown)
			}
		}
		nemo := func(ds []time.Duration) string {
			if len(ds) == 0 {
				return "-"
			}
			return Sec(Median(ds))
		}
		nr := "-"
		if len(nc) == len(pt) {
			nr = RatioStats(pt, nc)
		}
		t.Row(string(r.Layout), fmt.Sprint(r.Bundles), fmt.Sprint(len(r.Samples)), Sec(Median(pt)), Sec(Median(rc)), RatioStats(pt, rc),
			nemo(nc), nr, nemo(py), nemo(ni), nemo(in), nemo(ig), nemo(ms), nemo(pb), nemo(td))
	}
	for _, l := range []Layout{LayoutPerNode, LayoutUnified} {
		if !seen[l] {
			continue
		}
		measured := false
		for _, r := range results {
			measured = measured || (r.Layout == l && r.Bundles >= NeMoFullSize)
		}
		if !measured {
			t.Row(string(l), fmt.Sprint(NeMoFullSize), "0", "not measured here: 20 GPUs (BENCH_PART=gpu64 has 64)", "", "", "", "", "", "", "", "", "", "", "")
		}
	}
	t.Flush()
	fmt.Fprintln(out)
}
