package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function in internal/ or bench/ may be,
// counted from its func keyword to its closing brace.
const maxFuncLines = 80

// No function in internal/ or bench/ is longer than maxFuncLines, so each
// reads on one screen and a long one is split where its pieces have names of
// their own. Exempt: methods named Schema and functions whose name ends in
// Schema (their bodies are the schema literal, one declaration, not logic),
// and _test.go files (table-driven tests are mostly data).
func TestNoLongFunctions(t *testing.T) {
	fset := token.NewFileSet()
	for _, root := range []string{"internal", "bench"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil || strings.HasSuffix(fn.Name.Name, "Schema") {
					continue
				}
				lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				if lines > maxFuncLines {
					t.Errorf("%s:%s: %d lines (at most %d)", path, funcName(fn), lines, maxFuncLines)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return fmt.Sprintf("%s.%s", id.Name, fn.Name.Name)
	}
	return fn.Name.Name
}
