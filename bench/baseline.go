package bench

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
)

//go:embed baseline.py
var baselineSource []byte

// baselineCommon is what baseline.py and reference_baseline.py import.
//
//go:embed baseline_common.py
var baselineCommon []byte

// BaselineNamespace is the Ray namespace of the Python baseline's groups.
const BaselineNamespace = "bench-baseline"

// Baseline runs bench/baseline.py: a persistent driver connected once with
// ray.init(address=...) (Cycle, Create, Remove), and one-shot cold processes
// (ColdRemove).
type Baseline struct {
	Python  string // python with ray installed
	Address string // GCS address for ray.init, e.g. 127.0.0.10:6379
	Dir     string // where baseline.py is written
	// Script and ScriptName replace baseline.py (e.g. the reference
	// baseline, reference_baseline.py); the protocol is the same.
	Script     []byte
	ScriptName string

	script string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	mu     sync.Mutex

	// ImportTime and InitTime are the serving process's imports and ray.init.
	ImportTime, InitTime time.Duration
}

// BaselineTimes is the answer to one baseline command.
type BaselineTimes struct {
	OK    bool              `json:"ok"`
	Error string            `json:"error"`
	IDs   map[string]string `json:"ids"`
	// Seconds, as measured inside the Python process.
	CreateCalls float64 `json:"create_calls_s"`
	Ready       float64 `json:"ready_s"`
	Probe       float64 `json:"probe_s"` // cold-create: the plain probe after ready
	Remove      float64 `json:"remove_s"`
	Import      float64 `json:"import_s"`
	Init        float64 `json:"init_s"`
	TFirst      float64 `json:"t_first"`
	TLast       float64 `json:"t_last"`
	// Wall is the cold process's lifetime seen from Go; Startup is exec to
	// the script's first line; Exit is the last line to process exit.
	Wall, Startup, Exit time.Duration `json:"-"`
}

func (b *Baseline) env() []string {
	// reference_baseline.py takes the reference's defaults, and baseline.py
	// its plain probe's GPU fraction, from the provider's constants, the one
	// place they are written.
	env := []string{
		fmt.Sprintf("RAYTF_BENCH_READY_TIMEOUT_S=%d", clusterspec.DefaultReadyTimeoutSeconds),
		fmt.Sprintf("RAYTF_BENCH_PORT_RANGE=%d,%d", clusterspec.DefaultPorts.Low, clusterspec.DefaultPorts.High),
		fmt.Sprintf("RAYTF_BENCH_PROBE_GPU_FRACTION=%g", contract.DriverContract().ProbeGPUFraction),
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RAY_ADDRESS=") { // ray.init gets the address explicitly
			env = append(env, kv)
		}
	}
	return env
}

func (b *Baseline) writeScript() error {
	if b.script != "" {
		return nil
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return err
	}
	name, src := "baseline.py", baselineSource
	if b.Script != nil {
		name, src = b.ScriptName, b.Script
	}
	if err := os.WriteFile(filepath.Join(b.Dir, "baseline_common.py"), baselineCommon, 0o644); err != nil {
		return err
	}
	b.script = filepath.Join(b.Dir, name)
	return os.WriteFile(b.script, src, 0o644)
}

// Start launches the persistent baseline driver and waits until it is connected.
func (b *Baseline) Start() error {
	if err := b.writeScript(); err != nil {
		return err
	}
	b.cmd = exec.Command(b.Python, b.script, "serve", b.Address, BaselineNamespace)
	b.cmd.Env = b.env()
	b.cmd.Stderr = os.Stderr
	var err error
	if b.stdin, err = b.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := b.cmd.Start(); err != nil {
		return err
	}
	b.out = bufio.NewScanner(stdout)
	b.out.Buffer(make([]byte, 1<<20), 16<<20)
	line, err := b.readLine()
	if err != nil {
		b.Stop()
		return fmt.Errorf("python baseline did not connect to Ray at %s: %w", b.Address, err)
	}
	var ready struct {
		Event  string  `json:"event"`
		Import float64 `json:"import_s"`
		Init   float64 `json:"init_s"`
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.Event != "ready" {
		b.Stop()
		return fmt.Errorf("python baseline: unexpected first line %q", line)
	}
	b.ImportTime, b.InitTime = secs(ready.Import), secs(ready.Init)
	return nil
}

func (b *Baseline) readLine() (string, error) {
	for b.out.Scan() {
		line := strings.TrimSpace(b.out.Text())
		if strings.HasPrefix(line, "{") {
			return line, nil
		}
	}
	if err := b.out.Err(); err != nil {
		return "", err
	}
	return "", errors.New("python baseline exited")
}

// exchange sends one command to the serving driver and returns its answer line.
func (b *Baseline) exchange(cmd map[string]any) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stdin == nil {
		return "", errors.New("python baseline not started")
	}
	raw, _ := json.Marshal(cmd)
	if _, err := b.stdin.Write(append(raw, '\n')); err != nil {
		return "", err
	}
	return b.readLine()
}

