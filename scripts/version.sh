#!/usr/bin/env bash
# Prints the provider's version, the one place it is computed: `make install`, the release
# archives (scripts/release-archives.sh), scripts/mirror-check.sh and GoReleaser's snapshot
# (scripts/release-check.sh passes it as RAY_TF_VERSION) read it here. From the commit (HEAD),
# never from the working tree, so every machine gets the same version for one commit:
#
#   HEAD tagged vX.Y.Z    X.Y.Z, the release (the tag must be CHANGELOG.md's newest version)
#   any other commit      <base>-dev.<time>+<sha>, a semver pre-release, so that a lock file
#                         never takes a build of some commit for the release of the same name:
#                         base = CHANGELOG.md's newest `## X.Y.Z` heading when it is
#                         `(Unreleased)` (the version under way: 0.1.0-dev.T sorts before 0.1.0),
#                         else that version bumped in patch (after a release: 0.1.1-dev.T);
#                         time = the commit's committer time, UTC, YYYYMMDDHHMMSS (later commits
#                         sort after earlier ones); sha = the commit's first 12 hex digits.
#
# Nothing here reads history beyond HEAD, so a shallow clone (`git clone --depth 1`, CI's default
# checkout) gives the version a full clone gives; a count of commits would not.
#
# Terraform and OpenTofu match pre-releases only by an exact version constraint (`~> 0.1` never
# selects 0.1.0-dev.T): README "Use it in your infra repo".
#
#   scripts/version.sh              the version of HEAD
#   scripts/version.sh --changelog  CHANGELOG.md's newest version (the release workflow's tag check)
set -euo pipefail
cd "$(dirname "$0")/.."
heading="$(git show HEAD:CHANGELOG.md | sed -nE 's/^## ([0-9]+\.[0-9]+\.[0-9]+)( .*)?$/\1\2/p' | head -1)"
changelog="${heading%% *}"
[ -n "$changelog" ] || { echo "!! CHANGELOG.md (at HEAD) has no '## X.Y.Z' heading" >&2; exit 1; }
if [ "${1:-}" = --changelog ]; then
  echo "$changelog"
  exit 0
fi
tag="$(git tag --points-at HEAD | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1 || true)"
if [ -n "$tag" ]; then
  [ "${tag#v}" = "$changelog" ] || { echo "!! HEAD is tagged $tag, but CHANGELOG.md's newest version is $changelog" >&2; exit 1; }
  echo "${tag#v}"
  exit 0
fi
if [[ "$heading" == *"(Unreleased)"* ]]; then
  base="$changelog"
else
  IFS=. read -r major minor patch <<<"$changelog"
  base="$major.$minor.$((patch + 1))"
fi
when="$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)"
[[ "$when" =~ ^[0-9]{14}$ ]] || { echo "!! cannot read HEAD's commit time: '$when'" >&2; exit 1; }
sha="$(git rev-parse HEAD)"
echo "$base-dev.$when+${sha:0:12}"
