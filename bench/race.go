package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/acctest"
	"github.com/ray-infra/terraform-provider-ray/internal/liveview"
	"github.com/ray-infra/terraform-provider-ray/internal/placement"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
	"github.com/ray-infra/terraform-provider-ray/internal/raystate"
	"github.com/ray-infra/terraform-provider-ray/internal/record"
)

// Part 6: a bounded soak of teams applying at the same
// moment. Several working directories (separate states), each holding one
// select_nodes cluster that wants a whole 4-GPU node, loop apply -> hold ->
// destroy with the real CLI against a cluster with fewer GPU nodes than
// states, for a fixed time. Every apply's output and provider log (INFO) is
// read for collisions; at the end every state is destroyed and Ray itself
// is read for what is left: groups, cluster records, node claims, jobs.

// The provider's messages the soak counts (internal/placement/race.go,
// internal/clusterspec/labels.go).
const (
	raceLostSummary    = placement.SummaryNodesTaken
	racePlanSummary    = "Cannot select nodes"
	raceLostLog        = "lost the race for nodes: choosing again"
	raceNoneLeftLog    = "no nodes left after a lost race"
	raceQueueLog       = "queueing for nodes other clusters hold"
	raceCapacityFree   = "free"
	raceCapacityTotal  = "total"
	raceBackoffOnError = 2 * time.Second
	raceCLITimeout     = 5 * time.Minute
)

var (
	raceSinceRE = regexp.MustCompile(`seconds_since_collision=([0-9.eE+-]+)`)
	// The driver's progress line at each drop of the reservation lock, as the provider logs it.
	raceLockRE = regexp.MustCompile(`lock_held_seconds=([0-9.eE+-]+)`)
	// How long a driver run waited for the lock: its own field (issue 53),
	// else the time between the locking and locked progress lines of a run.
	raceLockWaitRE = regexp.MustCompile(`lock_wait_seconds=([0-9.eE+-]+)`)
	racePhaseRE    = regexp.MustCompile(`\bphase="?(locking|locked)"?`)
	raceElapsedRE  = regexp.MustCompile(`\belapsed="?([0-9.eE+-]+)`)
	raceRunIDRE    = regexp.MustCompile(`\brun_id="?([^" ]+)`)
)

// seconds parses the first group of re in l as seconds.
func seconds(re *regexp.Regexp, l string) (time.Duration, bool) {
	m := re.FindStringSubmatch(l)
	if m == nil {
		return 0, false
	}
	s, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}

// LockTimes are the longest hold of the reservation lock and the longest
// wait for it that a provider log shows; WaitSeen says the log reported
// waits at all (a driver without the field or the locking/locked lines
// reports none).
type LockTimes struct {
	Held, Wait time.Duration
	WaitSeen   bool
}

// ParseLockTimes reads the lock's progress lines of a provider log.
func ParseLockTimes(log string) LockTimes {
	var lt LockTimes
	locking := map[string]time.Duration{} // run -> elapsed at its locking line
	for _, l := range strings.Split(log, "\n") {
		if d, ok := seconds(raceLockRE, l); ok {
			lt.Held = max(lt.Held, d)
		}
		if d, ok := seconds(raceLockWaitRE, l); ok {
			lt.Wait, lt.WaitSeen = max(lt.Wait, d), true
			continue
		}
		phase := racePhaseRE.FindStringSubmatch(l)
		at, ok := seconds(raceElapsedRE, l)
		if phase == nil || !ok {
			continue
		}
		run := ""
		if m := raceRunIDRE.FindStringSubmatch(l); m != nil {
			run = m[1]
		}
		if phase[1] == "locking" {
			locking[run] = at
		} else if since, ok := locking[run]; ok {
			lt.Wait, lt.WaitSeen = max(lt.Wait, at-since), true
			delete(locking, run)
		}
	}
	return lt
}

// RaceConfig configures RunRace.
type RaceConfig struct {
	CLI     string // terraform or tofu
	Dir     string // workspace root (provider build, one directory per state)
	Address string // Ray dashboard of the soak's own cluster
	GCS     string // its GCS address, for reading the KV with plain ray calls
	Python  string // python with ray installed
	Client  *rayclient.Client
	States  int
	// Duration bounds the loops: no apply starts after it (the last
	// apply -> hold -> destroy runs to its end); MaxApplies bounds each
	// state's applies.
	Duration   time.Duration
	MaxApplies int
	Hold       time.Duration // how long a state keeps its cluster
	// ReadyTimeout is the ready_timeout of the capacity_check = "total"
	// states: how long they queue for a node.
	ReadyTimeout time.Duration
	Prefix       string
	Log          io.Writer
}

