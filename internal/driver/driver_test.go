package driver

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ray-infra/terraform-provider-ray/internal/clusterspec"
	"github.com/ray-infra/terraform-provider-ray/internal/contract"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/base85"
	"github.com/ray-infra/terraform-provider-ray/internal/driver/drivertest"
	"github.com/ray-infra/terraform-provider-ray/internal/topology"
)

func createSpec(names ...string) contract.Request {
	groups := make([]clusterspec.GroupRequest, len(names))
	for i, n := range names {
		groups[i] = clusterspec.GroupRequest{Name: n, Bundles: []topology.Resources{{"CPU": 1, "GPU": 1}}}
	}
	return contract.NewRequest(contract.ActionCreate, "ns", groups, true, topology.PortRange{}, 0)
}

// deleteRequest removes the named groups from namespace.
func deleteRequest(namespace string, names ...string) contract.Request {
	groups := make([]clusterspec.GroupRequest, len(names))
	for i, n := range names {
		groups[i] = clusterspec.GroupRequest{Name: n}
	}
	return contract.NewRequest(contract.ActionDelete, namespace, groups, false, topology.PortRange{}, 0)
}

// shellWords splits a command line the way sh does for the quoting forms
// Entrypoint produces (single quotes, backslash escapes, bare words).
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skipf("no sh: %v", err)
	}
	script := "set -- " + cmd + `; for a in "$@"; do printf '%s\0' "$a"; done`
	raw, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		t.Fatalf("sh could not parse %q: %v", cmd, err)
	}
	words := strings.Split(string(raw), "\x00")
	return words[:len(words)-1]
}

func decodeSpecArg(t *testing.T, arg string) map[string]any {
	t.Helper()
	raw, err := drivertest.DecodeSpecArg(arg)
	if err != nil {
		t.Fatalf("spec arg is not base64 zlib: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("spec arg is not JSON: %v", err)
	}
	return m
}

func TestEntrypointQuotesPython(t *testing.T) {
	for _, py := range []string{
		"python",
		"/opt/ray env/bin/python3",
		"/tmp/it's/python",
		`/tmp/$(touch pwned)/py;rm -rf x`,
		"/tmp/\"dq\"/`bt`/python",
		"/tmp/ünï/python",
		"py=3", // would be a variable assignment if left unquoted
	} {
		ep, err := Entrypoint(py, createSpec("a"))
		if err != nil {
			t.Fatalf("Entrypoint(%q): %v", py, err)
		}
		words := shellWords(t, ep)
		if len(words) != 4 {
			t.Fatalf("Entrypoint(%q) gave %d words: %q", py, len(words), words)
		}
		if words[0] != py || words[1] != "-c" {
			t.Errorf("python word = %q, want %q", words[0], py)
		}
		if !strings.HasPrefix(words[2], "import base64,zlib;exec(") {
			t.Errorf("bootstrap = %.60q", words[2])
		}
	}
	if _, err := Entrypoint("  ", createSpec("a")); err == nil {
		t.Error("empty python accepted")
	}
}

// base85Word is a word of base85.Alphabet only: no quote, no backslash.
var base85Word = regexp.MustCompile("^[" + regexp.QuoteMeta(base85.Alphabet) + "]+$")

func TestEntrypointKeepsUserTextInsideBase85(t *testing.T) {
	evil := []string{
		"vc-'; rm -rf / #",
		"ünïcödé-组-🚀",
		"$(id)`id`${HOME}",
		"a\"b\\c\nd\te",
		"'\"'\"'",
	}
	spec := createSpec(evil...)
	spec.Groups[0].Bundles = []map[string]float64{{"CPU": 1, "weird'$(res)": 0.5}}
	ep, err := Entrypoint("python", spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range evil {
		for _, frag := range []string{"rm -rf", "$(id)", "ünï", "🚀", "weird"} {
			if strings.Contains(n, frag) && strings.Contains(ep, frag) {
				t.Fatalf("user text %q leaked into the command line", frag)
			}
		}
	}
	if strings.Count(ep, "'") != 6 {
		t.Fatalf("want exactly three single-quoted words (python, bootstrap, spec), got %d quotes", strings.Count(ep, "'"))
	}
	words := shellWords(t, ep)
	if !base85Word.MatchString(words[3]) {
		t.Fatalf("spec word is not pure base85: %.80q", words[3])
	}
	m := decodeSpecArg(t, words[3])
	groups := m["groups"].([]any)
	for i, n := range evil {
		if got := groups[i].(map[string]any)["name"]; got != n {
			t.Errorf("group %d name round-trip = %q, want %q", i, got, n)
		}
	}
	// Everything between the quotes of the bootstrap is fixed code plus base85.
	code := words[2]
	const pre, post = `import base64,zlib;exec(zlib.decompress(base64.b85decode("`, `")))`
	if !strings.HasPrefix(code, pre) || !strings.HasSuffix(code, post) {
		t.Fatalf("unexpected bootstrap shape")
	}
	payload := strings.TrimSuffix(strings.TrimPrefix(code, pre), post)
	if !base85Word.MatchString(payload) {
		t.Fatal("driver payload is not pure base85")
	}
	packed, err := base85.Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatal(err)
	}
	src, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, driverSource) {
		t.Fatal("payload does not decompress to driver.py")
	}
}

