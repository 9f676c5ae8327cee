package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// Lines as Terraform writes the provider's INFO log to TF_LOG_PATH.
const (
	raceLogLost = `2026-12-04T16:49:35.148Z [INFO]  provider.terraform-provider-ray: lost the race for nodes: choosing again: ` +
		`tf_rpc=ApplyResourceChange cluster=terraform-ray/bench-1-race-0 holders="cluster \"bench-1-race-3\" holds node 5c1" @module=ray`
	raceLogQueue = `2026-12-04T16:49:36.001Z [INFO]  provider.terraform-provider-ray: queueing for nodes other clusters hold: ` +
		`cluster=terraform-ray/bench-1-race-1 holders=5 @module=ray`
	raceLogLock = `2026-12-04T16:49:34.900Z [INFO]  provider.terraform-provider-ray: placement progress: ` +
		`phase=unlocked lock_held_seconds=0.042 lock_wait_seconds=0.007 wave=3 elapsed=1.2 run_id=raytf_1.0 @module=ray`
	raceLogNoneLeft = `2026-12-04T16:49:37.500Z [INFO]  provider.terraform-provider-ray: no nodes left after a lost race: ` +
		`@module=ray cluster=terraform-ray/bench-1-race-0 seconds_since_collision=2.352 tf_rpc=ApplyResourceChange`
)

func TestParseRaceApply(t *testing.T) {
	lostOut := "ray_virtual_cluster.t: Creating...\n╷\n│ Error: Other clusters took the nodes\n│ \n│   with ray_virtual_cluster.t,\n╵\n"
	for _, tc := range []struct {
		name, mode, out, log string
		code                 int
		want                 RaceApply
		collided             bool
	}{
		{name: "won at once", mode: "free", out: "Apply complete! Resources: 1 added", log: raceLogLock + "\n" + raceLogLock + "\n",
			want: RaceApply{OK: true, Outcome: "ok", LockHeld: 42 * time.Millisecond, LockWait: 7 * time.Millisecond, LockWaitSeen: true}},
		{name: "won after a re-choice", mode: "free", log: raceLogLost + "\n",
			want: RaceApply{OK: true, Outcome: "ok", Rechoices: 1}, collided: true},
		{name: "lost fast", mode: "free", code: 1, out: lostOut, log: raceLogLost + "\n" + raceLogNoneLeft + "\n",
			want: RaceApply{Outcome: "lost", Rechoices: 1, SinceCollision: 2352 * time.Millisecond, HasSince: true}, collided: true},
		{name: "queued then lost", mode: "total", code: 1, out: lostOut,
			log:  raceLogLost + "\n" + raceLogQueue + "\n" + raceLogLost + "\n" + raceLogNoneLeft + "\n",
			want: RaceApply{Outcome: "lost", Rechoices: 2, Queued: true, SinceCollision: 2352 * time.Millisecond, HasSince: true}, collided: true},
		{name: "refused at plan", mode: "free", code: 1,
			out:  "╷\n│ Error: Cannot select nodes for the virtual\n│ cluster\n╵\n",
			want: RaceApply{Outcome: "plan"}, collided: true},
		{name: "other", mode: "total", code: 1, out: "Planning...\n╷\n│ Error: Cannot create the virtual cluster\n│ \n" +
			"│   with ray_virtual_cluster.t,\n│   on main.tf line 13, in resource \"ray_virtual_cluster\" \"t\":\n" +
			"│   13: resource \"ray_virtual_cluster\" \"t\" {\n│ \n│ submitting placement group driver job\n│ \"raytf_1\": 500\n╵\n",
			want: RaceApply{Outcome: "other", Error: `Error: Cannot create the virtual cluster submitting placement group driver job "raytf_1": 500`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseRaceApply(tc.mode, tc.code, tc.out, tc.log)
			tc.want.Mode = tc.mode
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			if got.Collided() != tc.collided {
				t.Errorf("Collided() = %v, want %v", got.Collided(), tc.collided)
			}
		})
	}
}

func TestRaceHCL(t *testing.T) {
	hcl := raceHCL("http://127.0.0.1:8440", "bench-1-race-1", raceMode(1), 20*time.Second, 3020)
	for _, want := range []string{`address = "http://127.0.0.1:8440"`, `name                    = "bench-1-race-1"`,
		`select_nodes            = true`, `capacity_check          = "total"`, `ready_timeout           = "20s"`,
		`num_gpus_per_node       = 4`, `port_range_low          = 3020`, `port_range_high         = 3030`} {
		if !strings.Contains(hcl, want) {
			t.Errorf("configuration lacks %q:\n%s", want, hcl)
		}
	}
	if raceMode(0) != "free" || raceMode(3) != "total" {
		t.Errorf("modes: %s %s", raceMode(0), raceMode(3))
	}
}

