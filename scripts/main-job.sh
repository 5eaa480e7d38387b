#!/usr/bin/env bash
# The main job: one system-wide profile of this host → gProfiler .col file + flame graph, with a
# short bundled demo workload running meanwhile, so that even an idle machine shows what gp is for.
#   scripts/main-job.sh [OUTPUT-DIR]      (default: ./gp-out; needs root for system-wide sampling)
# Environment: GP_BUILD_DIR (where the tools were built, default build/), GP_DURATION (seconds, 5),
# GP_DEMO (1; 0 records the host alone).
#
# The demo (scripts/demo/): xz compressing generated data (Debian's xz, built without frame
# pointers: its stacks are whole only because gp-record unwinds with .eh_frame tables), a Python
# program with a known call chain (/usr/bin/python3, named by gp's Python sampler), and a Node
# program where node is installed (its JIT frames named from its perf map).
#
# It records with gp-profile (gp-record + the runtime profilers that apply, merged, symbolized,
# folded and rendered). Without gp-profile built, it records with Linux perf
# (perf record -a -g, then perf script | gp-import).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
out="${1:-gp-out}"
duration="${GP_DURATION:-5}"
demo="${GP_DEMO:-1}"
export PATH="$bin:$PATH"
mkdir -p "$out"

for tool in gp-fold gp-flame; do
  if [ ! -x "$bin/$tool" ]; then
    echo "main-job.sh: error: '$bin/$tool' is missing: run scripts/build.sh first" >&2
    exit 1
  fi
done

demo_pids=()
work=$(mktemp -d /tmp/gp-main-job.XXXXXX)
cleanup() {
  local pid
  for pid in "${demo_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Each demo program runs in its own process group (killed as a group at the end), for longer than
# the recording: it starts before the recorder, so that the runtime profilers find it.
start_demo() {
  local seconds=$((duration + 120))
  seq 1 3000000 >"$work/data"
  local xz=xz
  command -v xz >/dev/null || xz=gzip
  setsid bash -c 'while :; do "$0" -6 -c "$1" >/dev/null; done' "$xz" "$work/data" &
  demo_pids+=($!)
  local names="$xz"
  if [ -x /usr/bin/python3 ]; then
    setsid /usr/bin/python3 "$root/scripts/demo/busy.py" "$seconds" &
    demo_pids+=($!)
    names+=", python3"
  fi
  if command -v node >/dev/null; then
    setsid node --perf-basic-prof "$root/scripts/demo/busy.js" "$seconds" &
    demo_pids+=($!)
    names+=", node"
  fi
  echo "main-job.sh: demo workload running ($names; GP_DEMO=0 records the host alone)" >&2
}

[ "$demo" = 0 ] || start_demo

if [ -x "$bin/gp-profile" ] && [ -x "$bin/gp-record" ]; then
  echo "main-job.sh: profiling all CPUs for ${duration}s with gp-profile (gp-record and runtime profilers)" >&2
  gp-profile -d "$duration" -f 99 -o "$out/gp-profile"
  cp "$out/gp-profile/last_profile.col" "$out/out.col"
  cp "$out/gp-profile/last_flamegraph.html" "$out/flame.html"
else
  if [ ! -x "$bin/gp-import" ]; then
    echo "main-job.sh: error: neither gp-profile nor gp-import is built in '$bin'" >&2
    exit 1
  fi
  echo "main-job.sh: recording all CPUs for ${duration}s with perf (gp-profile is not built)" >&2
  perf record -F 99 -a -g -o "$out/perf.data" -- sleep "$duration"
  perf script -i "$out/perf.data" | gp-import | gp-fold > "$out/out.col"
  gp-flame "$out/out.col" > "$out/flame.html"
fi

samples=$(awk 'NR > 1 { n += $NF } END { print n + 0 }' "$out/out.col")
echo "main-job.sh: wrote $out/out.col ($samples samples) and $out/flame.html (open it in a browser)"
echo "main-job.sh: hottest functions:"
gp-fold --top 10 "$out/out.col"