// RaceApply is one apply's outcome, read from the CLI's output and the
// provider's log.
type RaceApply struct {
	Mode string
	OK   bool
	// Outcome: "ok", "lost" (Other clusters took the nodes), "plan"
	// (Cannot select nodes, at plan) or "other".
	Outcome string
	// Rechoices counts the provider's "lost the race" entries: each is a
	// claim lost and a new choice.
	Rechoices int
	Queued    bool
	// SinceCollision is the provider's seconds_since_collision of a failure
	// after a lost race (HasSince when logged).
	SinceCollision time.Duration
	HasSince       bool
	Wall           time.Duration
	Error          string // the first error line of an "other" failure
	// LockHeld is the longest the apply's driver runs held the reservation
	// lock, LockWait the longest they waited for it (LockWaitSeen: reported).
	LockHeld, LockWait time.Duration
	LockWaitSeen       bool
}

// Collided reports whether the apply met another state: it lost a claim,
// or failed because others held the nodes (at apply or at plan).
func (a RaceApply) Collided() bool {
	return a.Rechoices > 0 || a.Outcome == "lost" || a.Outcome == "plan"
}

// ParseRaceApply reads an apply's exit code, output and provider log.
func ParseRaceApply(mode string, code int, out, log string) RaceApply {
	a := RaceApply{Mode: mode, OK: code == 0, Outcome: "ok"}
	a.Rechoices = strings.Count(log, raceLostLog)
	a.Queued = strings.Contains(log, raceQueueLog)
	lt := ParseLockTimes(log)
	a.LockHeld, a.LockWait, a.LockWaitSeen = lt.Held, lt.Wait, lt.WaitSeen
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, raceNoneLeftLog) {
			continue
		}
		if m := raceSinceRE.FindStringSubmatch(l); m != nil {
			if s, err := strconv.ParseFloat(m[1], 64); err == nil {
				a.SinceCollision, a.HasSince = time.Duration(s*float64(time.Second)), true
			}
		}
	}
	if a.OK {
		return a
	}
	flat := strings.Join(strings.Fields(out), " ")
	switch {
	case strings.Contains(flat, raceLostSummary):
		a.Outcome = "lost"
	case strings.Contains(flat, racePlanSummary):
		a.Outcome = "plan"
	default:
		a.Outcome = "other"
		a.Error = firstError(out)
	}
	return a
}

