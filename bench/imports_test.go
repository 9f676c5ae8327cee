package bench

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The bench measures the provider through the pure packages (clusterspec,
// contract, planning, ...), liveview and the driver, not through the framework layer: an adapter API widened
// for bench/ is how the contract got spread over four layers once.
func TestBenchDoesNotImportResources(t *testing.T) {
	const forbidden = "/internal/resources"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path == "out" { // git-ignored: builds, and trace's copy of an older source
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasSuffix(p, forbidden) {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
