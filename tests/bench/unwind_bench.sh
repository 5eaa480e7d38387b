#!/usr/bin/env bash
# Unwinding user stacks without frame pointers: what gp-record --unwind dwarf costs against
# --unwind fp, bpftrace's frame-pointer walk and perf --call-graph dwarf, and what it holds.
#
#   tests/bench/unwind_bench.sh [-f "999 99"] [-s WINDOWS] [-S SECONDS] [-p "SAMPLERS"]
#                               [-w "WORKLOADS"] [-r SECONDS] [-L MINUTES] [-o "PARTS"]
#
# Parts (-o, default all of "cost stacks tables maps churn first rss"), each a table of its own:
#   cost    For each frequency of -f (default 999) and each workload, -s windows (default 9) of
#           -S seconds each (default 5; at least two of gp-record's flush intervals) in which the
#           samplers of -p run at once, at frequencies 2 Hz apart around N, the stolen-time
#           probe measuring from 12 s after they attached (10 s, then the probe's 2-s warm-up;
#           see record_overhead.sh for the method). Samplers:
#             empty       bpftrace 'profile:hz:N {}': the floor (the timer interrupt alone)
#             gp-fp       gp-record -F N --unwind fp (frame pointers only)
#             gp-dwarf    gp-record -F N --unwind dwarf (tables compiled from .eh_frame)
#             gp-python   gp-record -F N --unwind dwarf --python-frames (and the walk of
#                         CPython's frame chain at each sample of a Python process)
#             bpftrace    bpftrace 'profile:hz:N { @[ustack] = count(); }': the kernel's
#                         frame-pointer walk, aggregated in a map
#             perf-dwarf  perf record -a --call-graph dwarf -F N (8 KiB of stack per sample)
#           Workloads: fp, the probe itself (a thread pinned to each CPU reading the clock
#           32 frames deep, built with frame pointers); python, Debian's /usr/bin/python3 (built
#           without frame pointers) running the probe's loop (stolen_time_probe.py, one process
#           pinned to each CPU, through stolen_time_probe -e); -w picks some (default both).
#           Columns, medians over the windows: BPF ns/run (kernel.bpf_stats_enabled: run time /
#           runs of the sampler's perf_event program, over every sample the sampler took in the
#           window, whatever ran), the probe's sampling gaps per CPU-second it found, their
#           median length, its length above the empty program's in the same window (Q1 med Q3
#           over windows), the sampler's own CPU, and its cost above the floor as a share of all
#           CPUs (the ns above the floor times N on every CPU, plus own CPU). Then, per window
#           in which both ran, gp-dwarf's cost above the floor against bpftrace's, perf-dwarf's
#           and gp-fp's (Q1 med Q3 of the ratios), with the targets: dwarf <= bpftrace's
#           frame-pointer walk, <= 1/4 of perf --call-graph dwarf; and the median ratio of the
#           ns per sample above the floor alone (the interrupt's side, without own CPU). With
#           gp-python, its cost above the floor against gp-dwarf's in the same way, with the
#           target: the Python walk adds no more than gp-dwarf's own cost (ratio <= 2).
#   stacks  For each workload — python (Debian's python3 running fib, three processes in turn),
#           xz (xz -T2 compressing), fp (the probe's 32-deep loop) — gp-record --unwind dwarf, gp-record --unwind fp and
#           perf record --call-graph dwarf record it at once for -r seconds (default 10) at the
#           first frequency of -f. Whole stacks: the share of the workload's samples whose
#           folded user stack (gp-symbolize | gp-fold -f folded -U; perf's through gp-import)
#           starts at _start (in a stripped executable: the caller of __libc_start_main) or
#           clone3, the most common first frame, and the [truncated] ones. Bytes per sample: the archive and perf.data, over all
#           the samples each recorded; perf script's throughput (--no-inline, samples/s wall);
#           gp-record -v's unwind counters (complete, truncated by reason, before tables).
#   tables  Table build times for libc, python3 and libcrypto, from the table builder's own
#           bench (tests/bench/unwind_table_bench.sh; its driver is the build target
#           unwind_table_bench).
#   maps    BPF map memory: gp-record --unwind dwarf -F 99 records the whole system for -r
#           seconds while a few different programs run (python3, xz, perl, gzip, sh and this
#           machine's own); bpftool map show's memlock of the maps gp-record holds, near the end,
#           and the unwind counters of gp-record -v (tables loaded, unwind.tables.bytes).
#   churn   The share of samples taken before their process's tables were loaded
#           (unwind.before_tables / samples.kernel), system-wide at the first frequency for
#           -r seconds, while a new short process (xz on 128 KiB, ~50 ms of CPU) starts about 10
#           times a second; and the short processes' own samples: whole, truncated, or neither
#           (walked with frame pointers before their tables were in place).
#   first   The first samples of new processes (deferred unwinding): gp-record --unwind dwarf (stack
#           copies, the default) and the same with --unwind-copies 0 record the whole system at
#           once, 2 Hz apart, for -r seconds, while a program built without frame pointers starts
#           for 30 ms about 10 times a second and a few big binaries start during the window
#           (bpftrace, which maps libLLVM; python3; gzip -9; perl). Per recorder: the short and the
#           big processes' whole stacks and [truncated] ones, the share of all samples taken
#           before their tables (unwind.before_tables, plus unwind.pending_mapping: a pc in a
#           mapping whose table was not loaded yet); for the copies: samples copied, their
#           bytes per second, copies that fell back, and the deferred path's cost per copied
#           sample: BPF ns (run time over the copying recorder's program minus the other's, per
#           copy) and the recorder's own CPU ns (the same difference); the time from a new
#           process's mappings handed to the table loader to its first tables loaded (median,
#           p95: unwind.first_load_us), and the samples without user space (unwind.no_user_space:
#           in an exit or an exec, with kernel frames alone, which the shares leave out). Run twice: with the table cache cold (emptied), then
#           warm (as the cold run left it).
#   rss     gp-record --unwind dwarf -F 99's RSS every 30 s (every 10 s under 3 minutes) over
#           -L MINUTES (default 2; 10 for the full figure) of steady load (one busy process per
#           core at nice 19) and churn (a new process of a few different binaries ~10/s).
# Before the walker has landed (gp-record without --unwind), gp-fp is plain gp-record and the
# dwarf rows are skipped with a note. Needs root, perf, bpftrace, bpftool, cc, xz, perl and
# Debian's /usr/bin/python3 (scripts/install-deps.sh --test); GP_BUILD_DIR points at the build
# (gp-record, gp-symbolize, gp-fold, gp-import, unwind_table_bench). The machine may be shared
# and noisy: every comparison is drawn from samplers measured side by side in the same windows.
set -euo pipefail