// firstError is the CLI's first error: its summary and the start of its
// detail (without the "with"/"on" lines naming the resource), on one line;
// else the output's last line.
func firstError(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(strings.TrimLeft(l, "│╷╵ "))
		if !strings.HasPrefix(l, "Error:") {
			continue
		}
		var detail []string
		for _, d := range lines[i+1:] {
			d = strings.TrimSpace(strings.TrimLeft(d, "│╷╵ "))
			if strings.HasPrefix(d, "Error:") {
				break
			}
			if d == "" || strings.HasPrefix(d, "with ") || strings.HasPrefix(d, "on ") || raceSourceLineRE.MatchString(d) {
				continue
			}
			detail = append(detail, d)
		}
		msg := strings.Join(append([]string{l}, detail...), " ")
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return msg
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// raceSourceLineRE matches the CLI's quoted configuration line ("13: resource ...").
var raceSourceLineRE = regexp.MustCompile(`^[0-9]+: `)

// RaceLeft is what Ray holds after every state was destroyed: live
// placement groups, cluster records (KV vc/ keys), node claims (KV claim/
// keys), driver jobs still running and driver job records Ray still lists
// (the provider's, raytf_ prefix). Err says a count could not be read.
type RaceLeft struct {
	Groups, Records, Claims, ActiveJobs, JobRecords int
	Keys                                            []string
	Err                                             error
}

// Clean reports whether Ray holds nothing the soak made (job records of
// finished jobs aside: see the README).
func (l RaceLeft) Clean() bool {
	return l.Err == nil && l.Groups == 0 && l.Records == 0 && l.Claims == 0 && l.ActiveJobs == 0
}

// cell is l in a table's "left: groups, records, reservations, jobs" column.
func (l RaceLeft) cell() string {
	if l.Err != nil {
		return "? (" + l.Err.Error() + ")"
	}
	return fmt.Sprintf("%d, %d, %d, %d", l.Groups, l.Records, l.Claims, l.ActiveJobs)
}

// RaceResult is the soak's row.
type RaceResult struct {
	States, Nodes        int
	Duration, Wall       time.Duration
	Applies              []RaceApply
	Destroys, DestroysOK int
	Left                 RaceLeft
}

// raceHCL declares one select_nodes cluster wanting one whole 4-GPU node.
func raceHCL(address, name, mode string, readyTimeout time.Duration, ports int) string {
	return ProviderHCL(address) + acctest.NodeClusterHCL(name, mode, fmt.Sprintf("%ds", int(readyTimeout.Seconds())), ports, ports+10)
}

// raceMode alternates the states between failing fast and queueing.
func raceMode(i int) string {
	if i%2 == 0 {
		return raceCapacityFree
	}
	return raceCapacityTotal
}

// raceState is one working directory and its loop.
type raceState struct {
	dir, mode string
}

// RunRace runs the soak and then reads what is left in Ray.
func RunRace(ctx context.Context, cfg RaceConfig) (*RaceResult, error) {
	logf := logTo(cfg.Log)
	ws, _, err := NewWorkspace(ctx, cfg.CLI, cfg.Dir)
	if err != nil {
		return nil, err
	}
	res := &RaceResult{States: cfg.States, Duration: cfg.Duration, Nodes: gpuNodes(ctx, cfg.Client)}
	states := make([]raceState, cfg.States)
	for i := range states {
		mode := raceMode(i)
		timeout := cfg.ReadyTimeout
		if mode == raceCapacityFree {
			timeout = time.Minute
		}
		name := fmt.Sprintf("%s-race-%d", cfg.Prefix, i)
		dir, err := ws.Dir(fmt.Sprintf("race-%d", i), map[string]string{
			"main.tf": raceHCL(cfg.Address, name, mode, timeout, 3000+20*i)})
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			return nil, err
		}
		states[i] = raceState{dir: dir, mode: mode}
	}
	var mu sync.Mutex
	record := func(a *RaceApply, destroyed, destroyOK bool) {
		mu.Lock()
		defer mu.Unlock()
		if a != nil {
			res.Applies = append(res.Applies, *a)
		}
		if destroyed {
			res.Destroys++
			if destroyOK {
				res.DestroysOK++
			}
		}
	}
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i, st := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.loop(ctx, ws, cfg, i, deadline, record, logf)
		}()
	}
	wg.Wait()
	res.Wall = time.Since(start)
	logf("   race: loops ended after %s; destroying every state", res.Wall.Round(time.Second))
	for _, st := range states { // sequential: most states are empty by now
		r := ws.RunEnv(context.WithoutCancel(ctx), st.dir, nil, "destroy", "-auto-approve", "-no-color")
		ok := r.Err == nil && r.Code == 0
		record(nil, true, ok)
		if !ok {
			logf("!! race: final destroy in %s failed:\n%s", st.dir, tail(r.Out, 20))
		}
	}
	res.Left = raceLeft(context.WithoutCancel(ctx), cfg)
	return res, ctx.Err()
}

// loop applies, holds and destroys until the deadline or MaxApplies.
func (st raceState) loop(ctx context.Context, ws *Workspace, cfg RaceConfig, i int, deadline time.Time,
	record func(*RaceApply, bool, bool), logf func(string, ...any)) {
	for n := 0; n < cfg.MaxApplies && time.Now().Before(deadline) && ctx.Err() == nil; n++ {
		logPath := filepath.Join(st.dir, "logs", fmt.Sprintf("apply-%03d.log", n))
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), raceCLITimeout)
		r := ws.RunEnv(cctx, st.dir, []string{"TF_LOG=", "TF_LOG_PROVIDER=INFO", "TF_LOG_PATH=" + logPath},
			"apply", "-auto-approve", "-no-color")
		cancel()
		provLog, _ := os.ReadFile(logPath)
		code := r.Code
		if r.Err != nil {
			code = -1
		}
		a := ParseRaceApply(st.mode, code, r.Out, string(provLog))
		a.Wall = r.Wall
		if a.Outcome == "other" {
			_ = os.WriteFile(filepath.Join(st.dir, "logs", fmt.Sprintf("apply-%03d.out", n)), []byte(r.Out), 0o644)
		}
		record(&a, false, false)
		logf("   race: state %d (%s) apply %d: %s in %s, %d re-choices%s", i, st.mode, n+1, a.Outcome,
			Sec(a.Wall), a.Rechoices, map[bool]string{true: ", queued", false: ""}[a.Queued])
		if !a.OK {
			if !pause(ctx, raceBackoffOnError) {
				return
			}
			continue
		}
		pause(ctx, cfg.Hold) // a cut-short hold still destroys
		cctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), raceCLITimeout)
		d := ws.RunEnv(cctx, st.dir, nil, "destroy", "-auto-approve", "-no-color")
		cancel()
		ok := d.Err == nil && d.Code == 0
		record(nil, true, ok)
		if !ok {
			logf("!! race: state %d destroy failed:\n%s", i, tail(d.Out, 20))
		}
	}
}

