package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
)

// Part 6's contention rows: N states, each one 1-GPU
// select_nodes cluster, apply at the same moment on the race cluster, which
// has room for all of them. "apart": each state may choose only its own
// node (exclude_node_ids), so no two ever want the same GPUs; "racing":
// every state chooses among all nodes, so they collide on the first free
// ones and the losers choose again; "mixed" (issue 53): the even states
// choose among all nodes, the odd ones are placed by Ray (no select_nodes)
// on the same nodes. All start at the same moment on the same machine, so
// the ratio of a contending row's p95 apply time to the apart row's is what
// contention costs, not what a loaded machine costs.

// ContentionSizes are the N of the rows (raybench's -contention).
const ContentionSizes = "6,12"

// The rows of each N, in the order they run.
const (
	ContentionApart  = "apart"
	ContentionRacing = "racing"
	ContentionMixed  = "mixed"
)

// ContentionModes are the rows of each N: the apart row first, the baseline
// of the others.
var ContentionModes = []string{ContentionApart, ContentionRacing, ContentionMixed}

// ContentionRow is one set of N applies started together.
type ContentionRow struct {
	N      int
	Mode   string          // ContentionApart, ContentionRacing or ContentionMixed
	Times  []time.Duration // the successful applies'
	Failed []string        // first error line of each failed apply
	Left   RaceLeft        // what Ray holds after every state was destroyed
	// Lock is the longest any driver run of the applies held the
	// reservation lock, and waited for it.
	Lock LockTimes
	// Rechoices counts the applies' lost reservations ("lost the race"):
	// each is one more driver job, where a racing row's time goes.
	Rechoices int
}

// contentionCluster is state i's 1-GPU cluster in mode: select_nodes,
// restricted by exclude (an exclude_node_ids expression or ""), or, for the
// odd states of the mixed row, placed by Ray.
func contentionCluster(mode string, i int, name, exclude string, ports int) acctest.VirtualCluster {
	c := acctest.VirtualCluster{Name: name, Counts: []int{1}, GPUsPerNode: 1, SelectNodes: true, ExcludeNodeIDs: exclude,
		CapacityCheck: raceCapacityFree, ReadyTimeout: "60s", PortLow: ports, PortHigh: ports + 10}
	if mode == ContentionMixed && i%2 == 1 {
		c.SelectNodes, c.ExcludeNodeIDs = false, ""
	}
	return c
}

// contentionHCL declares state i's cluster of a row in mode.
func contentionHCL(address, mode string, i int, name, exclude string, ports int) string {
	return ProviderHCL(address) + contentionCluster(mode, i, name, exclude, ports).String()
}

