#!/usr/bin/env bash
# Dead code, in two passes of deadcode (golang.org/x/tools/cmd/deadcode, pinned in
# tools/deadcode/go.mod and run by `go tool`, which builds it once into Go's cache):
#   1. with tests as roots: a function nothing reaches, not even a test, fails;
#   2. from the commands only (main, bench/cmd/raybench): a function only tests reach
#      fails unless scripts/deadcode-allow.txt lists it (test support, interface methods).
# Prints each finding; exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
deadcode() { go tool -modfile=tools/deadcode/go.mod deadcode "$@"; }
module=$(go list -m)
format='{{range .Funcs}}{{$.Path}}.{{.Name}}{{"\n"}}{{end}}'
strip() { sed "s|^$module/||; s|^$module\.|main.|"; }
status=0

unreached=$(deadcode -test -f "$format" ./... | strip)
if [ -n "$unreached" ]; then
  echo "deadcode: unreachable even from tests (delete it):" >&2
  sed 's/^/  /' <<<"$unreached" >&2
  status=1
fi

# Allow-list lines become anchored patterns: "pkg/..." any function of pkg and below.
patterns=$(grep -v '^\s*\(#\|$\)' scripts/deadcode-allow.txt |
  sed -E '/\/\.\.\.$/{s#/\.\.\.$##; s/[.]/\\./g; s#.*#^&(/[^.]*)?\\.#; b}; s/[.]/\\./g; s#.*#^&$#')
tests_only=$(deadcode -f "$format" ./... | strip | { grep -v -E -f <(echo "$patterns") || true; })
if [ -n "$tests_only" ]; then
  echo "deadcode: production functions that only tests reach (move them to a _test.go file," >&2
  echo "delete them, or list them in scripts/deadcode-allow.txt saying why):" >&2
  sed 's/^/  /' <<<"$tests_only" >&2
  status=1
fi
exit $status