// pause waits d unless ctx ends first (then false).
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// gpuNodes counts the alive nodes with GPUs.
func gpuNodes(ctx context.Context, c *rayclient.Client) int {
	nodes, err := c.ListNodes(ctx, rayclient.ListOptions{Filters: []rayclient.Filter{rayclient.Eq("state", raystate.NodeStateAlive)}})
	if err != nil {
		return 0
	}
	n := 0
	for _, node := range nodes {
		if node.ResourcesTotal["GPU"] > 0 {
			n++
		}
	}
	return n
}

// raceKVScript lists the provider's KV keys under each prefix with plain
// ray calls (not the provider's driver), as internal/acctest/record.go does.
const raceKVScript = `import json, sys
import ray
from ray.experimental import internal_kv
spec = json.loads(sys.argv[1])
ray.init(address=spec["address"], log_to_driver=False)
out = {}
for p in spec["prefixes"]:
    out[p] = sorted(k.decode() for k in (internal_kv._internal_kv_list(p, namespace=spec["kv_namespace"]) or []))
print(json.dumps(out))
`

// raceKVKeys lists the keys of the provider's KV namespace under each prefix.
func raceKVKeys(ctx context.Context, python, gcs string, prefixes ...string) (map[string][]string, error) {
	in, err := json.Marshal(map[string]any{"address": gcs, "kv_namespace": record.KVNamespace, "prefixes": prefixes})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", raceKVScript, string(in))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RAY_ADDRESS=") { // ray.init gets the GCS address explicitly
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("listing KV keys: %v\n%s", err, tail(stderr.String(), 10))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	out := map[string][]string{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		return nil, fmt.Errorf("listing KV keys: %v\n%s", err, stdout.String())
	}
	return out, nil
}

