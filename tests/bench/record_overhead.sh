#!/usr/bin/env bash
# Overhead of system-wide samplers on a CPU-bound workload (issue 5's benchmark).
#
#   tests/bench/record_overhead.sh [-r ROUNDS] [-w SECONDS] [-f "99 999 4999"] [-c SECONDS] [-k WINDOWS]
#                                  [-s WINDOWS] [-S SECONDS] [-p "SAMPLERS"] [-P]
#   tests/bench/record_overhead.sh -l MINUTES      only the long run: RSS over time
#   tests/bench/record_overhead.sh -L MINUTES      the long run with process churn
#
# A workload keeps every core busy with a fixed amount of work and times itself. For each
# frequency and each sampler, rounds alternate between an unprofiled baseline and a profiled
# run; the table shows the median of the per-round slowdowns (profiled / the baseline just
# before), of its wall time (slowdown) and of its processes' CPU time (work CPU: the kernel
# charges the sampling interrupts to the task they interrupt). Samplers:
#   empty     bpftrace 'profile:hz:N {}' — an empty BPF program on the same timer: the floor
#             (what the timer interrupt alone costs)
#   gp-record gp-record -F N (BPF sampler, in-kernel aggregation, gp's own user stack walk)
#   gp-kwalk  gp-record -F N --stack-walker kernel (the kernel walks user stacks, as on kernels
#             before 5.17)
#   perf      perf record -a -g -F N
#   bpftrace  bpftrace 'profile:hz:N { @[kstack, ustack] = count(); }'
#   walk      bpftrace 'profile:hz:N { @k = kstack; @u = ustack; }' — the kernel's stack walks
#             alone (each stack taken into a stack map, one map slot written): what a sampler
#             that leaves the walks to the kernel pays at least, above the floor
#
# Wall-time slowdowns below ~1% drown in this VM's noise, so more runs per cell (-k WINDOWS of
# -c SECONDS each, default 5 of 10; each column shows the median of the windows) measure each
# sampler's cost directly while the workload runs. Every window (here and in the probe) lasts at
# least two of gp-record's flush intervals (10 s at 99 Hz, as gp-record -v says): a shorter one
# could fall between two flushes and show none of their cost.
#   own CPU   the sampler process's own CPU time (schedstat: nanoseconds, all threads)
#   BPF ns/run  kernel.bpf_stats_enabled: run time per program run of the sampler's BPF programs
#   above floor = (BPF run time - runs x the empty program's ns/run) + own CPU, as a share of
#             all CPUs — for perf only its own CPU is measurable this way
# The work CPU column (median ± half the range of the rounds) holds perf's kernel-side cost too,
# but on this VM its rounds spread by a few percent, more than the samplers differ, so it is
# shown with its spread and no ratio is drawn from it; the probe below measures that cost.
# The stolen-time probe (stolen_time_probe.c) measures what each sample costs the CPU it
# interrupts, perf's callchain walk and record output included: a thread pinned to each CPU
# reads the clock in a loop, 32 frames deep, and logs every gap between two reads. The samplers
# of -p SAMPLERS (default "empty gp-record perf bpftrace") run at once, at frequencies 2 Hz apart
# around N (96, 98, 100 and 102 Hz for 99), so that all of them meet the same conditions: in
# this VM the timer interrupt alone costs ~20 us, and that shifts by microseconds from one
# minute to the next. Each sampler's timer fires at its own phase, so the gaps that start at that
# phase are its samples, and their median length is the cost of one of its samples, timer
# included. Above the empty program's in the same window, times N on every CPU, plus the
# sampler's own CPU, it is the sampler's cost above the floor as a share of all CPUs. The probe
# measures after a 2-s warm-up and reads the samplers' CPU itself, so that its own start (a new
# process, which gp-record snapshots) stays out of the window; that start's cost is printed on
# its own line, as what a new process costs each sampler. At high
# frequencies some gaps of the others fall in a sampler's phase window (about 7% per other
# sampler at 4999 Hz), which pulls the samplers' figures together: their differences are, if
# anything, understated. -s WINDOWS windows (default 9) of -S SECONDS each (default 5) rotate
# the frequencies between the samplers; the table shows medians over the windows, and a sign
# test counts the windows in which gp-record cost less than perf and than bpftrace. -P runs
# only the probe.
# It also prints gp-record's steady-state CPU (after start-up) and peak RSS, and archive bytes
# per sample against perf.data. Needs root, perf (linux-perf), bpftrace, bpftool; GP_BUILD_DIR
# points at the build.
# With -l, gp-record samples at 99 Hz for MINUTES while a steady workload (one long-lived
# process per core, at nice 19) runs, and its RSS is printed every 30 s: it must stay flat.
# -L adds churn: a short-lived worker process (and a shell) started about twice a second, as on
# a host running cron jobs and scripts.
set -euo pipefail

