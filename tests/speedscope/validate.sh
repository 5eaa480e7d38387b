#!/usr/bin/env bash
# Validates a speedscope JSON file against speedscope's own schema (npm package `speedscope`,
# checked with ajv; see validate.mjs) and prints its stacks for comparison.
#   validate.sh FILE
# The npm packages are installed once with `npm ci` from the lock file into
# $GP_SPEEDSCOPE_TOOLS_DIR (default: $TMPDIR/gp-speedscope-tools); this needs the npm registry.
# Exit 77 (skip) when node or npm is not installed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="${GP_SPEEDSCOPE_TOOLS_DIR:-${TMPDIR:-/tmp}/gp-speedscope-tools}"

if [ $# -ne 1 ]; then
  echo "usage: validate.sh FILE" >&2
  exit 2
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "validate.sh: node or npm missing" >&2
  exit 77
fi
file="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"

mkdir -p "$tools"
# Reinstall when the lock file changed; a lock directory keeps parallel runs from racing.
if ! cmp -s "$here/package-lock.json" "$tools/package-lock.json" || [ ! -d "$tools/node_modules/ajv" ]; then
  waited=0
  while ! mkdir "$tools/.lock" 2>/dev/null; do
    # A lock older than the longest install is left over from a killed run.
    if [ $((waited += 1)) -gt 300 ]; then rmdir "$tools/.lock" 2>/dev/null || true; waited=0; fi
    sleep 1
  done
  trap 'rmdir "$tools/.lock"' EXIT
  if ! cmp -s "$here/package-lock.json" "$tools/package-lock.json" || [ ! -d "$tools/node_modules/ajv" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$tools/"
    (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  rmdir "$tools/.lock"
  trap - EXIT
fi
cp "$here/validate.mjs" "$tools/validate.mjs"
exec node "$tools/validate.mjs" "$file"
