// Package driver runs placement-group operations on a Ray cluster.
//
// Ray's HTTP API has no call that creates placement groups, so every write is
// a Ray job whose entrypoint is a small Python driver (the modules of
// driverpy/, embedded in this binary and joined into one script: source.go).
// The driver's actions (contract.Action*) create, inspect, read, record or
// delete detached, named placement groups in one namespace and their record
// in Ray's KV, or run a batch of them; create reserves what it asks of the nodes first. It probes
// each bundle for its node, GPU, NVLink domain, topology rank and a free TCP
// port, and reports back through the job logs: progress lines "RAYTF_PROGRESS <json>" and exactly one final
// line "RAYTF_RESULT <json>".
//
// The entrypoint is
//
//	<python> -c '<bootstrap>' '<base85(zlib(spec json))>'
//
// where the bootstrap is a fixed one-liner that execs the zlib-compressed,
// base85-encoded driver source (Python's b85, package base85). The only
// user-controlled text (the spec) is base85, whose alphabet holds no quote
// or backslash, and the python executable is shell-quoted, so nothing a
// user typed reaches the shell unescaped.
package driver

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/base85"
)

const (
	resultMarker   = "RAYTF_RESULT"
	progressMarker = "RAYTF_PROGRESS"
)

// The progress phases driver.py reports (progress(run, "<phase>", ...));
// TestProgressPhasesInDriver checks each is there.
const (
	PhaseStarted  = "started"
	PhaseCreated  = "created"
	PhaseWaiting  = "waiting"
	PhaseProbing  = "probing" // a create's or read's last phase: its result follows the probes
	PhaseRemoving = "removing"
	PhaseResult   = "result" // a batch request finished; carries its result
)

// Progress is one RAYTF_PROGRESS line. Phases: started, lookup, created,
// recreated (a group removed during the wait was created again),
// waiting, probing, removing, and result (a batch's request finished).
type Progress struct {
	Phase string `json:"phase"`
	Ready int    `json:"ready,omitempty"`
	Total int    `json:"total,omitempty"`
	RunID string `json:"run_id,omitempty"`
	// Elapsed is seconds since the driver started.
	Elapsed float64 `json:"elapsed,omitempty"`
	// Result is a batch request's own result (phase result).
	Result *contract.Result `json:"result,omitempty"`
	// Raw holds the whole decoded line, including fields not listed here.
	Raw map[string]any `json:"-"`
}

// ErrNoResult is matched (errors.Is) when the logs contain no result line.
var ErrNoResult = errors.New("ray placement group driver: no RAYTF_RESULT line in the job logs")

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
		payload := base85.Encode(buf.Bytes())
		bootstrap = `import base64,zlib;exec(zlib.decompress(base64.b85decode("` + payload + `")))`
	})
	return bootstrap
}

// Entrypoint returns the shell command line of a driver job running spec
// with the given python executable (e.g. "python", or an absolute path).
func Entrypoint(python string, spec contract.Request) (string, error) {
	if strings.TrimSpace(python) == "" {
		return "", errors.New("driver: python executable must not be empty")
	}
	if strings.ContainsFunc(python, unicode.IsControl) {
		return "", fmt.Errorf("driver: python executable %q contains control characters", python)
	}
	if err := spec.Validate(); err != nil {
		return "", err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("driver: encoding spec: %w", err)
	}
	arg := EncodeSpecArg(raw)
	code := bootstrapCode()
	// Both quoted words hold no single quote by construction.
	return singleQuote(python) + " -c '" + code + "' '" + arg + "'", nil
}

// EncodeSpecArg is the spec's command-line word: zlib-compressed JSON in
// base85. Compressed because the whole entrypoint is one argument of
// `sh -c`, which Linux caps at 128 KiB (MAX_ARG_STRLEN): a 2,048 x 8 cluster's
// spec is 300-590 KB of JSON but 1.5-20 KB compressed (it repeats itself);
// base85 rather than base64 for a sixteenth less.
func EncodeSpecArg(specJSON []byte) string {
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	_, _ = w.Write(specJSON)
	_ = w.Close()
	return base85.Encode(buf.Bytes())
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
// and a descriptive error when the last one is not a valid result. With
// runID set, lines of other runs are skipped, and a garbled line is only
// reported when no line of the run is found.
func ParseResult(logs, runID string) (*contract.Result, error) {
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

func decodeResult(payload string) (*contract.Result, error) {
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
	var res contract.Result
	if err := json.Unmarshal([]byte(payload), &res); err != nil {
		return nil, fmt.Errorf("ray placement group driver: malformed result line (%v): %s", err, snippet(payload))
	}
	res.WordError()
	return &res, nil
}

func snippet(s string) string {
	const limit = 200
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
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
