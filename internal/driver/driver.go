// Package driver runs placement-group operations on a Ray cluster.
//
// Ray's HTTP API has no call that creates placement groups, so every write is
// a Ray job whose entrypoint is a small Python driver (driver.py, embedded in
// this binary). The driver creates, inspects or deletes detached, named
// placement groups in one namespace, probes each bundle for its node, GPU,
// NVLink domain, topology rank and a free TCP port, and reports back through
// the job logs: progress lines "RAYTF_PROGRESS <json>" and exactly one final
// line "RAYTF_RESULT <json>".
//
// The entrypoint is
//
//	<python> -c '<bootstrap>' '<base64(spec json)>'
//
// where the bootstrap is a fixed one-liner that execs the zlib-compressed,
// base64-encoded driver source. The only user-controlled text (the spec) is
// base64, and the python executable is shell-quoted, so nothing a user typed
// reaches the shell unescaped.
package driver

import (
	"bytes"
	"compress/zlib"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

//go:embed driver.py
var driverSource []byte

// Actions understood by the driver.
const (
	ActionCreate  = "create"
	ActionDelete  = "delete"
	ActionInspect = "inspect"
)

// Error kinds reported by the driver (ResultError.Kind, DriverError.Kind).
const (
	KindTimeout    = "timeout"
	KindInfeasible = "infeasible"
	KindConflict   = "conflict"
	KindInvalid    = "invalid"
	KindInternal   = "internal"
)

// Defaults applied by Entrypoint (and by the driver itself).
const (
	DefaultNamespace           = "terraform-ray"
	DefaultReadyTimeoutSeconds = 180
	DefaultPortRangeLow        = 1400
	DefaultPortRangeHigh       = 1999
)

// StateMissing is GroupResult.State for an inspected group that does not exist.
const StateMissing = "MISSING"

// Placement group strategies accepted by Ray.
var Strategies = []string{"PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"}

const (
	resultMarker   = "RAYTF_RESULT"
	progressMarker = "RAYTF_PROGRESS"
)

// Spec is the driver's input.
type Spec struct {
	// Action is one of ActionCreate, ActionDelete, ActionInspect.
	Action string `json:"action"`
	// Namespace is the Ray namespace the named groups live in
	// (DefaultNamespace when empty).
	Namespace string `json:"namespace"`
	// ReadyTimeoutSeconds bounds the wait for created groups to become ready
	// (DefaultReadyTimeoutSeconds when 0).
	ReadyTimeoutSeconds int `json:"ready_timeout_seconds"`
	// Groups lists the placement groups to act on. Strategy and Bundles are
	// only needed for create.
	Groups []Group `json:"groups"`
	// Probe configures the per-bundle probe (create and inspect).
	Probe Probe `json:"probe"`
	// RunID is echoed on every driver output line. Run sets a fresh RunID
	// per launch; it is also the unique part of the launch's SubmissionID.
	RunID string `json:"run_id,omitempty"`
}

// Group is one named placement group.
type Group struct {
	Name string `json:"name"`
	// Strategy is PACK, SPREAD, STRICT_PACK or STRICT_SPREAD (PACK when empty).
	Strategy string `json:"strategy,omitempty"`
	// Bundles are resource maps, e.g. {"CPU": 1, "GPU": 1}.
	Bundles []map[string]float64 `json:"bundles,omitempty"`
}

// Probe configures the per-bundle probe.
type Probe struct {
	// UseGPUs makes the probe task take a GPU fraction in bundles that hold
	// GPUs, so the bundle's GPU id is reported.
	UseGPUs bool `json:"use_gpus"`
	// PortRangeLow and PortRangeHigh bound the probed port, half-open
	// [low, high). Zero means the defaults 1400 and 1999.
	PortRangeLow  int `json:"port_range_low"`
	PortRangeHigh int `json:"port_range_high"`
}

// Result is the driver's final report.
type Result struct {
	OK     bool         `json:"ok"`
	Action string       `json:"action"`
	Error  *ResultError `json:"error"`
	// Groups is set for create and inspect (in spec order) when OK.
	Groups []GroupResult `json:"groups"`
	// Removed lists groups removed by this run: by delete, or, on a failed
	// create, the groups the run had created and removed again.
	Removed []string `json:"removed"`
	// Missing lists named groups that do not exist (delete and inspect).
	Missing    []string `json:"missing"`
	RayVersion string   `json:"ray_version"`
	// RunID echoes Spec.RunID.
	RunID string `json:"run_id,omitempty"`
}

// ResultError is the driver's error report.
type ResultError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// GroupResult describes one placement group.
type GroupResult struct {
	Name string `json:"name"`
	// ID is the hex placement group id ("" when missing).
	ID string `json:"id"`
	// State is Ray's state (CREATED, PENDING, ...) or StateMissing.
	State    string `json:"state"`
	Strategy string `json:"strategy"`
	// Created is true when this run created the group (false when adopted
	// or inspected).
	Created bool           `json:"created"`
	Missing bool           `json:"missing"`
	Bundles []BundleResult `json:"bundles"`
}

// BundleResult describes one bundle. Node fields come from the probe task
// (or, for groups that are not CREATED, from Ray's placement table, in which
// case Port is 0 and GPUID nil).
type BundleResult struct {
	Index     int                `json:"index"`
	Resources map[string]float64 `json:"resources"`
	NodeID    string             `json:"node_id"`
	NodeIP    string             `json:"node_ip"`
	// GPUID is the bundle's GPU id, nil without GPUs (or use_gpus false).
	GPUID *int `json:"gpu_id"`
	// NVLinkDomain is the node's nvlink_domain_* resource, or "unknown".
	NVLinkDomain string `json:"nvlink_domain"`
	// TopoRank is the node's topo_rank resource, or -1.
	TopoRank int `json:"topo_rank"`
	// Port is a free TCP port on the node, unique per node IP in this result.
	Port int `json:"port"`
}

// Progress is one RAYTF_PROGRESS line. Phases: started, lookup, created,
// waiting, probing, removing.
type Progress struct {
	Phase string `json:"phase"`
	Ready int    `json:"ready,omitempty"`
	Total int    `json:"total,omitempty"`
	RunID string `json:"run_id,omitempty"`
	// Elapsed is seconds since the driver started.
	Elapsed float64 `json:"elapsed,omitempty"`
	// Raw holds the whole decoded line, including fields not listed here.
	Raw map[string]any `json:"-"`
}

// DriverError is the Go form of a driver result with ok=false.
type DriverError struct {
	Kind    string
	Message string
}

func (e *DriverError) Error() string {
	return fmt.Sprintf("ray placement group driver: %s: %s", e.Kind, e.Message)
}

// ErrNoResult is matched (errors.Is) when the logs contain no result line.
var ErrNoResult = errors.New("ray placement group driver: no RAYTF_RESULT line in the job logs")

// withDefaults returns a copy of spec with defaults filled in.
func (s Spec) withDefaults() Spec {
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.ReadyTimeoutSeconds == 0 {
		s.ReadyTimeoutSeconds = DefaultReadyTimeoutSeconds
	}
	if s.Probe.PortRangeLow == 0 {
		s.Probe.PortRangeLow = DefaultPortRangeLow
	}
	if s.Probe.PortRangeHigh == 0 {
		s.Probe.PortRangeHigh = DefaultPortRangeHigh
	}
	groups := make([]Group, len(s.Groups))
	copy(groups, s.Groups)
	for i := range groups {
		if groups[i].Strategy == "" && s.Action == ActionCreate {
			groups[i].Strategy = "PACK"
		}
	}
	s.Groups = groups
	return s
}

// Validate checks what the driver would reject anyway, so that mistakes are
// reported before a job is submitted.
func (s Spec) Validate() error {
	switch s.Action {
	case ActionCreate, ActionDelete, ActionInspect:
	default:
		return fmt.Errorf("driver spec: unknown action %q (want create, delete or inspect)", s.Action)
	}
	if len(s.Groups) == 0 {
		return errors.New("driver spec: no groups")
	}
	if s.ReadyTimeoutSeconds < 0 {
		return errors.New("driver spec: ready_timeout_seconds must not be negative")
	}
	lo, hi := s.Probe.PortRangeLow, s.Probe.PortRangeHigh
	if lo == 0 {
		lo = DefaultPortRangeLow
	}
	if hi == 0 {
		hi = DefaultPortRangeHigh
	}
	if lo < 1 || hi > 65536 || lo >= hi {
		return fmt.Errorf("driver spec: invalid port range [%d, %d)", lo, hi)
	}
	seen := make(map[string]bool, len(s.Groups))
	for i, g := range s.Groups {
		if strings.TrimSpace(g.Name) == "" {
			return fmt.Errorf("driver spec: groups[%d] has an empty name", i)
		}
		if seen[g.Name] {
			return fmt.Errorf("driver spec: group name %q is listed twice", g.Name)
		}
		seen[g.Name] = true
		if s.Action != ActionCreate {
			continue
		}
		if g.Strategy != "" && !validStrategy(g.Strategy) {
			return fmt.Errorf("driver spec: group %q: unknown strategy %q", g.Name, g.Strategy)
		}
		if len(g.Bundles) == 0 {
			return fmt.Errorf("driver spec: group %q has no bundles", g.Name)
		}
		for j, b := range g.Bundles {
			positive := false
			for k, v := range b {
				if k == "" || v < 0 || v != v || v > 1e18 {
					return fmt.Errorf("driver spec: group %q bundle %d: invalid resource %q = %v", g.Name, j, k, v)
				}
				if v > 0 {
					positive = true
				}
			}
			if !positive {
				return fmt.Errorf("driver spec: group %q bundle %d requests no resources", g.Name, j)
			}
		}
	}
	return nil
}

func validStrategy(s string) bool {
	for _, v := range Strategies {
		if s == v {
			return true
		}
	}
	return false
}

var (
	bootstrapOnce sync.Once
	bootstrap     string
)

// bootstrapCode is the fixed python -c program: it decodes, decompresses and
// execs the embedded driver. It contains no single quote.
func bootstrapCode() string {
	bootstrapOnce.Do(func() {
		var buf bytes.Buffer
		w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
		_, _ = w.Write(driverSource)
		_ = w.Close()
		payload := base64.StdEncoding.EncodeToString(buf.Bytes())
		bootstrap = `import base64,zlib;exec(zlib.decompress(base64.b64decode("` + payload + `")))`
	})
	return bootstrap
}

// Entrypoint returns the shell command line of a driver job running spec
// with the given python executable (e.g. "python", or an absolute path).
func Entrypoint(python string, spec Spec) (string, error) {
	if strings.TrimSpace(python) == "" {
		return "", errors.New("driver: python executable must not be empty")
	}
	if strings.ContainsFunc(python, unicode.IsControl) {
		return "", fmt.Errorf("driver: python executable %q contains control characters", python)
	}
	if err := spec.Validate(); err != nil {
		return "", err
	}
	raw, err := json.Marshal(spec.withDefaults())
	if err != nil {
		return "", fmt.Errorf("driver: encoding spec: %w", err)
	}
	arg := base64.StdEncoding.EncodeToString(raw)
	code := bootstrapCode()
	// Both quoted words hold no single quote by construction.
	return singleQuote(python) + " -c '" + code + "' '" + arg + "'", nil
}

// singleQuote always quotes, so that even a value shaped like NAME=value is
// a command word and not a shell variable assignment.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// ansiRE matches ANSI escape sequences (CSI and OSC) that Ray's colored
// log output may interleave.
var ansiRE = regexp.MustCompile("\x1b(?:\\[[0-9;?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|[@-Z\\\\-_])")

func cleanLine(line string) string {
	if strings.IndexByte(line, 0x1b) >= 0 {
		line = ansiRE.ReplaceAllString(line, "")
	}
	return line
}

func splitLines(logs string) []string {
	logs = strings.ReplaceAll(logs, "\r\n", "\n")
	logs = strings.ReplaceAll(logs, "\r", "\n")
	return strings.Split(logs, "\n")
}

// Markers must stand alone: "xRAYTF_RESULT" and "RAYTF_RESULTS" do not count.
var (
	resultRE   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + resultMarker + `(?:[ \t]|$)`)
	progressRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + progressMarker + `(?:[ \t]|$)`)
)

