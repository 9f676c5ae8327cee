#!/usr/bin/env bash
# `make reproducible-check` (CI's release step): one commit's release zip is byte-identical
# however and wherever it is built, so a lock file's hashes hold for every teammate. Builds HEAD's
# zip for this host (PLATFORMS to change) three times with scripts/release-archives.sh, from three
# clones of this repository in a temp dir:
#
#   A  a clean clone; GOFLAGS=-buildvcs=false; the caller's GOCACHE; umask 022
#   B  a dirty clone (README.md modified, an untracked Go file in the main package);
#      GOFLAGS=-buildvcs=true; an empty GOCACHE (REPRODUCIBLE_CHECK_CACHE=shared keeps the
#      caller's: seconds instead of a cold build); umask 002; TZ elsewhere; run from another cwd
#   C  a shallow clone (`git clone --depth 1`, as CI checks out); the caller's GOCACHE, so it
#      costs a link: the version, and so the zip's name and bytes, must not depend on history
#
# then compares their SHA256SUMS and zips byte for byte, and checks the version
# (scripts/version.sh) names the zip and the binary inside it and is compiled into it
# (-X main.version), and that the binary carries no VCS stamp and was built with -trimpath.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
t0=$SECONDS
fail() { echo "!! $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
commit="$(git -C "$root" rev-parse HEAD)"
version="$("$here/version.sh")"
platforms="${PLATFORMS:-$(go env GOOS)_$(go env GOARCH)}"
for c in a b; do
  git clone -q --no-checkout "$root" "$tmp/$c"
  git -C "$tmp/$c" checkout -q --detach "$commit"
done
# A shallow clone of one commit: a branch pointing at it in a bare copy, since --depth reads refs.
git clone -q --bare "$root" "$tmp/bare.git"
git -C "$tmp/bare.git" branch -f reproducible-check "$commit"
git clone -q --depth 1 --branch reproducible-check "file://$tmp/bare.git" "$tmp/c"
[ "$(git -C "$tmp/c" rev-list --count HEAD)" = 1 ] || fail "clone C is not shallow"
echo "dirty" >>"$tmp/b/README.md"
printf 'package main\n\nfunc init() { println("not committed") }\n' >"$tmp/b/zz_untracked.go"
out=$(cd "$tmp/a" && umask 022 && GOFLAGS=-buildvcs=false PLATFORMS="$platforms" scripts/release-archives.sh "$tmp/out-a" 2>&1) ||
  fail "build A: $out"
cache="$tmp/gocache" caches="an empty GOCACHE"
[ "${REPRODUCIBLE_CHECK_CACHE:-}" != shared ] || { cache="$(go env GOCACHE)"; caches="one GOCACHE"; }
mkdir -p "$tmp/elsewhere"
out=$(cd "$tmp/elsewhere" && umask 002 && TZ=Asia/Kolkata GOFLAGS=-buildvcs=true GOCACHE="$cache" PLATFORMS="$platforms" \
  "$tmp/b/scripts/release-archives.sh" "$tmp/out-b" 2>&1) || fail "build B: $out"
grep -q "uncommitted changes" <<<"$out" || fail "build B: no warning that the dirty tree's changes are left out: $out"
shallow="$("$tmp/c/scripts/version.sh")"
[ "$shallow" = "$version" ] || fail "a shallow clone names $commit $shallow, a full one $version"
out=$(cd "$tmp/c" && PLATFORMS="$platforms" scripts/release-archives.sh "$tmp/out-c" 2>&1) || fail "build C: $out"
sums="terraform-provider-ray_${version}_SHA256SUMS"
[ -f "$tmp/out-a/$sums" ] || fail "build A made no $sums: $(ls "$tmp/out-a")"
for c in b c; do
  cmp "$tmp/out-a/$sums" "$tmp/out-$c/$sums" >/dev/null ||
    fail "builds a and $c differ: $(diff "$tmp/out-a/$sums" "$tmp/out-$c/$sums")"
  for p in $platforms; do
    zip="terraform-provider-ray_${version}_${p}.zip"
    cmp "$tmp/out-a/$zip" "$tmp/out-$c/$zip" || fail "$zip differs between builds a and $c"
  done
done
# The host's binary: the version is compiled in, no VCS stamp, -trimpath.
zip="$tmp/out-a/terraform-provider-ray_${version}_$(go env GOOS)_$(go env GOARCH).zip"
if [ -f "$zip" ]; then
  bin="terraform-provider-ray_v$version"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' "$zip" "$bin" "$tmp/bin"
  grep -qaF "$version" "$tmp/bin/$bin" || fail "$bin does not hold its version $version (-X main.version)"
  info="$(go version -m "$tmp/bin/$bin")"
  ! grep -q 'vcs\.' <<<"$info" || fail "$bin carries a VCS stamp: $info"
  grep -q -- '-trimpath=true' <<<"$info" || fail "$bin was not built with -trimpath: $info"
fi
echo ">> reproducible: $version for $platforms, identical from a clean, a dirty and a shallow clone, -buildvcs=false/true, $caches ($(sed 's/ .*//' "$tmp/out-a/$sums" | head -1 | cut -c1-16)...) in $((SECONDS - t0))s" >&2
