package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/devprovider"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/drivertest"
	"github.com/ray-infra/terraform-provider-ray/internal/rayclient"
)

// Workspace is a directory with a CLI configuration whose dev_overrides
// point ray-infra/ray at a locally built provider (internal/devprovider).
type Workspace struct {
	Tofu   string
	Root   string // holds bin/ and the CLI configuration
	RCFile string
	// LastCPU is the CPU time (user+system) of the last Run: the CLI and
	// the provider plugin it waited for.
	LastCPU time.Duration
}

// NewWorkspace builds the provider from the module root (the current
// directory) into root/bin and writes the CLI configuration beside it.
func NewWorkspace(ctx context.Context, tofu, root string) (*Workspace, time.Duration, error) {
	if tofu == "" {
		return nil, 0, errors.New("no OpenTofu binary (set TOFU or pass -tofu; scripts/env.sh installs one)")
	}
	start := time.Now()
	rc, err := devprovider.Install(ctx, ".", root)
	if err != nil {
		return nil, 0, fmt.Errorf("building the provider: %w", err)
	}
	return &Workspace{Tofu: tofu, Root: root, RCFile: rc}, time.Since(start), nil
}

// proxiedWorkspace is a workspace whose configurations reach Ray at
// address through a counting proxy (close it when done); build is the
// provider's build time.
func proxiedWorkspace(ctx context.Context, cli, root, address string) (*Workspace, *CountingProxy, time.Duration, error) {
	ws, build, err := NewWorkspace(ctx, cli, root)
	if err != nil {
		return nil, nil, 0, err
	}
	proxy, err := StartProxy(address)
	if err != nil {
		return nil, nil, 0, err
	}
	return ws, proxy, build, nil
}

// logTo returns a printf to w, one line per call; nil w discards.
func logTo(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
}

// ProviderHCL is the terraform and provider blocks of a bench configuration.
func ProviderHCL(address string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    ray = {
      source = "registry.terraform.io/ray-infra/ray"
    }
  }
}