freqs="999"
probe_windows=9
probe_seconds=5
probe_warmup=2
settle_seconds=10  # after the samplers attach, before each window's probe starts
samplers="empty gp-fp gp-dwarf bpftrace perf-dwarf"
workloads="fp python"
record_seconds=10
rss_minutes=2
parts="cost stacks tables maps churn first rss"
while getopts "f:s:S:p:w:r:L:o:h" opt; do
  case "$opt" in
    f) freqs=$OPTARG ;;
    s) probe_windows=$OPTARG ;;
    S) probe_seconds=$OPTARG ;;
    p) samplers=$OPTARG ;;
    w) workloads=$OPTARG ;;
    r) record_seconds=$OPTARG ;;
    L) rss_minutes=$OPTARG ;;
    o) parts=$OPTARG ;;
    *) sed -n '2,60p' "$0"; exit 2 ;;
  esac
done

bench=unwind_bench.sh
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
python=/usr/bin/python3
[ "$(id -u)" -eq 0 ] || { echo "$bench: error: must run as root" >&2; exit 77; }
for cmd in perf bpftrace bpftool cc xz perl gzip "$python"; do
  command -v "$cmd" >/dev/null || { echo "$bench: error: missing '$cmd' (scripts/install-deps.sh --test)" >&2; exit 77; }
done
for tool in gp-record gp-symbolize gp-fold gp-import; do
  [ -x "$bin/$tool" ] || { echo "$bench: error: '$bin/$tool' is not built" >&2; exit 1; }
done
for s in $samplers; do
  [[ " empty gp-fp gp-dwarf gp-python bpftrace perf-dwarf " == *" $s "* ]] || { echo "$bench: error: -p: unknown sampler '$s'" >&2; exit 2; }
done
[[ " $samplers " == *" empty "* ]] || { echo "$bench: error: -p needs 'empty' (the floor)" >&2; exit 2; }
for w in $workloads; do
  [[ " fp python " == *" $w "* ]] || { echo "$bench: error: -w: unknown workload '$w'" >&2; exit 2; }
done
for p in $parts; do
  [[ " cost stacks tables maps churn first rss " == *" $p "* ]] || { echo "$bench: error: -o: unknown part '$p'" >&2; exit 2; }
done
part() { [[ " $parts " == *" $1 "* ]]; }

tmp=$(mktemp -d)
ncpu=$(nproc)
# shellcheck source=sampler_lib.sh
. "$root/tests/bench/sampler_lib.sh"  # sampler start/stop, cleanup, bpf_stats and CPU readers
bpf_stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup_extra='sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_before"; stop_load'
load_pids=()
# Stops the background workloads this script started (and their children), by pid.
stop_load() {
  local p
  for p in "${load_pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
}
install_cleanup

# The walker may not be there yet: then gp-fp is plain gp-record and gp-dwarf is skipped.
has_unwind=0
"$bin/gp-record" --help | grep -q -- '--unwind' && has_unwind=1
unwind_opt() { if [ "$has_unwind" = 1 ]; then echo "--unwind $1"; fi; }
if [ "$has_unwind" = 0 ]; then
  echo "note: this gp-record has no --unwind: gp-fp is gp-record as built, gp-dwarf is skipped"
  samplers=$(echo ${samplers//gp-dwarf/})
fi

cc -O2 -fno-omit-frame-pointer -pthread -o "$tmp/probe" "$root/tests/bench/stolen_time_probe.c"
# Run as bench-python (below), as the python workload is: its samples are told from the host's
# other Python processes' by that name.
py_probe="$tmp/bench-python $root/tests/bench/stolen_time_probe.py"
# The Python loop turns in ~0.1-1 us; gaps below 2 us are its own.
py_gap_ns=2000

# Starts sampler $1 at $2 Hz (archives and perf.data in $tmp, named after it); sets sampler_pid.
perf_seconds=3600
launch_sampler() {
  local hz=$2
  case "$1" in
    empty) bpftrace -e "profile:hz:$hz { }" >/dev/null 2>&1 & ;;
    # -v: the session counters; one gp-record per mode, side by side.
    gp-fp) "$bin/gp-record" -v -F "$hz" $(unwind_opt fp) -o "$tmp/gp-fp.gpa" 2>"$tmp/gp-fp.err" & ;;
    gp-dwarf) "$bin/gp-record" -v -F "$hz" $(unwind_opt dwarf) -o "$tmp/gp-dwarf.gpa" 2>"$tmp/gp-dwarf.err" & ;;
    gp-python) "$bin/gp-record" -v -F "$hz" $(unwind_opt dwarf) --python-frames -o "$tmp/gp-python.gpa" 2>"$tmp/gp-python.err" & ;;
    # END clears the map: bpftrace would otherwise symbolize every stack as it exits.
    bpftrace) bpftrace -e "profile:hz:$hz { @[ustack] = count(); } END { clear(@); }" >/dev/null 2>&1 & ;;
    # perf ends by itself after perf_seconds too: here it once ignored SIGINT and wrote on (11 GB).
    perf-dwarf) perf record -q -a --call-graph dwarf -F "$hz" -o "$tmp/perf-dwarf.data" -- sleep "$perf_seconds" 2>/dev/null & ;;
    *) echo "$bench: error: unknown sampler '$1'" >&2; exit 2 ;;
  esac
  sampler_pid=$!
}

