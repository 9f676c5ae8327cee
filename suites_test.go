package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test the compat suite of scripts/test.sh names exists: a renamed
// test would otherwise drop out of the Ray version cell without a sound
// (go test -run matches nothing and passes).
func TestCompatSuiteNamesExistingTests(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)\ncompat_tests=\((.*?)\n\)`).FindSubmatch(script)
	if list == nil {
		t.Fatal("scripts/test.sh has no compat_tests=( ... ) list")
	}
	names := strings.Fields(string(list[1]))
	if len(names) == 0 {
		t.Fatal("the compat_tests list is empty")
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, m := range decl.FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !defined[n] {
			t.Errorf("scripts/test.sh's compat suite names %s, which no test file defines", n)
		}
	}
}