func TestPrintRace(t *testing.T) {
	r := &RaceResult{States: 8, Nodes: 5, Duration: time.Minute, Wall: 70 * time.Second, Destroys: 4, DestroysOK: 4,
		Applies: []RaceApply{
			{Mode: "free", OK: true, Outcome: "ok"},
			{Mode: "free", OK: true, Outcome: "ok", Rechoices: 1, LockHeld: 42 * time.Millisecond},
			{Mode: "free", Outcome: "lost", Rechoices: 1, SinceCollision: time.Second, HasSince: true},
			{Mode: "free", Outcome: "lost", Rechoices: 2, SinceCollision: 3 * time.Second, HasSince: true},
			{Mode: "total", Outcome: "lost", Rechoices: 3, Queued: true, SinceCollision: 20 * time.Second, HasSince: true},
			{Mode: "total", Outcome: "plan"},
			{Mode: "total", Outcome: "other", Error: "Error: boom"},
		},
		Left: RaceLeft{JobRecords: 2}}
	var out bytes.Buffer
	PrintRace(&out, r, 20*time.Second)
	s := out.String()
	row := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "| 8 ") {
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	// applies 2 / 7; collisions 5; re-choices 7; won after 1; queued 1;
	// failed 2, 1, 1; free 2.0, 3.0 (median of two); total 20.0, 20.0;
	// longest lock hold 0.042.
	want := "| 8 | 5 | 60 | 2 / 7 | 5 | 7 | 1 | 1 | 2, 1, 1 | 2.0, 3.0 | 20.0, 20.0 | 0.042, - | 1 | 4 / 4 | 0, 0, 0, 0 | 2 |"
	if row != want {
		t.Errorf("row:\n%s\nwant:\n%s\n%s", row, want, s)
	}
	if !strings.Contains(s, "Other errors: 1x Error: boom") {
		t.Errorf("the other error is not listed:\n%s", s)
	}
	if !r.Left.Clean() || (RaceLeft{Claims: 1}).Clean() {
		t.Error("Clean() wrong")
	}
	if got := (RaceLeft{Groups: 1, Records: 2, Claims: 3, ActiveJobs: 4}).cell(); got != "1, 2, 3, 4" {
		t.Errorf("cell = %q", got)
	}
	if got := (RaceLeft{Groups: 1, Err: errors.New("no KV")}).cell(); got != "? (no KV)" {
		t.Errorf("cell of an unread count = %q", got)
	}
}

// The contention table gives each contending row its p95 against the apart
// row of the same N, with its verdict, and Percentile takes the nearest rank.
func TestPrintContention(t *testing.T) {
	s := func(n ...int) []time.Duration { return durations(time.Second, n...) }
	if got := Percentile(s(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 95); got != 10*time.Second {
		t.Errorf("p95 of 1..10 s = %s; want 10s", got)
	}
	if got := Percentile(s(4, 2), 50); got != 2*time.Second {
		t.Errorf("p50 of 2, 4 s = %s; want 2s", got)
	}
	var b strings.Builder
	PrintContention(&b, []ContentionRow{{N: 6, Mode: ContentionApart, Times: s(10, 10, 10, 10, 10, 10)},
		{N: 6, Mode: ContentionRacing, Times: s(10, 12, 14, 16, 18, 20), Lock: LockTimes{Held: 75 * time.Millisecond}, Rechoices: 4},
		{N: 6, Mode: ContentionMixed, Times: s(10, 10, 11, 11, 12, 12), Lock: LockTimes{Held: time.Second, Wait: 2 * time.Second, WaitSeen: true}},
		{N: 12, Mode: ContentionApart, Times: s(10)}, {N: 12, Mode: ContentionMixed, Times: s(11), Failed: []string{"boom"}}})
	flat := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"| 6 | racing | 6 / 6 | 15.0 | 20.0 | 2.00x | not met | 0.075, - | 4 |",
		"| 6 | mixed | 6 / 6 | 11.0 | 12.0 | 1.20x | met | 1.000, 2.000 |", "| 12 | mixed | 1 / 12 | 11.0 | 11.0 | 1.10x | not met (11 of 12 applies failed) |"} {
		if !strings.Contains(flat, want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// The lock's longest hold and wait: the driver's lock_wait_seconds field
// where it reports one, else the locking and locked lines of each run.
func TestParseLockTimes(t *testing.T) {
	line := func(fields string) string {
		return `2026-12-07T21:00:00.000Z [INFO]  provider.terraform-provider-ray: placement progress: ` + fields + ` @module=ray`
	}
	fromField := ParseLockTimes(strings.Join([]string{raceLogLock,
		line(`phase=unlocked lock_held_seconds=0.01 lock_wait_seconds=0.250 wave=1 elapsed=2.0 run_id=raytf_1.0`),
		line(`phase=locked lock_wait_seconds=1.5 elapsed=3.0 run_id=raytf_1.1`)}, "\n"))
	if fromField != (LockTimes{Held: 42 * time.Millisecond, Wait: 1500 * time.Millisecond, WaitSeen: true}) {
		t.Errorf("from the field: %+v", fromField)
	}
	fromLines := ParseLockTimes(strings.Join([]string{
		line(`phase=locking elapsed=1.0 run_id=raytf_1.0`), line(`phase=locking elapsed=1.1 run_id=raytf_1.1`),
		line(`phase=locked elapsed=1.5 run_id=raytf_1.1`), line(`phase=locked elapsed=3.0 run_id=raytf_1.0`),
		line(`phase=unlocked elapsed=3.1 lock_held_seconds=0.1 run_id=raytf_1.0`)}, "\n"))
	if fromLines != (LockTimes{Held: 100 * time.Millisecond, Wait: 2 * time.Second, WaitSeen: true}) {
		t.Errorf("from the locking and locked lines: %+v", fromLines)
	}
	if none := ParseLockTimes(line(`phase=unlocked lock_held_seconds=0.042 elapsed=1.2`)); none.WaitSeen || none.Held != 42*time.Millisecond {
		t.Errorf("without wait lines: %+v", none)
	}
}
