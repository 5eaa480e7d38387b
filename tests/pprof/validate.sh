#!/usr/bin/env bash
# Validates a pprof file with the real pprof code from Debian's golang-github-google-pprof-dev,
# built offline (GOPATH mode, no module downloads):
#   validate.sh check FILE   parse + CheckValid with github.com/google/pprof/profile, print totals
#                            (see check.go for the output format)
#   validate.sh top FILE     run the `pprof` CLI: pprof -top -symbolize=none FILE
#   validate.sh top-default FILE   pprof -top FILE: its default symbolization, which demangles and
#                            simplifies names as a user's `pprof` shows them
# Binaries are built once into $GP_PPROF_TOOLS_DIR (default: $TMPDIR/gp-pprof-tools).
# Exit 77 (skip) when go or the pprof sources are not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gocode=/usr/share/gocode
tools="${GP_PPROF_TOOLS_DIR:-${TMPDIR:-/tmp}/gp-pprof-tools}"

if [ $# -ne 2 ] || { [ "$1" != check ] && [ "$1" != top ] && [ "$1" != top-default ]; }; then
  echo "usage: validate.sh check|top|top-default FILE" >&2
  exit 2
fi
if ! command -v go >/dev/null || [ ! -d "$gocode/src/github.com/google/pprof/profile" ]; then
  echo "validate.sh: go or golang-github-google-pprof-dev missing (scripts/install-deps.sh --test)" >&2
  exit 77
fi

mkdir -p "$tools"
export GO111MODULE=off GOPATH="$gocode" GOCACHE="$tools/go-cache" GOFLAGS=
# Builds to a temporary name first: parallel tests may build at the same time.
build() {  # build OUTPUT PACKAGE-OR-FILE
  [ -x "$tools/$1" ] && [ "$tools/$1" -nt "$2" ] 2>/dev/null && return 0
  [ -x "$tools/$1" ] && [ ! -e "$2" ] && return 0
  local tmp="$tools/.$1.$$"
  go build -o "$tmp" "$2"
  mv -f "$tmp" "$tools/$1"
}

case "$1" in
  check)
    build check "$here/check.go"
    exec "$tools/check" "$2"
    ;;
  top)
    build pprof github.com/google/pprof
    exec "$tools/pprof" -top -symbolize=none "$2"
    ;;
  top-default)
    build pprof github.com/google/pprof
    exec "$tools/pprof" -top "$2"
    ;;
esac
