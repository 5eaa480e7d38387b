#!/usr/bin/env bash
# Overhead of system-wide samplers on a CPU-bound workload (issue 5's benchmark).
#
#   tests/bench/record_overhead.sh [-r ROUNDS] [-w SECONDS] [-f "99 999 4999"]
#   tests/bench/record_overhead.sh -l MINUTES      only the long run: RSS over time
#
# A workload keeps every core busy with a fixed amount of work and times itself. For each
# frequency and each sampler, rounds alternate between an unprofiled baseline and a profiled
# run; the table shows the median slowdown. Samplers:
#   empty     bpftrace 'profile:hz:N {}' — an empty BPF program on the same timer: the floor
#             (what the timer interrupt alone costs)
#   gp-record gp-record -F N (BPF sampler, in-kernel aggregation)
#   perf      perf record -a -g -F N
#   bpftrace  bpftrace 'profile:hz:N { @[kstack, ustack] = count(); }'
# It also prints gp-record's own CPU time and peak RSS, and archive bytes per sample against
# perf.data. Needs root, perf (linux-perf), bpftrace; GP_BUILD_DIR points at the build.
# With -l, gp-record samples at 99 Hz for MINUTES while a steady workload (one long-lived
# process per core, at nice 19) runs, and its RSS is printed every 30 s: it must stay flat.
set -euo pipefail

rounds=3
work_seconds=2
freqs="99 999 4999"
long_minutes=0
while getopts "r:w:f:l:h" opt; do
  case "$opt" in
    r) rounds=$OPTARG ;;
    w) work_seconds=$OPTARG ;;
    f) freqs=$OPTARG ;;
    l) long_minutes=$OPTARG ;;
    *) sed -n '2,19p' "$0"; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
[ "$(id -u)" -eq 0 ] || { echo "record_overhead.sh: error: must run as root" >&2; exit 77; }
for cmd in perf bpftrace cc; do
  command -v "$cmd" >/dev/null || { echo "record_overhead.sh: error: missing '$cmd' (scripts/install-deps.sh --test)" >&2; exit 77; }
done
[ -x "$bin/gp-record" ] || { echo "record_overhead.sh: error: '$bin/gp-record' is not built" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ncpu=$(nproc)

# The workload: one process per core, each doing the same fixed number of iterations; prints
# the wall time until all are done (nanosecond clock, seconds as a float).
cat > "$tmp/work.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
__attribute__((noinline)) static unsigned long leaf(unsigned long x) { return x * 2654435761u + 1; }
__attribute__((noinline)) static unsigned long mid(unsigned long n) { unsigned long x = 1; for (unsigned long i = 0; i < n; i++) x = leaf(x ^ i); return x; }
int main(int argc, char **argv) {
  int procs = atoi(argv[1]); unsigned long iters = strtoul(argv[2], 0, 10);
  double t0 = now();
  for (int p = 0; p < procs; p++) if (fork() == 0) { volatile unsigned long r = mid(iters); (void)r; _exit(0); }
  while (wait(NULL) > 0) {}
  printf("%.4f\n", now() - t0);
  return 0;
}
C
cc -O2 -fno-omit-frame-pointer -o "$tmp/work" "$tmp/work.c"

# Calibrate the iteration count to about work_seconds of one core.
iters=20000000
t=$("$tmp/work" 1 "$iters")
iters=$(awk -v i="$iters" -v t="$t" -v w="$work_seconds" 'BEGIN { printf "%d", i * w / t }')

# The long run: RSS (KiB) of gp-record every 30 s under a steady workload.
long_run() {
  local minutes=$1 pid work_pids=() rss first="" max=0
  for ((c = 0; c < ncpu; c++)); do nice -n 19 "$tmp/work" 1 $((iters * 1000)) >/dev/null & work_pids+=($!); done
  "$bin/gp-record" -q -F 99 -d $((minutes * 60 + 5)) -o "$tmp/long.gpa" &
  pid=$!
  printf 'long run: gp-record -F 99 for %d min, %d busy processes at nice 19\n%8s %10s %8s\n' "$minutes" "$ncpu" "t(s)" "RSS(KiB)" "CPU-s"
  for ((t = 30; t <= minutes * 60; t += 30)); do
    sleep 30
    rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
    printf '%8d %10d %8.2f\n' "$t" "$rss" "$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat")"
    [ -n "$first" ] || first=$rss
    [ "$rss" -gt "$max" ] && max=$rss
  done
  kill -INT "$pid"; wait "$pid" || true
  # work forks its worker: stop the children too, not only the parents.
  for p in "${work_pids[@]}"; do pkill -P "$p" 2>/dev/null || true; done
  kill "${work_pids[@]}" 2>/dev/null; wait 2>/dev/null || true
  printf 'RSS at 30 s: %d KiB, max: %d KiB, growth %+d KiB\n' "$first" "$max" $((max - first))
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# Starts sampler $1 at frequency $2 in the background; sets sampler_pid.
start_sampler() {
  local hz=$2
  case "$1" in
    empty) bpftrace -e "profile:hz:$hz { }" >/dev/null 2>&1 & ;;
    gp-record) "$bin/gp-record" -F "$hz" -o "$tmp/rec.gpa" 2>"$tmp/gp.err" & ;;
    perf) perf record -q -a -g -F "$hz" -o "$tmp/perf.data" 2>/dev/null & ;;
    bpftrace) bpftrace -e "profile:hz:$hz { @[kstack, ustack] = count(); }" >/dev/null 2>&1 & ;;
  esac
  sampler_pid=$!
  sleep 1.5  # let it load and attach
}