rounds=5
work_seconds=2
freqs="99 999 4999"
long_minutes=0
churn=0
cost_seconds=10
cost_windows=5
probe_windows=9
probe_seconds=5
probe_warmup=2  # seconds the probe runs before it measures
probe_only=0
probe_samplers="empty gp-record perf bpftrace"
while getopts "r:w:f:l:L:c:k:s:S:p:Ph" opt; do
  case "$opt" in
    r) rounds=$OPTARG ;;
    w) work_seconds=$OPTARG ;;
    f) freqs=$OPTARG ;;
    l) long_minutes=$OPTARG ;;
    L) long_minutes=$OPTARG; churn=1 ;;
    c) cost_seconds=$OPTARG ;;
    k) cost_windows=$OPTARG ;;
    s) probe_windows=$OPTARG ;;
    S) probe_seconds=$OPTARG ;;
    p) probe_samplers=$OPTARG ;;
    P) probe_only=1 ;;
    *) sed -n '2,57p' "$0"; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
[ "$(id -u)" -eq 0 ] || { echo "record_overhead.sh: error: must run as root" >&2; exit 77; }
for cmd in perf bpftrace bpftool cc; do
  command -v "$cmd" >/dev/null || { echo "record_overhead.sh: error: missing '$cmd' (scripts/install-deps.sh --test)" >&2; exit 77; }
done
for s in $probe_samplers; do
  [[ " empty gp-record gp-kwalk perf bpftrace walk " == *" $s "* ]] ||
    { echo "record_overhead.sh: error: -p: unknown sampler '$s'" >&2; exit 2; }
done
[[ " $probe_samplers " == *" empty "* ]] || { echo "record_overhead.sh: error: -p needs 'empty' (the floor)" >&2; exit 2; }
[ -x "$bin/gp-record" ] || { echo "record_overhead.sh: error: '$bin/gp-record' is not built" >&2; exit 1; }

tmp=$(mktemp -d)
ncpu=$(nproc)
bench=record_overhead.sh
# shellcheck source=sampler_lib.sh
. "$root/tests/bench/sampler_lib.sh"  # sampler start/stop, cleanup, bpf_stats and CPU readers
install_cleanup

# The workload: one process per core, each doing the same fixed number of iterations; prints
# the wall time until all are done and the CPU time its processes used (seconds). The kernel
# charges interrupt handling to the interrupted task (no IRQ time accounting on this kernel), so
# the CPU time grows by what sampling costs in the kernel: the timer, the BPF program, perf's own
# callchain walk and record output. That makes perf comparable with the BPF samplers.
cat > "$tmp/work.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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
  double wall = now() - t0;
  struct rusage ru; getrusage(RUSAGE_CHILDREN, &ru);
  printf("%.4f %.6f\n", wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
  return 0;
}
C
cc -O2 -fno-omit-frame-pointer -o "$tmp/work" "$tmp/work.c"

cc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/probe" "$root/tests/bench/stolen_time_probe.c"

# Calibrate the iteration count to about work_seconds of one core.
iters=20000000
t=$("$tmp/work" 1 "$iters" | cut -d' ' -f1)
iters=$(awk -v i="$iters" -v t="$t" -v w="$work_seconds" 'BEGIN { printf "%d", i * w / t }')