# Starts workload $1 in the background for about $2 seconds (added to load_pids): python (fib
# in Debian's python3), xz (xz -T2 compressing base64 text), fp (the probe's 32-deep loop).
start_workload() {
  case "$1" in
    # Three processes one after the other: whether perf's 8 KiB copy reaches a process's
    # outermost frame varies from one process to the next.
    python) (for i in 1 2 3; do "$tmp/bench-python" "$tmp/fib.py" "$(awk -v s="$2" 'BEGIN { print s / 3 }')"; done) & ;;
    xz) timeout "$2" "$tmp/bench-xz" -T2 -6 -c "$tmp/text" >/dev/null & ;;
    fp) "$tmp/probe" "$2" >/dev/null & ;;
  esac
  load_pids+=($!)
}
cat >"$tmp/fib.py" <<'PY'
import sys, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end: fib(22)
PY
head -c 24M /dev/urandom | base64 >"$tmp/text"
head -c 128K "$tmp/text" >"$tmp/small"
# The workloads run through symlinks of their own name, so that their comm tells them apart from
# the machine's other python3 and xz processes (the binaries mapped are Debian's).
ln -s "$(readlink -f "$python")" "$tmp/bench-python"
ln -s "$(command -v xz)" "$tmp/bench-xz"
workload_comm() { case "$1" in python) echo bench-python ;; xz) echo bench-xz ;; fp) echo probe ;; esac; }

first_hz=${freqs%% *}
printf 'unwind bench: %d CPUs, load before: %s, kernel.perf_event_max_sample_rate %s, %s\n\n' "$ncpu" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$(sysctl -n kernel.perf_event_max_sample_rate)" "$(date -u '+%F %T UTC')"