provider "ray" {
  address = %q
}
`, address)
}

// Dir creates (empty) a configuration directory under the workspace.
func (w *Workspace) Dir(name string, files map[string]string) (string, error) {
	dir := filepath.Join(w.Root, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Run runs the CLI in dir and returns its wall time, exit code and output.
func (w *Workspace) Run(ctx context.Context, dir string, args ...string) (time.Duration, int, string, error) {
	r := w.RunEnv(ctx, dir, nil, args...)
	w.LastCPU = r.CPU
	return r.Wall, r.Code, r.Out, r.Err
}

// CLIRun is one CLI command's outcome: Err only when it did not run or was
// killed, else Code is its exit code.
type CLIRun struct {
	Wall, CPU time.Duration
	Code      int
	Out       string
	Err       error
}

// RunEnv runs the CLI in dir with env added to the environment. Unlike Run
// it keeps no state in w, so several goroutines may run CLIs at once.
func (w *Workspace) RunEnv(ctx context.Context, dir string, env []string, args ...string) CLIRun {
	cmd := exec.CommandContext(ctx, w.Tofu, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+w.RCFile, "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"CHECKPOINT_DISABLE=1")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 30 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := CLIRun{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code, err = ee.ExitCode(), nil
	}
	r.Out, r.Err = out.String(), err
	return r
}

// SubmittedSpecs decodes the driver specs of the job submissions among
// events (the entrypoint's last word is the base85 spec).
func SubmittedSpecs(events []ProxyEvent) ([]contract.Request, error) {
	var out []contract.Request
	for _, e := range events {
		if e.Route != "POST /api/jobs/" {
			continue
		}
		var req rayclient.JobSubmitRequest
		if err := json.Unmarshal(e.Body, &req); err != nil {
			return nil, err
		}
		ep := strings.TrimSpace(req.Entrypoint)
		arg := strings.Trim(ep[strings.LastIndexByte(ep, ' ')+1:], "'")
		raw, err := drivertest.DecodeSpecArg(arg)
		if err != nil {
			return nil, err
		}
		var s contract.Request
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// SpecDiff lists the top-level request keys whose values differ between the
// spec the provider submitted and the bench's DriverSpec. Both are complete
// requests (clusterspec fills every default), compared through their JSON.
// Ignored: RunID (per run) and Ownership: the bench acts on bare groups, so
// its runs skip the cluster record (a few KV calls inside the same job) and
// leave no records or tombstones in a shared cluster's KV.
func SpecDiff(submitted, bench contract.Request) []string {
	fields := func(s contract.Request) map[string]any {
		s.RunID, s.Ownership = "", nil
		raw, _ := json.Marshal(s)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	a, b := fields(submitted), fields(bench)
	var keys []string
	for k := range a {
		if !reflect.DeepEqual(a[k], b[k]) {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// TofuConfig configures the CLI measurement.
type TofuConfig struct {
	Tofu, Dir, Address string
	Client             *rayclient.Client
	Name               string
	Groups             int
	Wait               time.Duration
	Log                io.Writer
}

// TofuStep is one CLI command measured through the proxy.
type TofuStep struct {
	Command string
	Wall    time.Duration
	Events  []ProxyEvent
	// DriverSpan is from the first job submission to the end of the last
	// log fetch, where driver.Run finds the result line and returns (the job
	// record is deleted in the background, often after the CLI has exited).
	DriverSpan time.Duration
	// OtherHTTP is the time other requests were in flight.
	OtherHTTP time.Duration
	// Summary is the CLI's "Plan: ..." / "No changes." / "Apply complete!" line.
	Summary string
}

var summaryPrefixes = []string{"Plan:", "No changes.", "Apply complete!", "Destroy complete!"}

// Summary returns the CLI's last summary line in out.
func Summary(out string) string {
	found := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range summaryPrefixes {
			if strings.HasPrefix(l, p) {
				found = l
			}
		}
	}
	return found
}

// TofuResult is the apply and destroy of one cluster.
type TofuResult struct {
	Name        string
	Groups      int
	Build       time.Duration
	Apply       TofuStep
	Destroy     TofuStep
	SpecChecked bool     // the create spec equals the bench's DriverSpec
	SpecDiff    []string // else the request keys that differ
	Submitted   int
}

func step(cmd string, wall time.Duration, ev []ProxyEvent) TofuStep {
	s := TofuStep{Command: cmd, Wall: wall, Events: ev}
	var first, last time.Time
	var other []ProxyEvent
	for _, e := range ev {
		if e.Route == "POST /api/jobs/" && first.IsZero() {
			first = e.Start
		}
		if e.Route == "GET /api/jobs/{id}/logs" {
			last = e.End
		}
	}
	for _, e := range ev {
		if first.IsZero() || e.End.Before(first) || e.Start.After(last) {
			other = append(other, e)
		}
	}
	if !first.IsZero() && last.After(first) {
		s.DriverSpan = last.Sub(first)
	}
	s.OtherHTTP = Busy(other)
	return s
}

// RunTofu applies and destroys a per-node GPU cluster with the real CLI and
// the locally built provider, counting its HTTP calls through a proxy.
func RunTofu(ctx context.Context, cfg TofuConfig) (*TofuResult, error) {
	logf := logTo(cfg.Log)
	ws, proxy, build, err := proxiedWorkspace(ctx, cfg.Tofu, cfg.Dir, cfg.Address)
	if err != nil {
		return nil, err
	}
	defer proxy.Close()
	spec := PerNodeGPUCluster(cfg.Name, cfg.Groups)
	dir, err := ws.Dir("tofu-apply", map[string]string{"main.tf": ProviderHCL(proxy.URL) + "\n" + PerNodeHCL("bench", spec)})
	if err != nil {
		return nil, err
	}
	res := &TofuResult{Name: cfg.Name, Groups: cfg.Groups, Build: build}
	destroy := func() (TofuStep, error) {
		proxy.Take()
		wall, code, out, err := ws.Run(context.WithoutCancel(ctx), dir, "destroy", "-auto-approve", "-no-color")
		st := step("tofu destroy", wall, proxy.Take())
		st.Summary = Summary(out)
		if err == nil && code != 0 {
			err = fmt.Errorf("tofu destroy exited %d:\n%s", code, tail(out, 30))
		}
		return st, err
	}
	for attempt := 0; ; attempt++ {
		if err := WaitForCapacity(ctx, cfg.Client, float64(cfg.Groups), float64(cfg.Groups), cfg.Wait, logf); err != nil {
			return nil, err
		}
		proxy.Take()
		wall, code, out, err := ws.Run(ctx, dir, "apply", "-auto-approve", "-no-color")
		res.Apply = step("tofu apply", wall, proxy.Take())
		res.Apply.Summary = Summary(out)
		if err == nil && code == 0 {
			break
		}
		_, derr := destroy() // whatever was created, even on failure
		if err == nil {
			err = fmt.Errorf("tofu apply exited %d:\n%s", code, tail(out, 40))
		}
		busy := strings.Contains(out, "cannot hold") || strings.Contains(out, "infeasible") || strings.Contains(out, "not ready after")
		if !busy || attempt >= 2 || derr != nil {
			return res, errors.Join(err, derr)
		}
		logf("   tofu apply: resources busy, retrying (%v)", firstLine(out))
	}
	specs, err := SubmittedSpecs(res.Apply.Events)
	if err == nil && len(specs) > 0 {
		res.Submitted = len(specs)
		res.SpecDiff = SpecDiff(specs[0], DriverSpec(contract.ActionCreate, clusterspec.DefaultNamespace, spec, ReadyTimeout))
		res.SpecChecked = len(res.SpecDiff) == 0
	}
	res.Destroy, err = destroy()
	if err != nil {
		return res, err
	}
	return res, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Error") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// PrintTofu prints where a CLI apply and destroy spend their time.
func PrintTofu(out io.Writer, r *TofuResult) {
	if r == nil {
		return
	}
	fmt.Fprintf(out, "`tofu apply` + `tofu destroy` of %d per-node GPU groups (%s) through a dev_overrides CLI config and a counting proxy; provider build %ss (not counted).\n\n",
		r.Groups, r.Name, Sec(r.Build))
	t := NewTable(out, "command", "wall", "driver job (submit..result)", "other HTTP in flight", "CLI + plugin + plan/state (rest)", "CLI share", "HTTP calls")
	for _, s := range []TofuStep{r.Apply, r.Destroy} {
		rest := s.Wall - s.DriverSpan - s.OtherHTTP
		t.Row(s.Command, Sec(s.Wall), Sec(s.DriverSpan), Sec(s.OtherHTTP), Sec(rest), Pct(rest, s.Wall), fmt.Sprint(len(s.Events)))
	}
	t.Flush()
	fmt.Fprintln(out)
	fmt.Fprintf(out, "apply calls: %s\n\n", RouteCounts(r.Apply.Events))
	fmt.Fprintf(out, "destroy calls: %s\n\n", RouteCounts(r.Destroy.Events))
	switch {
	case r.Submitted == 0:
		fmt.Fprintln(out, "No job submission was seen, so the create spec could not be compared with bench.DriverSpec.")
	case r.SpecChecked:
		fmt.Fprintln(out, "The create spec the provider binary submitted (decoded from the job entrypoint) equals bench.DriverSpec for the same cluster, so the reference benchmark's driver.Run runs what the provider runs.")
	default:
		fmt.Fprintf(out, "WARNING: the create spec the provider binary submitted DIFFERS from bench.DriverSpec (%s): update bench/spec.go.\n", strings.Join(r.SpecDiff, ", "))
	}
	fmt.Fprintln(out)
}