func TestEntrypointValidates(t *testing.T) {
	if _, err := Entrypoint("python", deleteRequest("", "x")); err != nil {
		t.Fatal(err)
	}
	valid := func(mutate func(*contract.Request)) contract.Request {
		s := createSpec("x")
		mutate(&s)
		return s
	}
	bad := map[string]contract.Request{
		"unknown action": valid(func(s *contract.Request) { s.Action = "destroy" }),
		"no action":      valid(func(s *contract.Request) { s.Action = "" }),
		"no namespace":   valid(func(s *contract.Request) { s.Namespace = "" }),
		"no timeout":     valid(func(s *contract.Request) { s.ReadyTimeoutSeconds = 0 }),
		"no contract":    valid(func(s *contract.Request) { s.Contract = contract.Contract{} }),
		"no groups":      valid(func(s *contract.Request) { s.Groups = nil }),
		"empty name":     valid(func(s *contract.Request) { s.Groups[0].Name = " " }),
		"duplicate":      valid(func(s *contract.Request) { s.Groups = append(s.Groups, s.Groups[0]) }),
		"no bundles":     valid(func(s *contract.Request) { s.Groups[0].Bundles = nil }),
		"bad strategy":   valid(func(s *contract.Request) { s.Groups[0].Strategy = "SCATTER" }),
		"zero bundle":    valid(func(s *contract.Request) { s.Groups[0].Bundles = []map[string]float64{{"CPU": 0}} }),
		"negative":       valid(func(s *contract.Request) { s.Groups[0].Bundles = []map[string]float64{{"CPU": -1}} }),
		"port range":     valid(func(s *contract.Request) { s.Probe.PortRangeLow, s.Probe.PortRangeHigh = 2000, 2000 }),
		"no version":     valid(func(s *contract.Request) { s.Version = 0 }),
		"long run id":    valid(func(s *contract.Request) { s.RunID = strings.Repeat("r", 129) }),
	}
	for name, s := range bad {
		if _, err := Entrypoint("python", s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestEntrypointRunsBootstrap checks that the bootstrap really execs the
// driver: without ray installed, the driver fails at import and the
// bootstrap's python reports ModuleNotFoundError for "ray".
func TestEntrypointRunsBootstrap(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ep, err := Entrypoint(py, createSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", ep)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if strings.Contains(s, "SyntaxError") || strings.Contains(s, "zlib.error") || strings.Contains(s, "binascii") {
		t.Fatalf("bootstrap is broken: %s", s)
	}
	if !strings.Contains(s, "RAYTF_RESULT") && !strings.Contains(s, "No module named 'ray'") {
		t.Fatalf("unexpected output: %s", s)
	}
}

func TestDriverSourceCompiles(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	f := filepath.Join(t.TempDir(), "driver.py")
	if err := os.WriteFile(f, driverSource, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-m", "py_compile", f).CombinedOutput(); err != nil {
		t.Fatalf("driver.py does not compile: %v\n%s", err, out)
	}
}

const okResult = `{"ok": true, "action": "create", "error": null, "groups": [{"name": "vc-node0", "id": "ab12", "state": "CREATED", "strategy": "PACK", "created": true, "missing": false, "bundles": [{"index": 0, "resources": {"CPU": 1.0, "GPU": 1.0}, "node_id": "n1", "node_ip": "127.0.0.11", "gpu_id": 0, "nvlink_domain": "nvlink_domain_rackA", "topo_rank": 3, "port": 1523}, {"index": 1, "resources": {"CPU": 1.0}, "node_id": "n1", "node_ip": "127.0.0.11", "gpu_id": null, "nvlink_domain": "unknown", "topo_rank": -1, "port": 1524}]}], "removed": [], "missing": [], "ray_version": "2.60.0"}`

func TestParseResultOK(t *testing.T) {
	logs := "2026-12-02 13:27:09,463\tINFO job_manager.py:581 -- Runtime env is setting up.\n" +
		"Running entrypoint for job x: python -c '...' 'e30='\n" +
		"\x1b[36m(autoscaler +1s, ip=127.0.0.13)\x1b[0m Tip: use `ray status`\n" +
		`RAYTF_PROGRESS {"phase":"waiting","ready":1,"total":4}` + "\n\n" +
		"RAYTF_RESULT " + okResult + "\r\n" +
		"2026-12-02 13:27:12,000\tINFO worker.py -- shutting down\n"
	res, err := ParseResult(logs, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Action != contract.ActionCreate || res.RayVersion != "2.60.0" || len(res.Groups) != 1 {
		t.Fatalf("bad result: %+v", res)
	}
	g := res.Groups[0]
	if g.Name != "vc-node0" || !g.Created || g.State != "CREATED" || len(g.Bundles) != 2 {
		t.Fatalf("bad group: %+v", g)
	}
	b0, b1 := g.Bundles[0], g.Bundles[1]
	if b0.GPUID == nil || *b0.GPUID != 0 || b0.Port != 1523 || b0.TopoRank != 3 || b0.NVLinkDomain != "nvlink_domain_rackA" || b0.Resources["GPU"] != 1 {
		t.Fatalf("bad bundle 0: %+v", b0)
	}
	if b1.GPUID != nil || b1.TopoRank != -1 {
		t.Fatalf("bad bundle 1: %+v", b1)
	}
	if res.Err() != nil {
		t.Fatalf("Err() = %v", res.Err())
	}
}

func TestParseResultFailure(t *testing.T) {
	logs := `RAYTF_RESULT {"ok": false, "action": "create", "error": {"kind": "timeout", "message": "group \"vc-node1\" bundle 0 needs {\"GPU\": 1}"}, "groups": [], "removed": ["vc-node1"], "missing": [], "ray_version": "2.60.0"}`
	res, err := ParseResult(logs, "")
	if err != nil {
		t.Fatal(err)
	}
	var de *contract.DriverError
	if !errors.As(res.Err(), &de) || de.Kind != contract.KindTimeout || !strings.Contains(de.Message, `"vc-node1"`) {
		t.Fatalf("Err() = %#v", res.Err())
	}
	// ok=false without an error object still yields a DriverError.
	res, err = ParseResult(`RAYTF_RESULT {"ok": false, "action": "delete"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.As(res.Err(), &de) || de.Kind != contract.KindInternal {
		t.Fatalf("Err() = %#v", res.Err())
	}
}

func TestParseResultMissing(t *testing.T) {
	for _, logs := range []string{
		"",
		"Traceback (most recent call last):\nModuleNotFoundError: No module named 'ray'\n",
		"RAYTF_PROGRESS {\"phase\":\"started\"}\n",
		"RAYTF_RESULTS are great\n", // the marker needs its trailing space
	} {
		_, err := ParseResult(logs, "")
		if !errors.Is(err, ErrNoResult) {
			t.Errorf("ParseResult(%q) = %v, want ErrNoResult", logs, err)
		}
	}
}

func TestParseResultGarbled(t *testing.T) {
	for _, logs := range []string{
		`RAYTF_RESULT {"ok": true, "action": "cre`,
		"RAYTF_RESULT not json at all\n",
		"RAYTF_RESULT \n",
		`RAYTF_RESULT {"groups": []}`,
		`RAYTF_RESULT ["ok"]`,
		`RAYTF_RESULT {"ok": "yes", "action": "create"}`,
	} {
		_, err := ParseResult(logs, "")
		if err == nil || errors.Is(err, ErrNoResult) {
			t.Errorf("ParseResult(%q) = %v, want a malformed-result error", logs, err)
		}
	}
}

func TestParseResultLastLineWins(t *testing.T) {
	logs := `RAYTF_RESULT {"ok": false, "action": "create", "error": {"kind": "internal", "message": "first"}}` + "\n" +
		"noise\n" +
		"\x1b[32mINFO\x1b[0m prefix RAYTF_RESULT " + okResult + "\x1b[0m\n" +
		"trailing noise\n"
	res, err := ParseResult(logs, "")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("took the wrong line: %+v", res)
	}
	// ANSI codes wrapping the marker itself are stripped too.
	res, err = ParseResult("\x1b[1mRAYTF_RESULT\x1b[0m "+okResult, "")
	if err != nil || !res.OK {
		t.Fatalf("ANSI-wrapped marker: %v %+v", err, res)
	}
}

func TestParseProgress(t *testing.T) {
	logs := "RAYTF_PROGRESS {\"phase\":\"started\",\"action\":\"create\"}\n" +
		"junk RAYTF_PROGRESS {broken\n" +
		"\x1b[0mRAYTF_PROGRESS {\"phase\":\"waiting\",\"ready\":1,\"total\":4}\r\n" +
		"RAYTF_PROGRESS {\"ready\":2}\n" + // no phase: skipped
		"RAYTF_RESULT " + okResult + "\n"
	ps := ParseProgress(logs)
	if len(ps) != 2 {
		t.Fatalf("got %d progress entries: %+v", len(ps), ps)
	}
	if ps[0].Phase != "started" || ps[0].Raw["action"] != "create" {
		t.Errorf("entry 0 = %+v", ps[0])
	}
	if ps[1].Phase != "waiting" || ps[1].Ready != 1 || ps[1].Total != 4 {
		t.Errorf("entry 1 = %+v", ps[1])
	}
	if ParseProgress("nothing here") != nil {
		t.Error("progress from nothing")
	}
}

func FuzzParseResult(f *testing.F) {
	f.Add("RAYTF_RESULT " + okResult)
	f.Add("noise\nRAYTF_RESULT {\"ok\":false,\"action\":\"x\",\"error\":{\"kind\":\"timeout\"}}\n")
	f.Add("RAYTF_RESULT {\"ok\":true,\"action\":\"create\",\"groups\":[{\"bundles\":[{\"gpu_id\":1e400}]}]}")
	f.Add("\x1b[31mRAYTF_RESULT\x1b[0m \x1b]0;title\x07{}")
	f.Add("RAYTF_PROGRESS {\"phase\":\"x\"}\r\rRAYTF_RESULT \x00")
	f.Fuzz(func(t *testing.T, logs string) {
		res, err := ParseResult(logs, "")
		if err == nil && res == nil {
			t.Fatal("nil result without error")
		}
		if err == nil {
			_ = res.Err()
		}
		_ = ParseProgress(logs)
	})
}

// driverPackageDir is internal/driver, where the driverpy package is importable.
func driverPackageDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runWithFakeRay runs the joined driver as the job does, on arg, with the
// fake ray of the pytest suite (driverpy/tests/fake_ray.py) in place of ray.
func runWithFakeRay(t *testing.T, py, arg string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(py, "-c", "import fake_ray;fake_ray.install_from_env();"+bootstrapCode(), arg)
	cmd.Env = append(append(os.Environ(), "PYTHONPATH="+filepath.Join(driverPackageDir(t), "driverpy", "tests")), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestDriverReportsErrorsWithoutRay: the joined driver reports a bad request
// and a failed ray.init as a result Go reads and words. The driver's checks
// of each field are tested in driverpy/tests/test_shape.py.
func TestDriverReportsErrorsWithoutRay(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	run := func(t *testing.T, arg string, env ...string) (*contract.Result, int) {
		out, code := runWithFakeRay(t, py, arg, env...)
		res, err := ParseResult(out, "")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return res, code
	}
	valid := func(mutate func(m map[string]any)) string {
		raw, _ := json.Marshal(createSpec("a"))
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		mutate(m)
		out, _ := json.Marshal(m)
		return EncodeSpecArg(out)
	}
	for arg, want := range map[string]string{
		valid(func(m map[string]any) { m["version"] = contract.RequestVersion + 1 }):         "request version 2",
		valid(func(m map[string]any) { m["contract"].(map[string]any)["port_tries"] = 1.5 }): "contract.port_tries must be a JSON integer",
		EncodeSpecArg([]byte(`[1, 2]`)): "the request must be a JSON object",
		"%%%":                           "",
	} {
		res, code := run(t, arg)
		if code != 1 || res.OK || res.Error == nil || res.Error.Kind != contract.KindInvalid || !strings.Contains(res.Error.Message, want) {
			t.Errorf("%.40s: exit %d, result %+v %+v", arg, code, res, res.Error)
		}
	}
	// A valid request gets as far as ray.init, whose failure is reported too.
	del := deleteRequest("", "a")
	del.RunID = "r1"
	raw, _ := json.Marshal(del)
	res, code := run(t, EncodeSpecArg(raw), "RAYTF_FAKE_RAY_INIT_ERROR=no cluster here")
	if code != 1 || res.Error == nil || res.Error.Kind != contract.KindInternal || !strings.Contains(res.Error.Message, "no cluster here") ||
		res.RunID != "r1" || res.Action != contract.ActionDelete || res.RayVersion != "stub" {
		t.Errorf("ray.init failure: exit %d, %+v %+v", code, res, res.Error)
	}
}
