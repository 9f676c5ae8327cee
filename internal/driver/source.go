package driver

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// The driver's source is a Python package, one module per concern, so that
// pytest can import and test each one (driverpy/tests, with a fake ray).
// The job gets them joined into one script: python -c runs a single program.
//
//go:embed driverpy/*.py
var driverFiles embed.FS

// driverModules is the order the modules are joined in: each after every
// module it imports, so that a module's top-level code finds its names.
var driverModules = []string{
	"contract.py", "rayapi.py", "gcs_direct.py", "runstate.py", "shape.py", "nodes.py", "groups.py",
	"kv.py", "quotas.py", "record.py", "probe.py", "reservations.py", "wave.py", "actions.py", "connect.py", "main.py",
}

const futureImport = "from __future__ import annotations"

// packageImport is the one form a module imports a sibling in; the join drops
// it, since in one script every name is already global.
var packageImport = regexp.MustCompile(`^from \.([a-z_]+) import ([A-Za-z_][A-Za-z0-9_]*(?:, [A-Za-z_][A-Za-z0-9_]*)*)$`)

var driverSource = mustJoinDriver()

func mustJoinDriver() []byte {
	src, err := joinDriver(driverFiles, driverModules)
	if err != nil {
		panic(err) // the embedded files are fixed at build time; TestJoinDriver checks them
	}
	return src
}

// joinDriver concatenates the modules in order into one script: one
// __future__ import at its top, sibling imports, comment lines and comments
// after code dropped (no module holds a comment-like line inside a string). It fails on a
// module missing from order, a sibling imported before it is joined, or a
// sibling import in another form (which the join would leave in).
func joinDriver(fsys fs.FS, order []string) ([]byte, error) {
	present, err := fs.Glob(fsys, "driverpy/*.py")
	if err != nil {
		return nil, err
	}
	for _, p := range present {
		name := strings.TrimPrefix(p, "driverpy/")
		if name != "__init__.py" && !slices.Contains(order, name) {
			return nil, fmt.Errorf("driverpy/%s is not in the join order (driverModules)", name)
		}
	}
	var b strings.Builder
	b.WriteString("# terraform-provider-ray placement-group driver: internal/driver/driverpy/*.py joined (source.go).\n")
	b.WriteString(futureImport + "\n")
	joined := map[string]bool{}
	for _, name := range order {
		raw, err := fs.ReadFile(fsys, "driverpy/"+name)
		if err != nil {
			return nil, err
		}
		b.WriteString("\n\n# ---------------------------------------------------------------- driverpy/" + name + "\n")
		var doc docstrings
		for i, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
			// Comments and docstrings are for readers of driverpy/, not the job:
			// the entrypoint has a size limit (one argument of `sh -c`).
			if line == futureImport || strings.HasPrefix(strings.TrimSpace(line), "#") || doc.skip(line) {
				continue
			}
			if pass := doc.bodyFor(line); pass != "" {
				b.WriteString(pass + "\n")
			}
			if m := packageImport.FindStringSubmatch(line); m != nil {
				if !joined[m[1]+".py"] {
					return nil, fmt.Errorf("driverpy/%s:%d imports %s, which is joined after it", name, i+1, m[1])
				}
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(line), "from .") || strings.Contains(line, "import driverpy") || strings.Contains(line, "from driverpy") {
				return nil, fmt.Errorf("driverpy/%s:%d: import a sibling only as `from .module import a, b` on one line: %s", name, i+1, line)
			}
			line = dropTrailingComment(line)
			b.WriteString(line + "\n")
			doc.emitted(line)
		}
		if pass := doc.end(); pass != "" {
			b.WriteString(pass + "\n")
		}
		joined[name] = true
	}
	return []byte(b.String()), nil
}

// dropTrailingComment drops a comment after code ("code  # why"): the
// last "  # " outside any string (an even count of each quote before it).
func dropTrailingComment(line string) string {
	i := strings.LastIndex(line, trailingComment)
	if i <= 0 || strings.TrimSpace(line[:i]) == "" {
		return line
	}
	code := line[:i]
	if strings.Count(code, `"`)%2 != 0 || strings.Count(code, "'")%2 != 0 || strings.ContainsAny(line[i:], `"'`) {
		return line
	}
	return strings.TrimRight(code, " ")
}

const trailingComment = "  # "

// docstrings drops the docstrings of a module's functions and classes as
// joinDriver emits its lines: a line opening with triple quotes right after
// a line ending with a colon, through the line that closes them. A body left
// empty gets a pass.
type docstrings struct {
	last    string // the last line emitted, trimmed
	inside  bool   // within a docstring
	pending string // the indentation of a docstring dropped, until the body goes on
}

const tripleQuote = `"""`

// skip reports whether line belongs to a docstring.
func (d *docstrings) skip(line string) bool {
	t := strings.TrimSpace(line)
	if d.inside {
		d.inside = !strings.Contains(t, tripleQuote)
		return true
	}
	if !strings.HasPrefix(t, tripleQuote) || !strings.HasSuffix(d.last, ":") {
		return false
	}
	d.inside = !strings.Contains(t[len(tripleQuote):], tripleQuote)
	d.pending = line[:len(line)-len(strings.TrimLeft(line, " "))]
	d.last = ""
	return true
}

// bodyFor returns the pass a dropped docstring's block needs before line
// ("" when the block goes on).
func (d *docstrings) bodyFor(line string) string {
	if d.pending == "" || strings.TrimSpace(line) == "" {
		return ""
	}
	indent := d.pending
	d.pending = ""
	if strings.HasPrefix(line, indent) {
		return ""
	}
	return indent + "pass"
}

// end returns the pass a docstring dropped at the module's end leaves its
// block needing.
func (d *docstrings) end() string {
	if d.pending == "" {
		return ""
	}
	indent := d.pending
	d.pending = ""
	return indent + "pass"
}

func (d *docstrings) emitted(line string) {
	if t := strings.TrimSpace(line); t != "" {
		d.last = t
	}
}