# The long run: RSS (KiB) of gp-record every 30 s under a steady workload.
long_run() {
  local minutes=$1 pid work_pids=() rss first="" max=0 half_min="" half_max=0
  for ((c = 0; c < ncpu; c++)); do nice -n 19 "$tmp/work" 1 $((iters * 1000)) >/dev/null & work_pids+=($!); done
  if [ "$churn" = 1 ]; then
    (while :; do nice -n 19 "$tmp/work" 1 $((iters / work_seconds / 4)) >/dev/null; sh -c 'exit 0'; done) &
    work_pids+=($!)
  fi
  "$bin/gp-record" -q -F 99 -d $((minutes * 60 + 5)) -o "$tmp/long.gpa" &
  pid=$!
  printf 'long run: gp-record -F 99 for %d min, %d busy processes at nice 19%s\n%8s %10s %8s\n' "$minutes" "$ncpu" \
    "$([ "$churn" = 1 ] && echo ', a new process about twice a second')" "t(s)" "RSS(KiB)" "CPU-s"
  for ((t = 30; t <= minutes * 60; t += 30)); do
    sleep 30
    rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
    printf '%8d %10d %8.2f\n' "$t" "$rss" "$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$pid/stat")"
    [ -n "$first" ] || first=$rss
    [ "$rss" -gt "$max" ] && max=$rss
    if ((t > minutes * 30)); then  # the second half: past the start-up's warm-up
      [ -n "$half_min" ] && [ "$rss" -ge "$half_min" ] || half_min=$rss
      [ "$rss" -gt "$half_max" ] && half_max=$rss
    fi
  done
  kill -INT "$pid"; wait "$pid" || true
  # work forks its worker: stop the children too, not only the parents.
  for p in "${work_pids[@]}"; do pkill -P "$p" 2>/dev/null || true; done
  kill "${work_pids[@]}" 2>/dev/null || true  # some have exited already
  wait 2>/dev/null || true
  printf 'RSS at 30 s: %d KiB, max: %d KiB, growth %+d KiB; second half: %d to %d KiB (a leak shows as a rising second half)\n' \
    "$first" "$max" $((max - first)) "${half_min:-0}" "$half_max"
}

launch_sampler() {
  local hz=$2
  case "$1" in
    empty) bpftrace -e "profile:hz:$hz { }" >/dev/null 2>&1 & ;;
    gp-record) "$bin/gp-record" -F "$hz" -o "$tmp/rec.gpa" 2>"$tmp/gp.err" & ;;
    gp-kwalk) "$bin/gp-record" -F "$hz" --stack-walker kernel -o "$tmp/rec-kwalk.gpa" 2>/dev/null & ;;
    perf) perf record -q -a -g -F "$hz" -o "$tmp/perf.data" 2>/dev/null & ;;
    bpftrace) bpftrace -e "profile:hz:$hz { @[kstack, ustack] = count(); }" >/dev/null 2>&1 & ;;
    walk) bpftrace -e "profile:hz:$hz { @k = kstack; @u = ustack; }" >/dev/null 2>&1 & ;;
    *) echo "record_overhead.sh: error: unknown sampler '$1'" >&2; exit 2 ;;
  esac
  sampler_pid=$!
}

# One run of sampler $1 at $2 Hz over cost_s seconds of the workload, with BPF statistics on.
# Sets cost_user_ns, cost_bpf_ns, cost_runs, cost_wall_ns; for gp-record also startup_ns
# (its CPU before the measured interval) and rss (peak, KiB).
measure_cost() {
  local c0 b0 r0 t0
  sysctl -qw kernel.bpf_stats_enabled=1
  start_sampler "$1" "$2"
  read_cpu_ns "$sampler_pid"; c0=$cpu_ns
  read_bpf_stats "$sampler_pid"; b0=$bpf_ns; r0=$bpf_runs
  read_now_ns; t0=$now_ns
  "$tmp/work" "$ncpu" $((iters * cost_s / work_seconds)) >/dev/null
  read_cpu_ns "$sampler_pid"; read_bpf_stats "$sampler_pid"; read_now_ns
  [ "$1" = gp-record ] && { startup_ns=$c0; rss=$(awk '/VmHWM/ { print $2 }' "/proc/$sampler_pid/status"); }
  stop_sampler
  sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_before"
  cost_user_ns=$((cpu_ns - c0)); cost_bpf_ns=$((bpf_ns - b0)); cost_runs=$((bpf_runs - r0))
  cost_wall_ns=$((now_ns - t0))
}

