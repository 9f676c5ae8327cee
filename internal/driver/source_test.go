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
