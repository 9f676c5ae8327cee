package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// troubleshootingGuide is the template of the troubleshooting guide.
const troubleshootingGuide = "templates/guides/troubleshooting.md.tmpl"

// summarySources are the packages whose errors a user reads: the provider,
// its resources and validators, and the issues of the spec's validation,
// the driver's contract, the record and the plan's checks.
var summarySources = []string{"internal/provider", "internal/resources", "internal/validators", "internal/clusterspec",
	"internal/contract", "internal/record", "internal/planning", "internal/drift", "internal/session"}

// internalSummaries are error summaries of the provider's own bugs: no
// configuration or cluster change fixes them, so the guide has no entry.
var internalSummaries = []string{
	"Unexpected provider data",
	"Placement group missing from the driver's report",
	"Cannot order bundles by topology",
}

// Every error summary the provider emits has an entry in the troubleshooting
// guide whose heading is the summary in backticks, so a user finds the fix
// by searching for the exact title Terraform printed.
func TestTroubleshootingGuideHasEveryErrorSummary(t *testing.T) {
	guide, err := os.ReadFile(troubleshootingGuide)
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^#{2,3} `([^`]+)`").FindAllStringSubmatch(string(guide), -1) {
		headings[m[1]] = true
	}
	summaries := errorSummaries(t)
	if len(summaries) < 50 {
		t.Fatalf("found only %d error summaries: the extraction is broken", len(summaries))
	}
	for _, s := range summaries {
		if !headings[s] && !slices.Contains(internalSummaries, s) {
			t.Errorf("error summary %q has no \"## `%s`\" entry in %s", s, s, troubleshootingGuide)
		}
	}
	for _, s := range internalSummaries {
		if !slices.Contains(summaries, s) {
			t.Errorf("internalSummaries lists %q, which no code emits any more", s)
		}
	}
}

// errorSummaries returns, sorted, the summaries of every error diagnostic
// in summarySources: the summary argument of AddError, AddAttributeError,
// diag.NewErrorDiagnostic and NewAttributeErrorDiagnostic; the Summary of a
// clusterspec.Issue literal that is not a warning and of a validators.StringCheck;
// and the summary argument of clusterspec's issue helper bad. A summary held in
// a variable is every string assigned to it in its function; one held in a
// constant is the constant's value. A summary built at run time fails the
// test: the guide could not be searched for it.
func errorSummaries(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	consts := map[string]string{}
	for _, dir := range summarySources {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range matches {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, spec := range g.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								if s, ok := stringLit(vs.Values[i]); ok {
									consts[n.Name] = s
								}
							}
						}
					}
				}
			}
		}
	}
	found := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			vars := assignedStrings(fn.Body)
			passed := passedOn(fn)
			resolve := func(e ast.Expr) {
				if s, ok := stringLit(e); ok {
					found[s] = true
					return
				}
				var name string
				switch e := e.(type) {
				case *ast.Ident:
					name = e.Name
				case *ast.SelectorExpr:
					name = e.Sel.Name
				}
				if s, ok := consts[name]; ok {
					found[s] = true
					return
				}
				if ss, ok := vars[name]; ok {
					for _, s := range ss {
						found[s] = true
					}
					return
				}
				if passed[name] || name == "Summary" { // a helper's parameter, or v.Summary of a StringCheck:
					return // the literals its callers pass are collected where they are written
				}
				t.Errorf("%s: an error summary the test cannot read (%T); make it a string literal or constant",
					fset.Position(e.Pos()), e)
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if arg := summaryArg(n); arg != nil {
						resolve(arg)
					}
				case *ast.CompositeLit:
					if s := compositeSummary(n); s != nil {
						resolve(s)
					}
				case *ast.ReturnStmt:
					// session.CheckRecord returns (summary, detail).
					if fn.Name.Name == "CheckRecord" && len(n.Results) == 2 {
						if s, ok := stringLit(n.Results[0]); ok && s != "" {
							found[s] = true
						}
					}
				}
				return true
			})
		}
	}
	out := make([]string, 0, len(found))
	for s := range found {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// summaryArg returns the summary argument of a call that adds an error, or nil.
func summaryArg(call *ast.CallExpr) ast.Expr {
	var name string
	switch fun := call.Fun.(type) {
	case *ast.SelectorExpr:
		name = fun.Sel.Name
	case *ast.Ident:
		name = fun.Name
	}
	index := map[string]int{"AddError": 0, "NewErrorDiagnostic": 0, "AddAttributeError": 1,
		"NewAttributeErrorDiagnostic": 1, "bad": 1}
	i, ok := index[name]
	if !ok || len(call.Args) <= i {
		return nil
	}
	return call.Args[i]
}

// compositeSummary returns the Summary of an Issue that is not a warning or
// of a StringCheck, or nil.
func compositeSummary(lit *ast.CompositeLit) ast.Expr {
	var typeName string
	switch ty := lit.Type.(type) {
	case *ast.Ident:
		typeName = ty.Name
	case *ast.SelectorExpr:
		typeName = ty.Sel.Name
	}
	if typeName != "" && typeName != "Issue" && typeName != "StringCheck" {
		return nil
	}
	var summary ast.Expr
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, _ := kv.Key.(*ast.Ident)
		switch {
		case key == nil:
		case key.Name == "Summary":
			summary = kv.Value
		case key.Name == "Warning":
			if v, ok := kv.Value.(*ast.Ident); ok && v.Name == "true" {
				return nil
			}
		}
	}
	return summary
}

// passedOn names the variables of fn that carry a summary made elsewhere:
// the parameters of fn and of its function literals, and the variables a
// multi-value call assigns (readVirtualCluster's summary, whose returns
// are collected).
func passedOn(fn *ast.FuncDecl) map[string]bool {
	out := map[string]bool{}
	params := func(ft *ast.FuncType) {
		for _, f := range ft.Params.List {
			for _, n := range f.Names {
				out[n.Name] = true
			}
		}
	}
	params(fn.Type)
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			params(n.Type)
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 && len(n.Lhs) > 1 {
				if _, ok := n.Rhs[0].(*ast.CallExpr); ok {
					for _, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok {
							out[id.Name] = true
						}
					}
				}
			}
		}
		return true
	})
	return out
}

// assignedStrings maps each variable of body to the string literals
// assigned to it.
func assignedStrings(body *ast.BlockStmt) map[string][]string {
	out := map[string][]string{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != len(as.Rhs) {
			return true
		}
		for i, l := range as.Lhs {
			if id, ok := l.(*ast.Ident); ok {
				if s, ok := stringLit(as.Rhs[i]); ok {
					out[id.Name] = append(out[id.Name], s)
				}
			}
		}
		return true
	})
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