# --- cost ---------------------------------------------------------------------------------------
# One window's line per sampler in $tmp/probe.txt: window sampler freq gap_ns gaps/s own_ns/s
# warm_ns bpf_ns/run bpf_runs/s.
cost_table() {
  local hz=$1 workload=$2 k j n stolen gaps result q1 med q3 w0 w1 x
  local -a names=($samplers) freqs pids b0 r0 probe_cmd
  local -A cost
  n=${#names[@]}
  window_seconds $((hz - n + 1)) "$probe_seconds"  # gp-record's lowest frequency, its longest interval
  perf_seconds=$((window_s + probe_warmup + 60))  # past the window, whatever the start-up takes
  probe_cmd=("$tmp/probe" -w "$probe_warmup")
  [ "$workload" = python ] && probe_cmd+=(-g "$py_gap_ns" -e "$py_probe")
  : >"$tmp/probe.txt"
  sysctl -qw kernel.bpf_stats_enabled=1
  for ((k = 0; k < probe_windows; k++)); do
    freqs=() pids=() b0=() r0=()
    for ((j = 0; j < n; j++)); do
      freqs+=($((hz - (n - 1) + 2 * ((j + k) % n))))
      launch_sampler "${names[j]}" "${freqs[j]}"
      pids+=("$sampler_pid")
    done
    sampler_pid=${pids[*]}
    for ((j = 0; j < n; j++)); do wait_attached "${pids[j]}"; done
    # Past start-up: gp-record's first flushes, which snapshot every process running, and the
    # first samples of the other samplers' own processes. bpftrace runs ~0.5 ms a second, so its
    # first sample comes ~2 s after it starts (3 s left it unsampled in a fifth of the windows),
    # and gp-record --unwind dwarf then builds the tables of its libLLVM once (~250 ms of CPU
    # here): start-up work of the samplers, not a cost per sample of the workload.
    sleep "$settle_seconds"
    for ((j = 0; j < n; j++)); do read_bpf_stats "${pids[j]}"; b0+=("$bpf_pe_ns"); r0+=("$bpf_runs"); done
    read_now_ns; w0=$now_ns
    read -r stolen gaps result < <("${probe_cmd[@]}" "${pids[@]/#/-p}" "$window_s" "${freqs[@]}")
    read_now_ns; w1=$now_ns
    result=($result)
    for ((j = 0; j < n; j++)); do
      read_bpf_stats "${pids[j]}"
      echo "$k ${names[j]} ${freqs[j]} ${result[2 * j]} ${result[2 * j + 1]}" \
        "$((result[2 * n + 2 * j + 1] / window_s)) ${result[2 * n + 2 * j]}" \
        "$(( (bpf_runs - r0[j]) > 0 ? (bpf_pe_ns - b0[j]) / (bpf_runs - r0[j]) : 0 ))" \
        "$(( (bpf_runs - r0[j]) * 1000000000 / (w1 - w0) ))"
    done >>"$tmp/probe.txt"
    sampler_alive "${names[*]}" "${pids[*]}"
    stop_sampler
  done
  sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_before"
  # Per window and sampler: ns per sample above the empty program's in the same window, and the
  # cost above the floor as a share of all CPUs.
  awk -v hz="$hz" -v c="$ncpu" '{ g[$1, $2] = $4; own[$1, $2] = $6; n[$1 FS $2] = 1 }
       END { for (key in n) { split(key, p, FS); x = g[p[1], p[2]] - g[p[1], "empty"]
             print p[1], p[2], x, (x * hz + own[p[1], p[2]] / c) / 1e7 } }' "$tmp/probe.txt" >"$tmp/above"
  printf '%-5s %-7s %-10s %10s %9s %8s %26s %9s %12s\n' "Hz" "load" "sampler" "BPF ns/run" "samples/s" "gap ns" \
    "above floor ns (Q1 med Q3)" "own CPU%" "above floor%"
  for s in $samplers; do
    read -r q1 med q3 < <(awk -v s="$s" '$2 == s { print $3 }' "$tmp/above" | quartiles)
    cost[$s]=$(sampler_median "$tmp/above" "$s" 4)
    awk -v hz="$hz" -v w="$workload" -v s="$s" -v n="$(sampler_median "$tmp/probe.txt" "$s" 5)" \
      -v g="$(sampler_median "$tmp/probe.txt" "$s" 4)" -v q1="$q1" -v m="$med" -v q3="$q3" \
      -v b="$(sampler_median "$tmp/probe.txt" "$s" 8)" \
      -v own="$(sampler_median "$tmp/probe.txt" "$s" 6)" -v cost="${cost[$s]}" 'BEGIN {
      above = (s == "empty") ? "(the floor)" : sprintf("%d %d %d", q1, m, q3)
      printf "%-5s %-7s %-10s %10s %9.1f %8d %26s %9.3f %12s\n", hz, w, s, (s == "perf-dwarf") ? "-" : sprintf("%d", b),
        n, g, above, own / 1e7, (s == "empty") ? "-" : sprintf("%.3f", cost) }'
  done
  # gp-dwarf against the others, window by window (both met the same conditions there); then
  # gp-python against gp-dwarf.
  local pair mine
  for pair in gp-dwarf:bpftrace gp-dwarf:perf-dwarf gp-dwarf:gp-fp gp-python:gp-dwarf; do
    mine=${pair%%:*} s=${pair#*:}
    [[ " $samplers " == *" $mine "* && " $samplers " == *" $s "* ]] || continue
    read -r q1 med q3 < <(awk -v m="$mine" -v s="$s" '$2 == m { g[$1] = $4 } $2 == s { o[$1] = $4 }
      END { for (k in g) if (o[k] > 0) print g[k] / o[k] }' "$tmp/above" | quartiles)
    x=$(awk -v m="$mine" -v s="$s" '$2 == m { g[$1] = $4 } $2 == s { o[$1] = $4 }
      END { n = 0; for (k in g) n += (g[k] < o[k]); print n }' "$tmp/above")
    # The interrupt's side alone: the ns per sample above the floor, without own CPU.
    per_sample=$(awk -v m="$mine" -v s="$s" '$2 == m { g[$1] = $3 } $2 == s { o[$1] = $3 }
      END { for (k in g) if (o[k] > 0) print g[k] / o[k] }' "$tmp/above" | median)
    awk -v hz="$hz" -v w="$workload" -v mine="$mine" -v s="$s" -v g="${cost[$mine]}" -v o="${cost[$s]}" -v q1="$q1" -v m="$med" \
      -v q3="$q3" -v n="$x" -v k="$probe_windows" -v ps="$per_sample" 'BEGIN {
        target = (mine == "gp-python") ? 2 : (s == "bpftrace") ? 1 : (s == "perf-dwarf") ? 0.25 : 0
        verdict = target ? sprintf("; target <= %.2f: %s", target, (m <= target) ? "met" : "NOT met") : ""
        printf "%-5s %-7s %s / %-10s above the floor: %.3f%% / %.3f%%; per window %.2f %.2f %.2f (Q1 med Q3), %s cheaper in %d of %d%s; ns per sample alone %.2f\n",
          hz, w, mine, s, g, o, q1, m, q3, mine, n, k, verdict, ps }'
  done
  for s in gp-fp gp-dwarf gp-python; do
    [[ " $samplers " == *" $s "* ]] || continue
    [ -s "$tmp/$s.err" ] || continue
    printf '%-5s %-7s %s (last window, whole system): samples %s, archive %s B/sample%s\n' "$hz" "$workload" "$s" \
      "$(session_counter "$tmp/$s.err" samples.kernel)" \
      "$(awk -v b="$(stat -c %s "$tmp/$s.gpa")" -v n="$(session_counter "$tmp/$s.err" samples.kernel)" 'BEGIN { printf "%.1f", n ? b / n : 0 }')" \
      "$(unwind_summary "$tmp/$s.err")$(python_summary "$s" "$tmp/$s.err" "$tmp/$s.gpa" "$workload")"
  done
  echo
}

# ", Python frames in W of N samples of Python processes" from gp-python's stderr $2: every
# Python process of the host, whose threads without a Python thread state (native threads of
# other programs) and whose starts count too; then, for the python workload $4, the share of its
# own samples (bench-python's: the probe's Python loop) in archive $3.
python_summary() {
  [ "$1" = gp-python ] || return 0
  printf ', Python frames in %s of %s samples of Python processes' \
    "$(session_counter "$2" python.walked)" "$(session_counter "$2" python.samples)"
  [ "$4" = python ] || return 0
  "$bin/gp-symbolize" -q "$3" 2>/dev/null | "$bin/gp-fold" -f folded --annotate --comm bench-python 2>/dev/null |
    awk '{ n = $NF; t += n; if ($0 ~ /_\[p\]/) p += n }
         END { printf ", in %d of %d (%.1f%%) of the workload'"'"'s", p, t, t ? 100 * p / t : 0 }'
}

# Warns of each sampler of names $1 (pids $2) that is no longer running, with its last words.
sampler_alive() {
  local -a names=($1) pids=($2)
  local j
  for ((j = 0; j < ${#pids[@]}; j++)); do
    kill -0 "${pids[j]}" 2>/dev/null && continue
    echo "$bench: warning: ${names[j]} exited before the window's end${tmp:+: $(tail -n 1 "$tmp/${names[j]}.err" 2>/dev/null)}" >&2
  done
}

# ", complete N, truncated N (reason N ...), before tables N" from gp-record -v's stderr $1.
unwind_summary() {
  local f=$1 r out
  [ "$has_unwind" = 1 ] || return 0
  out=", complete $(session_counter "$f" unwind.complete), truncated $(session_counter "$f" unwind.truncated)"
  for r in depth read no_rule unsupported bad_frame; do
    out+=" $r $(session_counter "$f" unwind.truncated.$r)"
  done
  out+=", unknown end $(session_counter "$f" unwind.unknown_end), fp frames $(session_counter "$f" unwind.fp_frames)"
  out+=", before tables $(session_counter "$f" unwind.before_tables)"
  echo "$out"
}

if part cost; then
  printf 'cost: %d windows of %ss (or two flush intervals) per frequency and workload, samplers at once: %s\n' \
    "$probe_windows" "$probe_seconds" "$samplers"
  for hz in $freqs; do
    for w in $workloads; do cost_table "$hz" "$w"; done
  done
fi

# --- stacks -------------------------------------------------------------------------------------
# Whole stacks of comm $2 in gp archive $1: "whole total root share truncated" (whole: the first
# user frame is _start or clone3, or the unnamed frame of a stripped executable (xz) that calls
# __libc_start_main, which only _start does; root: the most common first user frame, share: its
# % of the total; truncated: the stacks under gp-fold's [truncated] root).
whole_stacks() {
  "$bin/gp-fold" -q -f folded -U --comm "$2" "$1" 2>/dev/null |
    awk '{ n = $NF; split($0, f, ";"); root = f[2]; sub(/ [0-9]+$/, "", root); t += n; r[root] += n
           if (root ~ /^(_start|clone3|__clone3|__GI___clone3)$/ || (root ~ /^\(/ && f[3] ~ /^__libc_start_main/)) w += n
           if (root == "[truncated]") cut += n }
         END { for (k in r) if (r[k] > best) { best = r[k]; top = k }; gsub(/ /, "_", top)
               printf "%d %d %s %.1f %d\n", w, t, (top == "") ? "-" : top, t ? best / t * 100 : 0, cut }'
}

if part stacks; then
  hz=$first_hz
  perf_seconds=$((record_seconds + 60))
  printf 'stacks: each workload recorded for %ss at %d Hz by gp-record --unwind dwarf, --unwind fp and perf --call-graph dwarf at once\n' \
    "$record_seconds" "$hz"
  printf '%-7s %-10s %8s %22s %-28s %9s %9s %9s  %s\n' "load" "recorder" "samples" "whole stacks (of load)" \
    "most common root" "truncated" "B/sample" "script/s" "unwind counters (whole system)"
  for w in python xz fp; do
    comm=$(workload_comm "$w")
    pids=()
    for s in gp-dwarf gp-fp perf-dwarf; do
      [ "$has_unwind" = 1 ] || [ "$s" != gp-dwarf ] || continue
      launch_sampler "$s" "$hz"; pids+=("$sampler_pid")
    done
    sampler_pid=${pids[*]}
    for p in "${pids[@]}"; do wait_attached "$p"; done
    start_workload "$w" "$record_seconds"
    wait "${load_pids[@]}" 2>/dev/null || true
    load_pids=()
    sampler_alive "$([ "$has_unwind" = 1 ] && echo gp-dwarf) gp-fp perf-dwarf" "$sampler_pid"
    stop_sampler
    for s in gp-dwarf gp-fp; do
      [ -s "$tmp/$s.gpa" ] || continue
      "$bin/gp-symbolize" -q "$tmp/$s.gpa" -o "$tmp/$s.sym.gpa" || echo "$bench: warning: gp-symbolize failed on $s's archive" >&2
      read -r whole total top top_pct cut < <(whole_stacks "$tmp/$s.sym.gpa" "$comm")
      samples=$(session_counter "$tmp/$s.err" samples.kernel)
      printf '%-7s %-10s %8d %13s %7.1f%% %-28s %9d %9.1f %9s  %s\n' "$w" "$s" "$samples" "$whole/$total" \
        "$(awk -v a="$whole" -v b="$total" 'BEGIN { print b ? a / b * 100 : 0 }')" "${top:0:20} $top_pct%" "$cut" \
        "$(awk -v b="$(stat -c %s "$tmp/$s.gpa")" -v n="$samples" 'BEGIN { print n ? b / n : 0 }')" "-" \
        "$(unwind_summary "$tmp/$s.err" | sed 's/^, //')"
      rm -f "$tmp/$s.gpa" "$tmp/$s.sym.gpa"
    done
    # perf script's throughput: wall time of the whole script (unwinding each sample with
    # libdw from its 8 KiB stack copy, and symbols); --no-inline spares addr2line's runs.
    read_now_ns; t0=$now_ns
    perf script --no-inline -i "$tmp/perf-dwarf.data" >"$tmp/perf.txt" 2>/dev/null || true
    read_now_ns
    samples=$(grep -c '^$' "$tmp/perf.txt" || true)
    "$bin/gp-import" -q "$tmp/perf.txt" -o "$tmp/perf.gpa" || echo "$bench: warning: gp-import failed on perf script's output" >&2
    read -r whole total top top_pct cut < <(whole_stacks "$tmp/perf.gpa" "$comm")
    printf '%-7s %-10s %8d %13s %7.1f%% %-28s %9s %9.1f %9.0f  %s\n' "$w" "perf-dwarf" "$samples" "$whole/$total" \
      "$(awk -v a="$whole" -v b="$total" 'BEGIN { print b ? a / b * 100 : 0 }')" "${top:0:20} $top_pct%" "-" \
      "$(awk -v b="$(stat -c %s "$tmp/perf-dwarf.data")" -v n="$samples" 'BEGIN { print n ? b / n : 0 }')" \
      "$(awk -v n="$samples" -v t="$((now_ns - t0))" 'BEGIN { print t ? n / t * 1e9 : 0 }')" "-"
    rm -f "$tmp/perf-dwarf.data" "$tmp/perf.txt" "$tmp/perf.gpa"
  done
  echo "(whole stacks: the workload's samples whose user stack starts at _start (named, or the stripped caller of"
  echo " __libc_start_main) or clone3; truncated: under gp-fold's [truncated] root; B/sample: the file over all its samples)"
  echo
fi

# --- tables -------------------------------------------------------------------------------------
if part tables; then
  table_bench="$root/tests/bench/unwind_table_bench.sh"
  echo "tables: build times (tests/bench/unwind_table_bench.sh)"
  if [ -f "$table_bench" ]; then
    FILES="/lib/x86_64-linux-gnu/libc.so.6 $(readlink -f "$python") /lib/x86_64-linux-gnu/libcrypto.so.3" \
      bash "$table_bench" "$(dirname "$bin")" || echo "(the table bench failed: status $?)"
  else
    echo "(not run: $table_bench is not there)"
  fi
  echo
fi

# Starts the mixed programs of the maps and rss parts in the background (load_pids): a new
# process of one of a few binaries about 10 times a second, for $1 seconds.
start_churn() {
  local seconds=$1
  (
    end=$((SECONDS + seconds))
    while ((SECONDS < end)); do
      case $((RANDOM % 5)) in
        0) "$python" -c 'sum(range(200000))' ;;
        1) xz -c "$tmp/small" >/dev/null ;;
        2) perl -e 'my $s = 0; $s += $_ for 1 .. 200000' ;;
        3) gzip -c "$tmp/small" >/dev/null ;;
        4) sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done' ;;
      esac
      sleep 0.05
    done
  ) 2>/dev/null &  # no "Terminated" when stop_load ends it
  load_pids+=($!)
}

# --- maps ---------------------------------------------------------------------------------------
if part maps; then
  [ "$has_unwind" = 1 ] || echo "maps: (gp-record without --unwind: the maps of its frame-pointer walk)"
  start_workload python $((record_seconds + 5))
  start_workload xz $((record_seconds + 5))
  start_churn $((record_seconds + 5))
  sleep 1
  "$bin/gp-record" -v -F 99 $(unwind_opt dwarf) -d "$record_seconds" -o "$tmp/maps.gpa" 2>"$tmp/maps.err" &
  sampler_pid=$!
  wait_attached "$sampler_pid"
  sleep $((record_seconds > 4 ? record_seconds - 3 : 1))
  # The maps gp-record holds (fdinfo map_id) and their memlock, from bpftool.
  map_ids=$(grep -h '^map_id:' /proc/"$sampler_pid"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -un | tr '\n' ' ')
  bpftool map show -j >"$tmp/maps.json"
  wait "$sampler_pid" || true
  sampler_pid=""
  stop_load
  printf 'maps: gp-record%s -F 99, whole system, %ss, with python3, xz -T2 and a new process (python3, xz, perl, gzip, sh) ~10/s\n' \
    "$([ "$has_unwind" = 1 ] && echo ' --unwind dwarf')" "$record_seconds"
  "$python" - "$tmp/maps.json" $map_ids <<'PY'
import json, sys
maps = {m["id"]: m for m in json.load(open(sys.argv[1]))}
ids = [int(i) for i in sys.argv[2:] if int(i) in maps]
rows = sorted((maps[i] for i in ids), key=lambda m: -m.get("bytes_memlock", 0))
total = sum(m.get("bytes_memlock", 0) for m in rows)
print(f"{'map':<24} {'type':<16} {'entries':>10} {'memlock':>14}")
for m in rows:
    print(f"{m.get('name', '?'):<24} {m.get('type', '?'):<16} {m.get('max_entries', 0):>10} {m.get('bytes_memlock', 0):>14}")
print(f"{len(rows)} maps: {total} B memlock = {total / 2**20:.1f} MiB (target <= 64 MiB)")
PY
  if [ "$has_unwind" = 1 ]; then
    printf 'unwind tables: loaded %s, evicted %s, failed %s, no room %s, %s B (%.1f MiB) of tables; mappings %s, without a table %s; processes without room %s\n' \
      "$(session_counter "$tmp/maps.err" unwind.tables.loaded)" "$(session_counter "$tmp/maps.err" unwind.tables.evicted)" \
      "$(session_counter "$tmp/maps.err" unwind.tables.failed)" "$(session_counter "$tmp/maps.err" unwind.tables.no_room)" \
      "$(session_counter "$tmp/maps.err" unwind.tables.bytes)" \
      "$(awk -v b="$(session_counter "$tmp/maps.err" unwind.tables.bytes)" 'BEGIN { print b / 1048576 }')" \
      "$(session_counter "$tmp/maps.err" unwind.mappings)" "$(session_counter "$tmp/maps.err" unwind.mappings.no_table)" \
      "$(session_counter "$tmp/maps.err" unwind.processes.no_room)"
  fi
  echo
fi

# --- churn --------------------------------------------------------------------------------------
if part churn; then
  hz=$first_hz
  (
    end=$((SECONDS + record_seconds + 3))
    while ((SECONDS < end)); do xz -c "$tmp/small" >/dev/null; sleep 0.05; done
  ) 2>/dev/null &
  load_pids+=($!)
  "$bin/gp-record" -v -F "$hz" $(unwind_opt dwarf) -d "$record_seconds" -o "$tmp/churn.gpa" 2>"$tmp/churn.err" || true
  stop_load
  "$bin/gp-symbolize" -q "$tmp/churn.gpa" -o "$tmp/churn.sym.gpa" || echo "$bench: warning: gp-symbolize failed" >&2
  xz_samples=$("$bin/gp-fold" -q -f folded --comm xz "$tmp/churn.sym.gpa" | awk '{ s += $NF } END { print s + 0 }')
  xz_runs=$("$bin/gp-fold" -q -f folded --with-pid --comm xz "$tmp/churn.sym.gpa" | awk -F';' '{ p[$1] = 1 } END { print length(p) }')
  before=$(session_counter "$tmp/churn.err" unwind.before_tables)
  samples=$(session_counter "$tmp/churn.err" samples.kernel)
  printf 'churn: gp-record%s -F %d, whole system, %ss, a new xz (128 KiB, ~50 ms of CPU) about 10 times a second\n' \
    "$([ "$has_unwind" = 1 ] && echo ' --unwind dwarf')" "$hz" "$record_seconds"
  if [ "$has_unwind" = 1 ]; then
    printf 'samples before their tables: %s of %s = %s%% of all samples (every process on the machine, the recorder'"'"'s start included)\n' \
      "$before" "$samples" "$(pct "$before" "$samples")"
    # The short processes' own: a stack walked before the tables (frame pointers, which xz has
    # not) does not reach _start.
    read -r xz_whole xz_total _ _ xz_cut < <(whole_stacks "$tmp/churn.sym.gpa" xz)
    printf 'the short processes: %s samples (%s processes sampled), %s%% whole, %s%% under [truncated], %s%% neither (walked before their tables)\n' \
      "$xz_samples" "$xz_runs" "$(pct "$xz_whole" "$xz_total")" "$(pct "$xz_cut" "$xz_total")" \
      "$(pct $((xz_total - xz_whole - xz_cut)) "$xz_total")"
  else
    printf '(no --unwind: no tables to wait for) %s samples, %s of the short processes (%s processes sampled)\n' \
      "$samples" "$xz_samples" "$xz_runs"
  fi
  echo
fi

# --- first --------------------------------------------------------------------------------------
# Starts the first part's workload in the background (load_pids) for $1 seconds: the FP-less
# 30-ms program ~10 times a second, and after 1, 3, 5 and 7 s one big program each.
start_first_samples_load() {
  local seconds=$1
  (
    end=$((SECONDS + seconds)) start=$SECONDS
    while ((SECONDS < end)); do
      "$tmp/shortlived_nofp" 30
      case $((SECONDS - start)) in
        1) [ -e "$tmp/big1" ] || { : >"$tmp/big1"; bpftrace -e 'BEGIN { exit(); }' >/dev/null 2>&1; } ;;
        3) [ -e "$tmp/big3" ] || { : >"$tmp/big3"; "$python" -c "$first_py" 1; } ;;
        5) [ -e "$tmp/big5" ] || { : >"$tmp/big5"; gzip -9 -c "$tmp/gz2m" >/dev/null; } ;;
        7) [ -e "$tmp/big7" ] || { : >"$tmp/big7"; perl -e 'my $t = time + 1; my $s = 0; while (time < $t) { $s += $_ for 1 .. 1000 }'; } ;;
      esac
      sleep 0.07
    done
  ) 2>/dev/null &
  load_pids+=($!)
}
first_py='
import sys, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end: fib(18)'

