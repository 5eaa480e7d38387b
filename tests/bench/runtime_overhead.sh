#!/usr/bin/env bash
# Extra slowdown gp-runtime's adapters cost a busy target (issue 6's benchmark).
#
#   tests/bench/runtime_overhead.sh [-r ROUNDS] [-d SECONDS] [-F HZ]
#
# For each adapter that can run here (python: gp, pyspy; java: jfr, ap; ruby: rbspy; node:
# attach-maps (the cost of V8 writing its perf map; the sampling is gp-record's), inspector), a single-threaded target counts how many times it runs a fixed piece of work
# during a measured window and prints iterations per second. Rounds alternate between the target
# alone and the target under `gp-runtime -p PID -F HZ` (default 11, gProfiler's); the table shows
# the median rates and the slowdown. The window starts 2 s after the target (so JIT warm-up and
# the profiler's attach fall outside it... mostly: attach costs that last are part of the figure).
# Needs root for ptrace-based profilers; GP_BUILD_DIR points at the build (default ./build).
set -euo pipefail

rounds=3
seconds=8
freq=11
while getopts "r:d:F:h" opt; do
  case "$opt" in
    r) rounds=$OPTARG ;;
    d) seconds=$OPTARG ;;
    F) freq=$OPTARG ;;
    *) sed -n '2,12p' "$0"; exit 0 ;;
  esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${GP_BUILD_DIR:-$root/build}/bin"
gp_runtime="$bin/gp-runtime"
[ -x "$gp_runtime" ] || { echo "runtime_overhead: no $gp_runtime (set GP_BUILD_DIR)" >&2; exit 1; }
work=$(mktemp -d /tmp/gp-rt-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
window=$((seconds - 3))

cat > "$work/busy.py" <<PYEOF
import sys, time
def work():
    s = 0
    for i in range(2000):
        s += i * i
    return s
start = time.time(); n = 0
while time.time() < start + 2: work()
t0 = time.time()
while time.time() < t0 + $window:
    work(); n += 1
print(int(n / (time.time() - t0)))
PYEOF
cat > "$work/Busy.java" <<JEOF
public class Busy {
  static long work(long s) { for (int i = 0; i < 20000; i++) s += (long) i * i ^ (s >>> 3); return s; }
  public static void main(String[] a) {
    long s = 0, n = 0, start = System.nanoTime();
    while (System.nanoTime() < start + 2_000_000_000L) s = work(s);
    long t0 = System.nanoTime(), end = t0 + ${window}_000_000_000L;
    while (System.nanoTime() < end) { s = work(s); n++; }
    System.out.println((long) (n / ((System.nanoTime() - t0) / 1e9)) + (s == 42 ? 1 : 0));
  }
}
JEOF
cat > "$work/busy.rb" <<RBEOF
def work; s = 0; 2000.times { |i| s += i * i }; s; end
start = Time.now; work while Time.now < start + 2
t0 = Time.now; n = 0
while Time.now < t0 + $window; work; n += 1; end
puts (n / (Time.now - t0)).to_i
RBEOF
cat > "$work/busy.js" <<JSEOF
function work() { let s = 0; for (let i = 0; i < 20000; i++) s += i * i; return s; }
let start = Date.now(); while (Date.now() < start + 2000) work();
let t0 = Date.now(), n = 0;
while (Date.now() < t0 + $window * 1000) { work(); n++; }
console.log(Math.floor(n / ((Date.now() - t0) / 1000)));
JSEOF

# target_cmd RUNTIME: the command that runs the busy target.
target_cmd() {
  case "$1" in
    python) echo "/usr/bin/python3 $work/busy.py" ;;
    java) echo "java -Xmx128m $work/Busy.java" ;;
    ruby) echo "ruby $work/busy.rb" ;;
    node) echo "node $work/busy.js" ;;
  esac
}

# one_run RUNTIME MODE|-: iterations per second of the target, profiled unless MODE is '-'.
one_run() {
  local out="$work/rate" pid
  $(target_cmd "$1") > "$out" 2>/dev/null &
  pid=$!
  if [ "$2" != "-" ]; then
    sleep 0.3
    "$gp_runtime" -q -d "$seconds" -F "$freq" "--$3-mode" "$2" -p "$pid" -o /dev/null \
      --disable-application-metadata || true
  fi
  wait "$pid"
  cat "$out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }


printf '%-8s %-12s %14s %14s %9s\n' runtime adapter "alone it/s" "profiled it/s" slowdown
for spec in python:gp:python python:pyspy:python java:jfr:java java:ap:java ruby:rbspy:ruby node:attach-maps:nodejs node:inspector:nodejs; do
  IFS=: read -r rt mode opt <<<"$spec"
  case "$rt" in java) command -v java >/dev/null || continue ;; ruby) command -v ruby >/dev/null || continue ;; node) command -v node >/dev/null || continue ;; esac
  # Is the adapter available? Profile a short-lived target once and look at the result line.
  $(target_cmd "$rt") > /dev/null 2>&1 &
  probe_pid=$!
  sleep 1
  probe=$("$gp_runtime" -d 1 -F "$freq" "--$opt-mode" "$mode" -p "$probe_pid" -o /dev/null 2>&1 || true)
  kill "$probe_pid" 2>/dev/null; wait "$probe_pid" 2>/dev/null || true
  if [[ "$probe" == *"[Profiling skipped"* || "$probe" == *"not a "* ]]; then
    why=$(grep -o '\[Profiling skipped: [^]]*' <<<"$probe" | head -1 | sed 's/.*skipped: //')
    printf '%-8s %-12s %s\n' "$rt" "$mode" "(not available here: ${why:-$probe})" | cut -c1-110
    continue
  fi
  alone=() profiled=()
  for _ in $(seq 1 "$rounds"); do
    alone+=("$(one_run "$rt" - "$opt")")
    profiled+=("$(one_run "$rt" "$mode" "$opt")")
  done
  a=$(printf '%s\n' "${alone[@]}" | median)
  p=$(printf '%s\n' "${profiled[@]}" | median)
  slow=$(awk -v a="$a" -v p="$p" 'BEGIN { if (a > 0) printf "%.1f%%", (1 - p / a) * 100; else print "n/a" }')
  printf '%-8s %-12s %14s %14s %9s\n' "$rt" "$mode" "$a" "$p" "$slow"
done
echo "(-F $freq, ${window} s measured per run, median of $rounds alternating rounds; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