// raceLeft waits (up to a minute) for the provider's jobs to end, then
// reads what Ray still holds.
func raceLeft(ctx context.Context, cfg RaceConfig) RaceLeft {
	var left RaceLeft
	for deadline := time.Now().Add(time.Minute); ; {
		jobs, err := cfg.Client.ListJobs(ctx)
		if err != nil {
			left.Err = err
			return left
		}
		left.ActiveJobs, left.JobRecords = 0, 0
		for _, j := range jobs {
			if strings.HasPrefix(j.SubmissionID, "raytf_") {
				left.JobRecords++
				if !j.IsTerminal() {
					left.ActiveJobs++
				}
			}
		}
		if left.ActiveJobs == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	groups, err := liveview.ListLiveGroups(ctx, cfg.Client)
	if err != nil {
		left.Err = err
		return left
	}
	left.Groups = len(groups)
	for _, g := range groups {
		left.Keys = append(left.Keys, "group "+g.Name)
	}
	recordPrefix, claimPrefix := record.RecordKey("", ""), record.ReservationPrefix
	recordPrefix = recordPrefix[:strings.IndexByte(recordPrefix, '/')+1] // "vc/": every namespace
	keys, err := raceKVKeys(ctx, cfg.Python, cfg.GCS, recordPrefix, claimPrefix)
	if err != nil {
		left.Err = err
		return left
	}
	left.Records, left.Claims = len(keys[recordPrefix]), len(keys[claimPrefix])
	left.Keys = append(append(left.Keys, keys[recordPrefix]...), keys[claimPrefix]...)
	return left
}

// raceStats are the row's counts.
type raceStats struct {
	applies, ok, collisions, rechoices, queued, wonAfter int
	lostFree, lostTotal, plan, other                     int
	sinceFree, sinceTotal                                []time.Duration
	lockHeld, lockWait                                   time.Duration // the longest hold of, and wait for, the reservation lock
	lockWaitSeen                                         bool
	errors                                               map[string]int
}

func (r *RaceResult) stats() raceStats {
	s := raceStats{errors: map[string]int{}}
	for _, a := range r.Applies {
		s.applies++
		s.rechoices += a.Rechoices
		s.lockHeld, s.lockWait = max(s.lockHeld, a.LockHeld), max(s.lockWait, a.LockWait)
		s.lockWaitSeen = s.lockWaitSeen || a.LockWaitSeen
		if a.Queued {
			s.queued++
		}
		if a.OK {
			s.ok++
		}
		if a.Collided() {
			s.collisions++
			if a.OK {
				s.wonAfter++
			}
		}
		switch a.Outcome {
		case "lost":
			if a.Mode == raceCapacityTotal {
				s.lostTotal++
			} else {
				s.lostFree++
			}
		case "plan":
			s.plan++
		case "other":
			s.other++
			s.errors[a.Error]++
		}
		if a.HasSince && !a.OK {
			if a.Mode == raceCapacityTotal {
				s.sinceTotal = append(s.sinceTotal, a.SinceCollision)
			} else {
				s.sinceFree = append(s.sinceFree, a.SinceCollision)
			}
		}
	}
	return s
}

// medianMax formats "median, max" in seconds, or "-" without samples.
func medianMax(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	_, hi := MinMax(ds)
	return fmt.Sprintf("%.1f, %.1f", Median(ds).Seconds(), hi.Seconds())
}

// PrintRace prints the soak's row and, below it, what an "other" failure
// said and which keys were left.
func PrintRace(out io.Writer, r *RaceResult, readyTimeout time.Duration) {
	if r == nil {
		return
	}
	s := r.stats()
	fmt.Fprintf(out, "%d states (separate working directories, real CLI), each one `select_nodes` cluster of one whole 4-GPU node, "+
		"on %d GPU nodes, looping apply -> hold -> destroy for %s (loops ended after %s); even states capacity_check = \"free\", "+
		"odd \"total\" (ready_timeout %s). Collisions = applies that lost a claim (provider log) or failed because others held "+
		"the nodes; collision -> failure = the provider's seconds_since_collision of the applies that failed, median and max, "+
		"seconds. Longest lock hold, wait = the longest any driver run held the reservations' lock, and waited for it (its progress lines in the provider log; - where the driver reports no wait), seconds. "+
		"Left in Ray after every state was destroyed: live groups, cluster records (KV vc/), reservations (KV reservation/), "+
		"driver jobs still running.\n\n",
		r.States, r.Nodes, r.Duration.Round(time.Second), r.Wall.Round(time.Second), readyTimeout)
	t := NewTable(out, "states", "GPU nodes", "seconds", "applies (ok / run)", "collisions", "re-choices", "won after collision",
		"queued", "failed: free, total, at plan", "collision -> failure, free", "collision -> failure, total", "longest lock hold, wait", "other errors",
		"destroys (ok / run)", "left: groups, records, reservations, jobs", "job records left")
	t.Row(fmt.Sprint(r.States), fmt.Sprint(r.Nodes), fmt.Sprint(int(r.Duration.Seconds())),
		fmt.Sprintf("%d / %d", s.ok, s.applies), fmt.Sprint(s.collisions), fmt.Sprint(s.rechoices), fmt.Sprint(s.wonAfter),
		fmt.Sprint(s.queued), fmt.Sprintf("%d, %d, %d", s.lostFree, s.lostTotal, s.plan),
		medianMax(s.sinceFree), medianMax(s.sinceTotal), lockCell(s.lockHeld, s.lockWait, s.lockWaitSeen), fmt.Sprint(s.other),
		fmt.Sprintf("%d / %d", r.DestroysOK, r.Destroys), r.Left.cell(), fmt.Sprint(r.Left.JobRecords))
	t.Flush()
	fmt.Fprintln(out)
	if len(s.errors) > 0 {
		msgs := make([]string, 0, len(s.errors))
		for m, n := range s.errors {
			msgs = append(msgs, fmt.Sprintf("%dx %s", n, m))
		}
		sort.Strings(msgs)
		fmt.Fprintf(out, "Other errors: %s\n\n", strings.Join(msgs, "; "))
	}
	if len(r.Left.Keys) > 0 {
		fmt.Fprintf(out, "Left in Ray: %s\n\n", strings.Join(r.Left.Keys, ", "))
	}
}

// lockCell is "hold, wait" in seconds; the wait is "-" when no driver run
// reported one.
func lockCell(held, wait time.Duration, waitSeen bool) string {
	w := "-"
	if waitSeen {
		w = fmt.Sprintf("%.3f", wait.Seconds())
	}
	return fmt.Sprintf("%.3f, %s", held.Seconds(), w)
}