# "whole total truncated" of the comms $2... in gp archive $1 (whole_stacks, summed).
whole_of_comms() {
  local a=$1 c w t cut sw=0 st=0 scut=0
  shift
  for c in "$@"; do
    read -r w t _ _ cut < <(whole_stacks "$a" "$c")
    sw=$((sw + w)) st=$((st + t)) scut=$((scut + cut))
  done
  echo "$sw $st $scut"
}

# $1: cold (the recorders start with an empty table cache) or warm (the cache the cold round
# left).
first_samples_part() {
  local hz=$first_hz s pids=() ns0=() runs0=() cpu0=() ns1=() runs1=() cpu1=() j w0 w1 cache=$1
  cc -O2 -g -fomit-frame-pointer -fno-inline -o "$tmp/shortlived_nofp" "$root/tests/fixtures/src/shortlived.c"
  head -c 2M "$tmp/text" >"$tmp/gz2m"
  rm -f "$tmp"/big?
  [ "$cache" = warm ] || rm -rf "$tmp/unwind-cache"
  sysctl -qw kernel.bpf_stats_enabled=1
  "$bin/gp-record" -v -F "$hz" --unwind dwarf --unwind-cache "$tmp/unwind-cache" -o "$tmp/first-copies.gpa" \
    2>"$tmp/first-copies.err" &
  pids+=($!)
  "$bin/gp-record" -v -F $((hz - 2)) --unwind dwarf --unwind-copies 0 --unwind-cache "$tmp/unwind-cache" \
    -o "$tmp/first-nocopies.gpa" 2>"$tmp/first-nocopies.err" &
  pids+=($!)
  sampler_pid=${pids[*]}
  for j in 0 1; do wait_attached "${pids[j]}"; done
  sleep 3  # past the recorders' start-up (their first snapshots of every process)
  for j in 0 1; do
    read_bpf_stats "${pids[j]}"; ns0+=("$bpf_pe_ns"); runs0+=("$bpf_runs")
    read_cpu_ns "${pids[j]}"; cpu0+=("$cpu_ns")
  done
  read_now_ns; w0=$now_ns
  start_first_samples_load "$record_seconds"
  wait "${load_pids[@]}" 2>/dev/null || true
  load_pids=()
  read_now_ns; w1=$now_ns
  for j in 0 1; do
    read_bpf_stats "${pids[j]}"; ns1+=("$bpf_pe_ns"); runs1+=("$bpf_runs")
    read_cpu_ns "${pids[j]}"; cpu1+=("$cpu_ns")
  done
  sleep 2  # the last copies' drain
  stop_sampler
  sysctl -qw kernel.bpf_stats_enabled="$bpf_stats_before"
  printf 'first samples, table cache %s: gp-record --unwind dwarf with stack copies and with --unwind-copies 0 at once, whole system, %d Hz,\n' \
    "$cache" "$hz"
  printf '  %ss of an FP-less 30-ms program ~10/s, and bpftrace (libLLVM), python3 (1 s), gzip -9 (2 MB), perl (1 s) once each\n' \
    "$record_seconds"
  printf '%-12s %22s %22s %10s %24s\n' "recorder" "short: whole (trunc.)" "big: whole (trunc.)" "samples" "before tables (+pending)"
  for s in copies nocopies; do
    "$bin/gp-symbolize" -q "$tmp/first-$s.gpa" -o "$tmp/first-$s.sym.gpa" || echo "$bench: warning: gp-symbolize failed" >&2
    read -r sw st scut < <(whole_of_comms "$tmp/first-$s.sym.gpa" shortlived_nofp)
    read -r bw bt bcut < <(whole_of_comms "$tmp/first-$s.sym.gpa" bpftrace python3 gzip perl)
    samples=$(session_counter "$tmp/first-$s.err" samples.kernel)
    before=$(session_counter "$tmp/first-$s.err" unwind.before_tables)
    pending=$(session_counter "$tmp/first-$s.err" unwind.pending_mapping)
    printf '%-12s %22s %22s %10d %24s\n' "$s" "$(pct "$sw" "$st")% of $st ($scut)" "$(pct "$bw" "$bt")% of $bt ($bcut)" \
      "$samples" "$(pct $((before + pending)) "$samples")% ($pending)"
  done
  local copied bytes fell per_bpf per_cpu
  copied=$(session_counter "$tmp/first-copies.err" unwind.deferred)
  bytes=$(session_counter "$tmp/first-copies.err" unwind.deferred.bytes)
  fell=$(session_counter "$tmp/first-copies.err" unwind.deferred.fallback)
  # Over the window: the copying program's run time above the other's (per run, times its runs),
  # and the recorders' CPU, per copied sample. Copies of the start-up are outside the window.
  per_bpf=$(awk -v a="$((ns1[0] - ns0[0]))" -v ra="$((runs1[0] - runs0[0]))" -v b="$((ns1[1] - ns0[1]))" \
    -v rb="$((runs1[1] - runs0[1]))" -v n="$copied" 'BEGIN { if (ra && rb && n) printf "%.0f", (a / ra - b / rb) * ra / n; else print "-" }')
  per_cpu=$(awk -v a="$((cpu1[0] - cpu0[0]))" -v b="$((cpu1[1] - cpu0[1]))" -v n="$copied" \
    'BEGIN { if (n) printf "%.0f", (a - b) / n; else print "-" }')
  printf 'stack copies: %s samples, %s B (%s KiB/s over the %ss), %s fell back to frame pointers; per copied sample: BPF %s ns, recorder %s ns\n' \
    "$copied" "$bytes" "$(awk -v b="$bytes" -v t="$((w1 - w0))" 'BEGIN { printf "%.0f", t ? b / 1024 / (t / 1e9) : 0 }')" \
    "$record_seconds" "$fell" "$per_bpf" "$per_cpu"
  printf 'deferred (copies recorder): unwound %s (complete %s, truncated %s), without tables %s, of a mapping without table %s\n' \
    "$(session_counter "$tmp/first-copies.err" unwind.deferred.unwound)" \
    "$(session_counter "$tmp/first-copies.err" unwind.deferred.complete)" \
    "$(session_counter "$tmp/first-copies.err" unwind.deferred.truncated)" \
    "$(session_counter "$tmp/first-copies.err" unwind.deferred.without_tables)" \
    "$(session_counter "$tmp/first-copies.err" unwind.deferred.pending_mapping)"
  printf 'samples without user space (copies recorder; an exit past the release of its memory, an exec past its point\n'
  printf '  of no return: kernel frames alone, not in the whole-stack shares above): %s\n' \
    "$(session_counter "$tmp/first-copies.err" unwind.no_user_space)"
  printf 'time to tables (copies recorder; from a new process'"'"'s mappings handed to the loader, after its announcement was\n'
  printf '  read and its mappings snapshot, to its first tables loaded): median %s us, p95 %s us, over %s processes;\n' \
    "$(session_counter "$tmp/first-copies.err" unwind.first_load_us.p50)" \
    "$(session_counter "$tmp/first-copies.err" unwind.first_load_us.p95)" \
    "$(session_counter "$tmp/first-copies.err" unwind.first_loads)"
  printf '  tables built %s, from the cache %s\n' "$(session_counter "$tmp/first-copies.err" unwind.tables.built)" \
    "$(session_counter "$tmp/first-copies.err" unwind.tables.cache_hits)"
  echo "(whole: the root is _start, clone3 or a stripped executable's caller of __libc_start_main; the copies' counts"
  echo " include the whole system's new processes, the recorders' start-up excluded from the cost)"
  echo
}
if part first; then
  first_samples_part cold
  first_samples_part warm