samples_in_archive() {  # sample count from the recorder's own summary line
  grep -oE 'recorded [0-9]+ samples' "$tmp/gp.err" | awk '{ s += $2 } END { print s + 0 }'
}

if [ "$long_minutes" -gt 0 ]; then long_run "$long_minutes"; exit 0; fi
bpf_stats_before=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_before"; cleanup' EXIT

# The stolen-time table at $1 Hz (see the top). In each window the samplers run at once, at
# frequencies 2 Hz apart around $1 (their timers drift past each other, and the probe tells
# their samples apart by phase); the frequencies rotate between windows. A sampler's cost is
# taken against the empty program's in the same window.
probe_table() {
  local hz=$1 k j n freqs pids stolen gaps result q1 med q3 lower warm
  local -a names=($probe_samplers)
  local -A cost
  n=${#names[@]}
  window_seconds $((hz - n + 1)) "$probe_seconds"  # gp-record's lowest frequency, its longest interval
  printf '%-6s stolen-time probe: %d windows of %ss\n' "$hz" "$probe_windows" "$window_s"
  : >"$tmp/probe.txt"
  for ((k = 0; k < probe_windows; k++)); do
    freqs=() pids=() c0=()
    for ((j = 0; j < n; j++)); do
      freqs+=($((hz - (n - 1) + 2 * ((j + k) % n))))
      launch_sampler "${names[j]}" "${freqs[j]}"
      pids+=("$sampler_pid")
    done
    sampler_pid=${pids[*]}
    for ((j = 0; j < n; j++)); do wait_attached "${pids[j]}"; done
    sleep 3  # past start-up: gp-record's first flushes, which snapshot every process running
    # The probe reads the samplers' CPU itself, after its warm-up: its own start (gp-record
    # snapshots the new process and drains within a second) is the instrument's, not the
    # workload's, and would weigh more the shorter the window. It is shown on its own below.
    read -r stolen gaps result < <("$tmp/probe" -w "$probe_warmup" "${pids[@]/#/-p}" "$window_s" "${freqs[@]}")
    result=($result)
    for ((j = 0; j < n; j++)); do
      echo "$k ${names[j]} ${freqs[j]} ${result[2 * j]} ${result[2 * j + 1]}" \
        "$(awk -v ns="${result[2 * n + 2 * j + 1]}" -v s="$window_s" 'BEGIN { printf "%d", ns / s }')" \
        "${result[2 * n + 2 * j]}"
    done >>"$tmp/probe.txt"
    stop_sampler
  done
  # Per window and sampler: ns per sample above the empty program's in the same window, and the
  # cost above the floor as a share of all CPUs (those ns at HZ on every CPU, plus own CPU).
  awk -v hz="$hz" -v c="$ncpu" '{ g[$1, $2] = $4; own[$1, $2] = $6; n[$1 FS $2] = 1 }
       END { for (key in n) { split(key, p, FS); x = g[p[1], p[2]] - g[p[1], "empty"]
             print p[1], p[2], x, (x * hz + own[p[1], p[2]] / c) / 1e7 } }' "$tmp/probe.txt" >"$tmp/above"
  printf '%-6s %-10s %9s %9s %26s %9s %12s\n' "Hz" "probe" "samples/s" "gap ns" \
    "above floor ns (Q1 med Q3)" "own CPU%" "above floor%"
  for s in $probe_samplers; do
    read -r q1 med q3 < <(awk -v s="$s" '$2 == s { print $3 }' "$tmp/above" | quartiles)
    cost[$s]=$(sampler_median "$tmp/above" "$s" 4)
    awk -v hz="$hz" -v s="$s" -v n="$(sampler_median "$tmp/probe.txt" "$s" 5)" \
      -v g="$(sampler_median "$tmp/probe.txt" "$s" 4)" -v q1="$q1" -v m="$med" -v q3="$q3" \
      -v own="$(sampler_median "$tmp/probe.txt" "$s" 6)" -v cost="${cost[$s]}" 'BEGIN {
      above = (s == "empty") ? "(the floor)" : sprintf("%d %d %d", q1, m, q3)
      printf "%-6s %-10s %9.1f %9d %26s %9.3f %12s\n", hz, s, n, g, above, own / 1e7,
        (s == "empty") ? "-" : sprintf("%.3f", cost) }'
  done
  # What a new process costs each sampler: its CPU in the warm-up, after the probe (a new
  # process, a thread per CPU) started, less what it uses in as long a time of the window.
  warm=""
  for s in $probe_samplers; do
    [ "$s" = empty ] || warm+="$(printf ', %s %.0f' "$s" "$(awk -v s="$s" -v w="$probe_warmup" \
      '$2 == s { print ($7 - $6 * w) / 1000 }' "$tmp/probe.txt" | median)")"
  done
  printf '%-6s a new process: own CPU in the %s s after the probe started, above the window'"'"'s rate, median us: %s\n' \
    "$hz" "$probe_warmup" "${warm#, }"
  # A sign test over the windows: in how many gp-record cost less than perf (and than bpftrace);
  # p is the chance of at least that many if neither were cheaper.
  for s in perf bpftrace; do
    [[ " $probe_samplers " == *" gp-record "* && " $probe_samplers " == *" $s "* ]] || continue
    lower=$(awk -v s="$s" '$2 == "gp-record" { g[$1] = $4 } $2 == s { o[$1] = $4 }
      END { n = 0; for (k in g) n += (g[k] < o[k]); print n }' "$tmp/above")
    # The ratio in each window (both samplers met the same conditions there): its quartiles.
    read -r q1 med q3 < <(awk -v s="$s" '$2 == "gp-record" { g[$1] = $4 } $2 == s { o[$1] = $4 }
      END { for (k in g) if (o[k] > 0) print g[k] / o[k] }' "$tmp/above" | quartiles)
    awk -v hz="$hz" -v s="$s" -v n="$lower" -v k="$probe_windows" -v g="${cost[gp-record]}" -v o="${cost[$s]}" \
      -v q1="$q1" -v m="$med" -v q3="$q3" 'BEGIN {
        p = 0; for (i = n; i <= k; i++) { c = 1; for (j = 0; j < i; j++) c = c * (k - j) / (j + 1); p += c / 2 ^ k }
        printf "%-6s probe: above the floor, gp-record %.3f%% of all CPUs, %s %.3f%% (ratio %s; per window %.2f %.2f %.2f, Q1 med Q3); gp-record cost less in %d of %d windows (sign test p = %.3f)\n",
          hz, g, s, o, (g > 0 && o > 0) ? sprintf("%.2f", g / o) : "-", q1, m, q3, n, k, p }'
  done
  echo
}

if [ "$probe_only" = 0 ]; then
  printf 'workload: %d processes x %s iterations (~%ss each); %d rounds per cell; median slowdowns;\n' "$ncpu" "$iters" "$work_seconds" "$rounds"
  printf 'direct costs: medians of %d windows of %ss of the workload per cell (or two flush intervals)\n' \
    "$cost_windows" "$cost_seconds"
fi
printf 'stolen-time probe: %d windows of %ss (or two flush intervals) per frequency, the samplers at once; load before: %s\n\n' \
  "$probe_windows" "$probe_seconds" "$(cut -d' ' -f1-3 /proc/loadavg)"
for hz in $freqs; do
  if [ "$probe_only" = 1 ]; then probe_table "$hz"; continue; fi
  printf '%-6s %-10s %9s %14s %9s %10s %8s %13s\n' "Hz" "sampler" "slowdown" "work CPU" "own CPU%" "BPF ns/run" \
    "runs/s" "above floor%"
  floor_ns_per_run=0
  window_seconds "$hz" "$cost_seconds"
  cost_s=$window_s
  for s in empty walk gp-record gp-kwalk perf bpftrace; do
    : >"$tmp/ratios"
    : >"$tmp/cpu_ratios"
    for ((r = 0; r < rounds; r++)); do
      read -r bw bc < <("$tmp/work" "$ncpu" "$iters")
      start_sampler "$s" "$hz"
      read -r pw pc < <("$tmp/work" "$ncpu" "$iters")
      stop_sampler
      awk -v b="$bw" -v p="$pw" 'BEGIN { print (p / b - 1) * 100 }' >>"$tmp/ratios"
      awk -v b="$bc" -v p="$pc" 'BEGIN { print (p / b - 1) * 100 }' >>"$tmp/cpu_ratios"
    done
    slowdown=$(median <"$tmp/ratios")
    inflation=$(median <"$tmp/cpu_ratios")
    spread=$(sort -g "$tmp/cpu_ratios" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f", (hi - lo) / 2 }')
    if [ "$s" = gp-record ]; then gp_bytes=$(stat -c %s "$tmp/rec.gpa"); gp_samples=$(samples_in_archive); fi
    if [ "$s" = perf ]; then
      perf_bytes=$(stat -c %s "$tmp/perf.data")
      perf_samples=$(perf script -i "$tmp/perf.data" -F pid 2>/dev/null | wc -l)
    fi
    # Each window: own CPU (% of one core), BPF ns per run, runs per second, and the CPU time
    # above the floor as a share of every CPU; the cell shows the median of each.
    : >"$tmp/windows"
    for ((k = 0; k < cost_windows; k++)); do
      measure_cost "$s" "$hz"
      awk -v n="$cost_bpf_ns" -v r="$cost_runs" -v f="$floor_ns_per_run" -v u="$cost_user_ns" \
        -v w="$cost_wall_ns" -v c="$ncpu" 'BEGIN { x = n - r * f; if (x < 0) x = 0;
          printf "%.6f %.1f %.1f %.6f\n", u / w * 100, r ? n / r : 0, r / w * 1e9, (x + u) / (w * c) * 100 }' >>"$tmp/windows"
    done
    column_median() { awk -v i="$1" '{ print $i }' "$tmp/windows" | median; }
    own=$(column_median 1)
    ns_per_run=$(printf '%.0f' "$(column_median 2)")
    runs_per_s=$(printf '%.0f' "$(column_median 3)")
    above=$(printf '%.3f' "$(column_median 4)")
    [ "$s" = empty ] && floor_ns_per_run=$ns_per_run
    case "$s" in empty) above="(floor)" ;; perf) above="$above*"; ns_per_run="-" ;; esac
    printf '%-6s %-10s %8.2f%% %7.2f±%.2f%% %9.3f %10s %8s %13s\n' "$hz" "$s" "$slowdown" "$inflation" "$spread" \
      "$own" "$ns_per_run" "$runs_per_s" "$above"
    [ "$s" = gp-record ] && gp_cost="$above $own $startup_ns $rss"
    [ "$s" = walk ] && walk_above=$above
    [ "$s" = gp-kwalk ] && kwalk_above=$above
    [ "$s" = bpftrace ] && bpftrace_above=$above
  done
  read -r gp_above gp_own gp_startup gp_rss <<<"$gp_cost"
  printf '%-6s archive: gp-record %d B / %d samples = %.1f B/sample; perf.data %d B / %d samples = %.1f B/sample\n' \
    "$hz" "$gp_bytes" "$gp_samples" "$(awk -v a="$gp_bytes" -v n="$gp_samples" 'BEGIN { print n ? a / n : 0 }')" \
    "$perf_bytes" "$perf_samples" "$(awk -v a="$perf_bytes" -v n="$perf_samples" 'BEGIN { print n ? a / n : 0 }')"
  printf '%-6s above the floor: gp-record %s%%, bpftrace %s%% (ratio %s); gp-record with the kernel walker %s%% (%s), the kernel walks alone %s%% (%s)\n' \
    "$hz" "$gp_above" "$bpftrace_above" "$(ratio "$gp_above" "$bpftrace_above")" \
    "$kwalk_above" "$(ratio "$kwalk_above" "$bpftrace_above")" "$walk_above" "$(ratio "$walk_above" "$bpftrace_above")"
  printf '%-6s gp-record itself: %.3f%% of one core in steady state (%.1f ms CPU to start), peak RSS %s KiB\n\n' \
    "$hz" "$gp_own" "$(awk -v s="$gp_startup" 'BEGIN { print s / 1e6 }')" "$gp_rss"
  probe_table "$hz"
done
[ "$probe_only" = 1 ] || echo "* perf: its user-space CPU only; its whole cost shows in the probe's table."