// gpuNodeIDs lists the alive nodes with GPUs, sorted.
func gpuNodeIDs(ctx context.Context, c *rayclient.Client) ([]string, error) {
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range nodes {
		if n.ResourcesTotal["GPU"] > 0 {
			ids = append(ids, n.NodeID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// RunContention runs the rows of n states, the apart row first.
func RunContention(ctx context.Context, cfg RaceConfig, n int) ([]ContentionRow, error) {
	ws, _, err := NewWorkspace(ctx, cfg.CLI, cfg.Dir)
	if err != nil {
		return nil, err
	}
	ids, err := gpuNodeIDs(ctx, cfg.Client)
	if err != nil || len(ids) == 0 {
		return nil, fmt.Errorf("contention: no GPU node (%v)", err)
	}
	var rows []ContentionRow
	for _, mode := range ContentionModes {
		row := ContentionRow{N: n, Mode: mode}
		dirs := make([]string, n)
		for i := range dirs {
			exclude := ""
			if mode == ContentionApart { // only node i mod len(ids): the row fits when n <= 4 x len(ids)
				var others []string
				for j, id := range ids {
					if j != i%len(ids) {
						others = append(others, fmt.Sprintf("%q", id))
					}
				}
				exclude = "[" + strings.Join(others, ", ") + "]"
			}
			name := fmt.Sprintf("%s-cont-%d-%d", cfg.Prefix, n, i)
			if dirs[i], err = ws.Dir(fmt.Sprintf("contention-%d", i), map[string]string{
				"main.tf": contentionHCL(cfg.Address, mode, i, name, exclude, 3000+20*i)}); err != nil {
				return rows, err
			}
		}
		runs := allAtOnce(ctx, ws, dirs, "apply", "-auto-approve", "-no-color")
		for _, dir := range dirs {
			raw, _ := os.ReadFile(filepath.Join(dir, contentionLog))
			row.Lock = row.Lock.longest(ParseLockTimes(string(raw)))
			row.Rechoices += strings.Count(string(raw), raceLostLog)
		}
		for _, r := range runs {
			if r.Err == nil && r.Code == 0 {
				row.Times = append(row.Times, r.Wall)
			} else {
				row.Failed = append(row.Failed, firstError(r.Out))
			}
		}
		for i, r := range allAtOnce(context.WithoutCancel(ctx), ws, dirs, "destroy", "-auto-approve", "-no-color") {
			if r.Err != nil || r.Code != 0 {
				row.Failed = append(row.Failed, fmt.Sprintf("destroy %d: %s", i, firstError(r.Out)))
			}
		}
		row.Left = raceLeft(context.WithoutCancel(ctx), cfg)
		logTo(cfg.Log)("   race: %d states %s: %d / %d ok, p95 %ss, lock hold %ss, %d re-choices; left %s", n, mode, len(row.Times), n,
			Sec(Percentile(row.Times, 95)), Sec(row.Lock.Held), row.Rechoices, row.Left.cell())
		rows = append(rows, row)
	}
	return rows, ctx.Err()
}

// allAtOnce runs the CLI with args in every directory at the same moment.
func allAtOnce(ctx context.Context, ws *Workspace, dirs []string, args ...string) []CLIRun {
	out := make([]CLIRun, len(dirs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// The provider's INFO log carries the driver's lock holds (lockHeld).
			out[i] = ws.RunEnv(ctx, dir, []string{"TF_LOG=", "TF_LOG_PROVIDER=INFO", "TF_LOG_PATH=" + filepath.Join(dir, contentionLog)}, args...)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// contentionLog is the provider log of a directory's last command.
const contentionLog = "provider.log"

// longest is the longer hold and wait of lt and o.
func (lt LockTimes) longest(o LockTimes) LockTimes {
	return LockTimes{Held: max(lt.Held, o.Held), Wait: max(lt.Wait, o.Wait), WaitSeen: lt.WaitSeen || o.WaitSeen}
}

// Percentile is the p-th percentile (0-100, nearest rank) of ds; 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// PrintContention prints the rows, each contending row's p95 against the
// apart row's of the same N (target <= ContentionTarget).
func PrintContention(out io.Writer, rows []ContentionRow) {
	fmt.Fprintf(out, "N states (separate working directories, real CLI), each one 1-GPU cluster, apply at the same moment on a "+
		"cluster with room for all. apart: each state `select_nodes` among its own node only, so none collide; racing: all "+
		"`select_nodes` among every node and collide on the first free GPUs; mixed: half `select_nodes` among every node, half "+
		"placed by Ray (no `select_nodes`) on the same nodes. p95 ratio = the row's p95 / the apart row's p95 of the same N "+
		"(target <= %.1fx, every apply ok, nothing left). Longest lock hold, wait = the longest any driver run of the row's applies "+
		"held the reservations' lock and waited for it, seconds (- where the driver reports no wait); re-choices = reservations "+
		"the row's applies lost to another state and chose again (one more driver job each). "+
		"Left in Ray after every state was destroyed: live groups, cluster records, reservations, driver jobs still running.\n\n",
		ContentionTarget)
	t := NewTable(out, "N", "states", "ok / run", "p50 s", "p95 s", "p95 ratio", fmt.Sprintf("met (<= %.1fx)", ContentionTarget), "longest lock hold, wait s", "re-choices",
		"left: groups, records, reservations, jobs", "errors")
	apart := map[int]time.Duration{}
	for _, r := range rows {
		ratio, verdict := "", ""
		p95 := Percentile(r.Times, 95)
		if r.Mode == ContentionApart {
			apart[r.N] = p95
		} else if base := apart[r.N]; base > 0 {
			x := p95.Seconds() / base.Seconds()
			ratio, verdict = fmt.Sprintf("%.2fx", x), ContentionVerdict(x, len(r.Times), r.N, r.Left.Clean())
		}
		t.Row(fmt.Sprint(r.N), r.Mode, fmt.Sprintf("%d / %d", len(r.Times), r.N), fmt.Sprintf("%.1f", Median(r.Times).Seconds()),
			fmt.Sprintf("%.1f", p95.Seconds()), ratio, verdict, lockCell(r.Lock.Held, r.Lock.Wait, r.Lock.WaitSeen), fmt.Sprint(r.Rechoices), r.Left.cell(),
			strings.Join(r.Failed, "; "))
	}
	t.Flush()
	fmt.Fprintln(out)
}