fi

# --- rss ----------------------------------------------------------------------------------------
if part rss; then
  seconds=$((rss_minutes * 60))
  step=30
  ((seconds >= 180)) || step=10
  cat >"$tmp/busy.c" <<'C'
int main(void) { volatile unsigned long x = 0; for (;;) x = x * 2654435761u + 1; }
C
  cc -O2 -o "$tmp/busy" "$tmp/busy.c"
  for ((c = 0; c < ncpu; c++)); do nice -n 19 "$tmp/busy" & load_pids+=($!); done
  start_churn $((seconds + 10))
  "$bin/gp-record" -q -F 99 $(unwind_opt dwarf) -d $((seconds + 5)) -o "$tmp/long.gpa" &
  sampler_pid=$!
  printf 'rss: gp-record%s -F 99 for %d min, %d busy processes at nice 19, a new process (python3, xz, perl, gzip, sh) ~10/s\n' \
    "$([ "$has_unwind" = 1 ] && echo ' --unwind dwarf')" "$rss_minutes" "$ncpu"
  printf '%8s %10s %8s\n' "t(s)" "RSS(KiB)" "CPU-s"
  first="" max=0 half_min="" half_max=0
  for ((t = step; t <= seconds; t += step)); do
    sleep "$step"
    rss=$(awk '/VmRSS/ { print $2 }' "/proc/$sampler_pid/status")
    printf '%8d %10d %8.2f\n' "$t" "$rss" "$(awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$sampler_pid/stat")"
    [ -n "$first" ] || first=$rss
    [ "$rss" -gt "$max" ] && max=$rss
    if ((t > seconds / 2)); then  # the second half: past the start-up's warm-up
      [ -n "$half_min" ] && [ "$rss" -ge "$half_min" ] || half_min=$rss
      [ "$rss" -gt "$half_max" ] && half_max=$rss
    fi
  done
  stop_sampler
  stop_load
  printf 'RSS at %d s: %d KiB, max: %d KiB, growth %+d KiB; second half: %d to %d KiB (a leak shows as a rising second half)\n' \
    "$step" "$first" "$max" $((max - first)) "${half_min:-0}" "$half_max"
fi