stop_sampler() {
  kill -INT "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
} 2>/dev/null

# gp-record's CPU seconds (utime+stime) and peak RSS (KiB) while it runs for `secs` at `hz`.
measure_gp_record() {
  local hz=$1 secs=$2 ticks
  "$bin/gp-record" -q -F "$hz" -o "$tmp/self.gpa" &
  local pid=$!
  "$tmp/work" "$ncpu" $((iters * secs / work_seconds)) >/dev/null
  ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  kill -INT "$pid"; wait "$pid" || true
  cpu_s=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", t / hz }')
}

samples_in_archive() {  # sample count from the recorder's own summary line
  grep -oE 'recorded [0-9]+ samples' "$tmp/gp.err" | awk '{ s += $2 } END { print s + 0 }'
}

if [ "$long_minutes" -gt 0 ]; then long_run "$long_minutes"; exit 0; fi

printf 'workload: %d processes x %s iterations (~%ss each); %d rounds per cell; medians\n' "$ncpu" "$iters" "$work_seconds" "$rounds"
printf '%-6s %-10s %10s %10s %9s\n' "Hz" "sampler" "base(s)" "prof(s)" "slowdown"
for hz in $freqs; do
  for s in empty gp-record perf bpftrace; do
    : >"$tmp/base"; : >"$tmp/prof"
    for ((r = 0; r < rounds; r++)); do
      "$tmp/work" "$ncpu" "$iters" >>"$tmp/base"
      start_sampler "$s" "$hz"
      "$tmp/work" "$ncpu" "$iters" >>"$tmp/prof"
      stop_sampler
    done
    b=$(median <"$tmp/base"); p=$(median <"$tmp/prof")
    printf '%-6s %-10s %10.3f %10.3f %8.2f%%\n' "$hz" "$s" "$b" "$p" "$(awk -v b="$b" -v p="$p" 'BEGIN { print (p / b - 1) * 100 }')"
    if [ "$s" = gp-record ]; then gp_bytes=$(stat -c %s "$tmp/rec.gpa"); gp_samples=$(samples_in_archive); fi
    if [ "$s" = perf ]; then
      perf_bytes=$(stat -c %s "$tmp/perf.data")
      perf_samples=$(perf script -i "$tmp/perf.data" -F pid 2>/dev/null | wc -l)
    fi
  done
  printf '%-6s archive: gp-record %d B / %d samples = %.1f B/sample; perf.data %d B / %d samples = %.1f B/sample\n' \
    "$hz" "$gp_bytes" "$gp_samples" "$(awk -v a="$gp_bytes" -v n="$gp_samples" 'BEGIN { print n ? a / n : 0 }')" \
    "$perf_bytes" "$perf_samples" "$(awk -v a="$perf_bytes" -v n="$perf_samples" 'BEGIN { print n ? a / n : 0 }')"
  measure_gp_record "$hz" 10
  printf '%-6s gp-record itself over 10 s: %s CPU-s (%.3f%% of one core), peak RSS %s KiB\n' \
    "$hz" "$cpu_s" "$(awk -v c="$cpu_s" 'BEGIN { print c / 10 * 100 }')" "$rss"
done