// payloadAfter returns the text after the last (or first) marker in line.
func payloadAfter(re *regexp.Regexp, line string, last bool) (string, bool) {
	locs := re.FindAllStringIndex(line, -1)
	if locs == nil {
		return "", false
	}
	loc := locs[0]
	if last {
		loc = locs[len(locs)-1]
	}
	return strings.TrimSpace(line[loc[1]:]), true
}

// ParseResult extracts the driver result from job logs: the last line that
// holds the RAYTF_RESULT marker. Other log lines and ANSI escapes are
// ignored. It returns ErrNoResult (errors.Is) when there is no such line,
// and a descriptive error when the last one is not a valid result.
func ParseResult(logs string) (*Result, error) {
	return parseResult(logs, "")
}

// parseResult is ParseResult restricted to result lines of one run when
// runID is set: lines of other runs are skipped, and a garbled line is only
// reported when no line of the run is found.
func parseResult(logs, runID string) (*Result, error) {
	if !strings.Contains(logs, resultMarker) {
		return nil, ErrNoResult
	}
	lines := splitLines(logs)
	var garbled error
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.Contains(lines[i], resultMarker) {
			continue
		}
		payload, ok := payloadAfter(resultRE, cleanLine(lines[i]), true)
		if !ok {
			continue
		}
		res, err := decodeResult(payload)
		if runID == "" {
			return res, err
		}
		if err != nil {
			if garbled == nil {
				garbled = err
			}
			continue
		}
		if res.RunID == runID {
			return res, nil
		}
	}
	if garbled != nil {
		return nil, garbled
	}
	return nil, ErrNoResult
}

