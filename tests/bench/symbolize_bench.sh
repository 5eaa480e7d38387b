#!/usr/bin/env bash
# Symbolize+fold throughput: gp-record → gp-symbolize → gp-fold against perf record →
# perf script report stackcollapse, both recording the same system at the same time, and the
# peak RSS of each side.
#
#   tests/bench/symbolize_bench.sh [BUILD_DIR]
#   FREQ=5000 DURATION=110 REPEAT=3 tests/bench/symbolize_bench.sh build   # ≥ 1M samples on 2 CPUs
#   KEEP=/tmp/symbench tests/bench/symbolize_bench.sh build   # keep the recordings there; a second
#                                                              # run with the same KEEP reuses them
#   RECORD_ONLY=1 KEEP=/tmp/symbench tests/bench/symbolize_bench.sh build   # record, measure later
#   PERF_TEXT=1 ...   also time plain `perf script` (perf's symbolization without the Python fold)
#
# Workload (started here, plus whatever else the machine runs, since both recorders sample the
# whole system): one loop compiling a C++ source with g++ -O2 (cc1plus: a large binary, many
# unique addresses, only .dynsym) and one loop of gp-symbolize --lines over a small recording
# (a C++ binary with DWARF and deep inlining, libdw, libstdc++, libc — with libc6-dbg when
# installed). gp-record and perf record run side by side over the same seconds.
#
# Both sides symbolize the same binaries on this machine; the figures are CPU time (user+sys,
# what the machine does not share) and wall time, the median of REPEAT runs, and samples/s on
# CPU time. Needs root (system-wide sampling), perf, /usr/bin/time, g++. With the
# symbolize_double_session helper built (target of tests/unit/symbolize.cmake), it also prints
# gp-symbolize's peak RSS on one session twice as long as the recording.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
bin=$build/bin
here=$(cd "$(dirname "$0")/../.." && pwd)
freq=${FREQ:-5000}
duration=${DURATION:-110}
repeat=${REPEAT:-3}
for tool in gp-record gp-symbolize gp-fold; do
  [ -x "$bin/$tool" ] || { echo "symbolize_bench: error: missing '$bin/$tool' (build it first)" >&2; exit 1; }
done
for cmd in perf g++; do
  command -v "$cmd" >/dev/null || { echo "symbolize_bench: error: $cmd is not installed" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "symbolize_bench: error: /usr/bin/time is not installed (Debian: time)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "symbolize_bench: error: needs root for system-wide sampling" >&2; exit 1; }

if [ -n "${KEEP:-}" ]; then
  work=$KEEP
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/gp-symbolize-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

workload_pids=()
start_workload() {
  "$bin/gp-record" -q --sampler perf -F 999 -d 1 -o small.gpa
  (while :; do g++ -O2 -std=c++20 -c "$here/tests/fixtures/src/cpptempl.cpp" -o /dev/null; done) &
  workload_pids+=($!)
  (while :; do "$bin/gp-symbolize" -q --lines small.gpa -o /dev/null; done) &
  workload_pids+=($!)
}
stop_workload() {
  local p
  for p in "${workload_pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait "${workload_pids[@]}" 2>/dev/null || true
}

record() {
  echo "recording ${duration}s at ${freq} Hz with gp-record and perf record side by side..."
  trap 'stop_workload' INT TERM
  start_workload
  # nice -20: on a loaded machine the recorders must drain their rings in time, or they lose
  # samples (gp-record warns; perf counts them as lost) and the two sides differ.
  nice -n -20 "$bin/gp-record" -q --sampler perf -F "$freq" -d "$duration" -o rec.gpa &
  local gp_pid=$!
  nice -n -20 perf record -q -a -g -F "$freq" -o perf.data -- sleep "$duration" 2>/dev/null
  wait "$gp_pid"
  stop_workload
}
[ -s rec.gpa ] && [ -s perf.data ] || record
[ -z "${RECORD_ONLY:-}" ] || exit 0

# Runs a command under /usr/bin/time, appending "wall cpu rss_kb" to the file $1.
measure() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o time.out "$@"
  awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' time.out >> "$out"
}

rm -f t.*
for ((i = 0; i < repeat; i++)); do
  measure t.sym "$bin/gp-symbolize" --no-compress rec.gpa -o named.gpa 2> symbolize.err
  measure t.fold "$bin/gp-fold" -f folded named.gpa -o gp.folded
  measure t.col "$bin/gp-fold" named.gpa -o gp.col
  measure t.perf sh -c 'perf script report stackcollapse > perf.folded 2> /dev/null'
  [ -z "${PERF_TEXT:-}" ] || measure t.script sh -c 'perf script > /dev/null 2>&1'
done

median() { sort -n -k"$2" "$1" | awk -v k="$2" '{ v[NR] = $k } END { print v[int((NR + 1) / 2)] }'; }
peak() { sort -n -k3 "$1" | tail -1 | awk '{ print $3 }'; }
gp_samples=$(awk '{ n += $NF } END { print n + 0 }' gp.folded)
perf_samples=$(awk '{ n += $NF } END { print n + 0 }' perf.folded)
frames=$(sed -n 's/.* of \([0-9]*\) frames resolved.*/\1/p' symbolize.err)
resolved=$(sed -n 's/^[^0-9]*\([0-9]*\) of [0-9]* frames resolved.*/\1/p' symbolize.err)

