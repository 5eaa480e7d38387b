#!/usr/bin/env bash
# Symbolize+fold throughput: gp-record → gp-symbolize → gp-fold against perf record →
# perf script report stackcollapse, on the same workload (the symbolization fixtures, one busy
# process per CPU), and the peak RSS of each side.
#
#   tests/bench/symbolize_bench.sh [BUILD_DIR]
#   FREQ=20000 DURATION=30 tests/bench/symbolize_bench.sh build     # ≥ 1M samples on 2 CPUs
#
# Needs root (system-wide sampling), perf, /usr/bin/time. Prints one figure per line; the issue's
# target is gp ≥ 10× faster than perf's stackcollapse on ≥ 1M samples.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
bin=$build/bin
fixtures=$build/tests/fixtures/symbolize
freq=${FREQ:-20000}
duration=${DURATION:-30}
for tool in gp-record gp-symbolize gp-fold; do
  [ -x "$bin/$tool" ] || { echo "symbolize_bench: error: missing '$bin/$tool' (build it first)" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "symbolize_bench: error: perf is not installed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "symbolize_bench: error: /usr/bin/time is not installed (Debian: time)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "symbolize_bench: error: needs root for system-wide sampling" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gp-symbolize-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# One busy process per CPU, cycling through the fixtures (C, inlined C, C++ templates, shared lib).
start_workload() {
  local cpus progs=(sym_cpptempl sym_inline sym_useshared sym_fp) i
  cpus=$(nproc)
  pids=()
  for ((i = 0; i < cpus; i++)); do
    "$fixtures/${progs[i % ${#progs[@]}]}" "$((duration + 2))" &
    pids+=($!)
  done
}
stop_workload() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }

# Runs a command under /usr/bin/time; sets $secs and $rss_kb.
measure() {
  /usr/bin/time -f '%e %M' -o time.out "$@"
  read -r secs rss_kb < time.out
}

echo "workload: $(nproc) processes, ${duration}s, ${freq} Hz"

start_workload
"$bin/gp-record" -q --sampler perf -F "$freq" -d "$duration" -o rec.gpa
stop_workload
start_workload
perf record -q -a -g -F "$freq" -o perf.data -- sleep "$duration" 2>/dev/null
stop_workload

measure sh -c "'$bin/gp-symbolize' -q --no-compress rec.gpa -o named.gpa && '$bin/gp-fold' -f folded named.gpa > gp.folded"
gp_secs=$secs
measure sh -c "'$bin/gp-symbolize' --no-compress rec.gpa -o named2.gpa 2> symbolize.err"
gp_rss=$rss_kb
sym_secs=$secs
measure "$bin/gp-fold" -f folded named.gpa -o gp2.folded
gp_rss=$(( rss_kb > gp_rss ? rss_kb : gp_rss ))

measure sh -c "perf script -i perf.data report stackcollapse > perf.folded 2>/dev/null"
perf_secs=$secs
perf_rss=$rss_kb

gp_samples=$(awk '{n += $NF} END {print n + 0}' gp.folded)
perf_samples=$(awk '{n += $NF} END {print n + 0}' perf.folded)
frames=$(sed -n 's/.* of \([0-9]*\) frames resolved.*/\1/p' symbolize.err)

rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
echo "gp: samples $gp_samples, unique addresses ${frames:-?}"
echo "gp: symbolize+fold ${gp_secs}s ($(rate "$gp_samples" "$gp_secs") samples/s, $(rate "${frames:-0}" "$sym_secs") addresses/s in gp-symbolize)"
echo "gp: peak RSS $((gp_rss / 1024)) MiB"
echo "perf: samples $perf_samples"
echo "perf: script report stackcollapse ${perf_secs}s ($(rate "$perf_samples" "$perf_secs") samples/s)"
echo "perf: peak RSS $((perf_rss / 1024)) MiB"
awk -v g="$(rate "$gp_samples" "$gp_secs")" -v p="$(rate "$perf_samples" "$perf_secs")" \
  'BEGIN { if (p > 0) printf "speedup (samples/s): %.1fx\n", g / p }'
[ "$gp_samples" -ge 1000000 ] || echo "note: fewer than 1M samples; raise FREQ or DURATION for the issue's figure"