func (b *Baseline) call(cmd map[string]any) (BaselineTimes, error) {
	var t BaselineTimes
	line, err := b.exchange(cmd)
	if err != nil {
		return t, err
	}
	return t, decodeAnswer("python baseline", line, &t)
}

// answer is a baseline's JSON answer line: failed is "" when it succeeded.
type answer interface{ failed() string }

func failure(ok bool, msg string) string {
	switch {
	case ok:
		return ""
	case msg == "":
		return "failed"
	}
	return msg
}

func (t *BaselineTimes) failed() string { return failure(t.OK, t.Error) }

// decodeAnswer decodes a baseline's answer line into v and reports its failure.
func decodeAnswer(what, line string, v answer) error {
	if err := json.Unmarshal([]byte(line), v); err != nil {
		return fmt.Errorf("%s: bad answer %q: %w", what, line, err)
	}
	if msg := v.failed(); msg != "" {
		return fmt.Errorf("%s: %s", what, msg)
	}
	return nil
}

// Cycle creates the groups, waits until they are ready, removes them and
// waits until they are removed.
func (b *Baseline) Cycle(groups []contract.RequestGroup) (BaselineTimes, error) {
	return b.call(map[string]any{"op": "cycle", "groups": groups})
}

// Create creates the groups and waits until they are ready; they stay.
func (b *Baseline) Create(groups []contract.RequestGroup) (BaselineTimes, error) {
	return b.call(map[string]any{"op": "create", "groups": groups})
}

// Remove removes named groups of the baseline namespace (missing ones are
// skipped) and waits until they are removed.
func (b *Baseline) Remove(names []string) (BaselineTimes, error) {
	return b.call(map[string]any{"op": "remove", "names": names})
}

// Stop ends the persistent driver (which removes anything it still owns).
func (b *Baseline) Stop() {
	if b.stdin != nil {
		_ = b.stdin.Close()
		b.stdin = nil
	}
	if b.cmd != nil && b.cmd.Process != nil {
		done := make(chan struct{})
		go func() { _ = b.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = b.cmd.Process.Kill()
			<-done
		}
		b.cmd = nil
	}
}

// ColdRemove runs one fresh python process that removes the named groups.
func (b *Baseline) ColdRemove(names []string) (BaselineTimes, error) {
	raw, _ := json.Marshal(names)
	return b.cold("cold-remove", string(raw))
}

// ColdCreate runs one fresh python process that creates the groups, waits
// until they are ready and removes them: the placement floor of an apply.
func (b *Baseline) ColdCreate(groups []contract.RequestGroup) (BaselineTimes, error) {
	raw, err := json.Marshal(groups)
	if err != nil {
		return BaselineTimes{}, err
	}
	return b.cold("cold-create", string(raw))
}

// runCold runs the script once in a fresh process with the given
// arguments and returns its last JSON line and the process's lifetime.
func (b *Baseline) runCold(op string, args ...string) (line string, start, end time.Time, err error) {
	if err := b.writeScript(); err != nil {
		return "", start, end, err
	}
	cmd := exec.Command(b.Python, append([]string{b.script, op, b.Address, BaselineNamespace}, args...)...)
	cmd.Env = b.env()
	cmd.Stderr = os.Stderr
	start = time.Now()
	out, err := cmd.Output()
	end = time.Now()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			line = l
		}
	}
	if line == "" {
		return "", start, end, fmt.Errorf("python baseline %s printed nothing (%v)", op, err)
	}
	return line, start, end, nil
}

func (b *Baseline) cold(op, arg string) (BaselineTimes, error) {
	var t BaselineTimes
	line, start, end, err := b.runCold(op, arg)
	if err != nil {
		return t, err
	}
	if jerr := json.Unmarshal([]byte(line), &t); jerr != nil {
		return t, fmt.Errorf("python baseline %s: bad answer %q: %w", op, line, jerr)
	}
	if !t.OK {
		return t, fmt.Errorf("python baseline %s: %s", op, t.Error)
	}
	t.Wall = end.Sub(start)
	first := time.Unix(0, int64(t.TFirst*1e9))
	last := time.Unix(0, int64(t.TLast*1e9))
	t.Startup = first.Sub(start)
	t.Exit = end.Sub(last)
	return t, nil
}
