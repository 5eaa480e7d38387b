#!/usr/bin/env bash
# The main job: a short system-wide recording → gProfiler .col file + flamegraph.
#   scripts/main-job.sh [OUTPUT-DIR]      (default: ./gp-out; needs root for system-wide sampling)
# Environment: GP_BUILD_DIR (where the tools were built, default build/), GP_DURATION (seconds, 5).
#
# It records with gp-record when that tool has been built, and with Linux perf otherwise
# (perf record -a -g, then perf script | gp-import).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
out="${1:-gp-out}"
duration="${GP_DURATION:-5}"
export PATH="$bin:$PATH"
mkdir -p "$out"

for tool in gp-fold gp-flame; do
  if [ ! -x "$bin/$tool" ]; then
    echo "main-job.sh: error: '$bin/$tool' is missing: run scripts/build.sh first" >&2
    exit 1
  fi
done

if [ -x "$bin/gp-record" ]; then
  echo "main-job.sh: recording all CPUs for ${duration}s with gp-record" >&2
  gp-record -F 99 -d "$duration" -o "$out/recording.gpa"
  archive="$out/recording.gpa"
  if [ -x "$bin/gp-symbolize" ]; then  # gp-record keeps addresses; names come off-line
    gp-symbolize "$archive" -o "$out/symbolized.gpa"
    archive="$out/symbolized.gpa"
  fi
  gp-fold "$archive" > "$out/out.col"
else
  if [ ! -x "$bin/gp-import" ]; then
    echo "main-job.sh: error: neither gp-record nor gp-import is built in '$bin'" >&2
    exit 1
  fi
  echo "main-job.sh: recording all CPUs for ${duration}s with perf (gp-record is not built)" >&2
  perf record -F 99 -a -g -o "$out/perf.data" -- sleep "$duration"
  perf script -i "$out/perf.data" | gp-import | gp-fold > "$out/out.col"
fi

gp-flame "$out/out.col" > "$out/flame.html"
samples=$(awk 'NR > 1 { n += $NF } END { print n + 0 }' "$out/out.col")
echo "main-job.sh: wrote $out/out.col ($samples samples) and $out/flame.html"