func decodeResult(payload string) (*Result, error) {
	var probe struct {
		OK     *bool   `json:"ok"`
		Action *string `json:"action"`
	}
	if err := json.Unmarshal([]byte(payload), &probe); err != nil {
		return nil, fmt.Errorf("ray placement group driver: malformed result line (%v): %s", err, snippet(payload))
	}
	if probe.OK == nil || probe.Action == nil {
		return nil, fmt.Errorf("ray placement group driver: result line lacks \"ok\" or \"action\": %s", snippet(payload))
	}
	var res Result
	if err := json.Unmarshal([]byte(payload), &res); err != nil {
		return nil, fmt.Errorf("ray placement group driver: malformed result line (%v): %s", err, snippet(payload))
	}
	if !res.OK && res.Error == nil {
		res.Error = &ResultError{Kind: KindInternal, Message: "driver reported failure without an error"}
	}
	return &res, nil
}

func snippet(s string) string {
	const limit = 200
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// Err returns the driver's failure as a *DriverError, or nil when OK.
func (r *Result) Err() error {
	if r == nil || r.OK {
		return nil
	}
	e := &DriverError{Kind: KindInternal, Message: "driver reported failure without an error"}
	if r.Error != nil {
		e.Kind, e.Message = r.Error.Kind, r.Error.Message
	}
	return e
}

// ParseProgress returns every well-formed RAYTF_PROGRESS line in order.
func ParseProgress(logs string) []Progress {
	if !strings.Contains(logs, progressMarker) {
		return nil
	}
	var out []Progress
	for _, line := range splitLines(logs) {
		if !strings.Contains(line, progressMarker) {
			continue
		}
		payload, ok := payloadAfter(progressRE, cleanLine(line), false)
		if !ok {
			continue
		}
		var p Progress
		if json.Unmarshal([]byte(payload), &p) != nil || p.Phase == "" {
			continue
		}
		_ = json.Unmarshal([]byte(payload), &p.Raw)
		out = append(out, p)
	}
	return out
}