row() {  # name samples cpu wall rss_kb [addresses]
  awk -v n="$1" -v s="$2" -v c="$3" -v w="$4" -v r="$5" -v a="${6:-}" 'BEGIN {
    printf "%-34s %9d %8.2f %8.2f %12.0f %12s %8d\n", n, s, c, w, (c > 0 ? s / c : 0),
           (a == "" ? "-" : sprintf("%.0f", a / c)), r / 1024 }'
}
sym_cpu=$(median t.sym 2) sym_wall=$(median t.sym 1)
fold_cpu=$(median t.fold 2) fold_wall=$(median t.fold 1)
gp_cpu=$(awk -v a="$sym_cpu" -v b="$fold_cpu" 'BEGIN { print a + b }')
gp_wall=$(awk -v a="$sym_wall" -v b="$fold_wall" 'BEGIN { print a + b }')
gp_rss=$(( $(peak t.sym) > $(peak t.fold) ? $(peak t.sym) : $(peak t.fold) ))
col_cpu=$(median t.col 2) col_wall=$(median t.col 1)
gpc_cpu=$(awk -v a="$sym_cpu" -v b="$col_cpu" 'BEGIN { print a + b }')
gpc_wall=$(awk -v a="$sym_wall" -v b="$col_wall" 'BEGIN { print a + b }')
gpc_rss=$(( $(peak t.sym) > $(peak t.col) ? $(peak t.sym) : $(peak t.col) ))
perf_cpu=$(median t.perf 2) perf_wall=$(median t.perf 1)

echo
echo "workload: ${duration}s at ${freq} Hz on $(nproc) CPUs; median of $repeat runs; load now: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gp: ${gp_samples} samples, ${frames:-?} unique addresses (${resolved:-?} resolved); perf: ${perf_samples} samples"
printf "%-34s %9s %8s %8s %12s %12s %8s\n" step samples cpu_s wall_s samples/cpu_s addrs/cpu_s rss_MiB
row "gp-symbolize" "$gp_samples" "$sym_cpu" "$sym_wall" "$(peak t.sym)" "${frames:-}"
row "gp-fold" "$gp_samples" "$fold_cpu" "$fold_wall" "$(peak t.fold)"
row "gp-fold (.col)" "$gp_samples" "$col_cpu" "$col_wall" "$(peak t.col)"
row "gp-symbolize + gp-fold -f folded" "$gp_samples" "$gp_cpu" "$gp_wall" "$gp_rss" "${frames:-}"
row "gp-symbolize + gp-fold (.col)" "$gp_samples" "$gpc_cpu" "$gpc_wall" "$gpc_rss" "${frames:-}"
row "perf script report stackcollapse" "$perf_samples" "$perf_cpu" "$perf_wall" "$(peak t.perf)"
[ ! -s t.script ] || row "perf script (text only)" "$perf_samples" "$(median t.script 2)" "$(median t.script 1)" "$(peak t.script)"
speedup() {  # label gp_cpu gp_wall
  awk -v l="$1" -v gs="$gp_samples" -v gc="$2" -v gw="$3" -v ps="$perf_samples" -v pc="$perf_cpu" -v pw="$perf_wall" 'BEGIN {
    if (gc > 0 && pc > 0 && gw > 0 && pw > 0)
      printf "speedup of gp-symbolize + gp-fold %s over perf stackcollapse (samples/s): %.1fx on CPU time, %.1fx on wall time (target: 10x)\n",
             l, (gs / gc) / (ps / pc), (gs / gw) / (ps / pw) }'
}
speedup "-f folded" "$gp_cpu" "$gp_wall"
speedup "(.col)" "$gpc_cpu" "$gpc_wall"
echo "peak RSS: gp-symbolize $(( $(peak t.sym) / 1024 )) MiB, gp-fold -f folded $(( $(peak t.fold) / 1024 )) MiB, gp-fold (.col) $(( $(peak t.col) / 1024 )) MiB; perf stackcollapse $(( $(peak t.perf) / 1024 )) MiB"
# Memory must not grow with the session's length: the same recording written as one session
# twice as long (twice the samples, stacks and locations; symbolize_double_session) against it.
if [ -x "$bin/symbolize_double_session" ]; then
  "$bin/symbolize_double_session" rec.gpa double.gpa
  rm -f t.sym1 t.sym2
  measure t.sym1 "$bin/gp-symbolize" -q --no-compress rec.gpa -o /dev/null
  measure t.sym2 "$bin/gp-symbolize" -q --no-compress double.gpa -o /dev/null
  echo "peak RSS of gp-symbolize: one session $(( $(peak t.sym1) / 1024 )) MiB, one session twice as long $(( $(peak t.sym2) / 1024 )) MiB (cpu $(median t.sym1 2) s, $(median t.sym2 2) s)"
fi
[ "$gp_samples" -ge 1000000 ] || echo "note: fewer than 1M samples; raise FREQ or DURATION for the issue's figure"
