package driver

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestJoinDriver: the embedded modules join into one script that has a single
// __future__ import at its top and no import of a sibling left.
func TestJoinDriver(t *testing.T) {
	src := string(driverSource)
	if strings.Count(src, "\n"+futureImport+"\n") != 1 || !strings.Contains(strings.SplitN(src, "\n", 3)[1], futureImport) {
		t.Fatal("the joined driver must hold exactly one __future__ import, at its top")
	}
	for i, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "from .") {
			t.Errorf("joined driver line %d imports a sibling: %s", i+1, line)
		}
	}
	if !strings.HasSuffix(src, "if __name__ == \"__main__\":  # the job's python -c; not when tests import this module\n    main()\n") {
		t.Error("the joined driver no longer ends by running main()")
	}
}

// TestJoinDriverRefusesBadOrders: a module left out of the order, one joined
// before a sibling it imports, and a sibling import the join cannot drop.
func TestJoinDriverRefusesBadOrders(t *testing.T) {
	files := fstest.MapFS{
		"driverpy/a.py": {Data: []byte(futureImport + "\n\nA = 1\n")},
		"driverpy/b.py": {Data: []byte(futureImport + "\n\nfrom .a import A\n\nB = A\n")},
	}
	if src, err := joinDriver(files, []string{"a.py", "b.py"}); err != nil || strings.Contains(string(src), "from .a") {
		t.Fatalf("good order: %v\n%s", err, src)
	}
	for name, order := range map[string][]string{"left out": {"a.py"}, "import before join": {"b.py", "a.py"}} {
		if _, err := joinDriver(files, order); err == nil {
			t.Errorf("%s: joined", name)
		}
	}
	files["driverpy/b.py"] = &fstest.MapFile{Data: []byte("from .a import (\n    A,\n)\n")}
	if _, err := joinDriver(files, []string{"a.py", "b.py"}); err == nil {
		t.Error("a parenthesized sibling import was joined")
	}
}

// The join drops comment lines and docstrings; a block left with nothing
// but its docstring gets a pass, and strings that are not docstrings stay.
func TestJoinDriverDropsCommentsAndDocstrings(t *testing.T) {
	mod := `# a module comment
def f(x):
    """One line."""
    return x


class C:
    """Several
    lines."""

    def g(self):
        """Only a docstring."""


def h(
    y,
):
    """Opens.
    # not a comment
    Closes."""
    s = """kept: not a docstring"""
    return s


class Empty(Exception):
    """Only a docstring, at the end."""
`
	src, err := joinDriver(fstest.MapFS{"driverpy/m.py": {Data: []byte(mod)}}, []string{"m.py"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(src)
	for _, gone := range []string{"One line", "Several", "Only a docstring", "Opens", "# a module comment"} {
		if strings.Contains(got, gone) {
			t.Errorf("the join kept %q:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"    return x\n", "        pass\ndef h(", "    s = \"\"\"kept: not a docstring\"\"\"\n", "class Empty(Exception):\n    pass\n"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the join lacks %q:\n%s", kept, got)
		}
	}
}

// A comment after code goes; one inside a string, or after a string
// holding a quote of the other kind, stays.
func TestDropTrailingComment(t *testing.T) {
	for in, want := range map[string]string{
		`x = 1  # why`:                 `x = 1`,
		`    f(a, "b")  # why`:         `    f(a, "b")`,
		`s = "a  # b"`:                 `s = "a  # b"`,
		`s = "it's"  # why`:            `s = "it's"  # why`,
		`x = 1  # the "quoted" reason`: `x = 1  # the "quoted" reason`,
		`    # a comment line`:         `    # a comment line`,
	} {
		if got := dropTrailingComment(in); got != want {
			t.Errorf("dropTrailingComment(%q) = %q, want %q", in, got, want)
		}
	}
}
