#!/usr/bin/env bash
# gp-record --python-frames on CPU-bound CPython workloads: what the BPF walk of the frame chain
# costs per sample, and how its top Python functions agree with gp's user-space sampler.
#
#   tests/bench/python_walk_bench.sh [-o "cost agree"] [-f "99 999"] [-w SECONDS] [-r ROUNDS]
#                                    [-a SECONDS] [-n PROCESSES] [-R ROUNDS]
#
# Parts (-o, default both):
#   cost   One busy python3 per CPU (a method in a loop, 4 Python frames deep) runs while
#          gp-record records them by pid for -w SECONDS (default 10), alternately without and
#          with --python-frames, -r ROUNDS times (default 3), at each frequency of -f.
#          kernel.bpf_stats_enabled gives the run time and runs of gp-record's perf_event
#          program; the table shows the median ns per sample of the rounds and the walk's own
#          cost (the difference). For the stolen-time probe's cost above the floor beside
#          gp-dwarf and bpftrace: unwind_bench.sh -o cost -w python -p "empty gp-dwarf gp-python
#          bpftrace".
#   agree  -n PROCESSES (default 4) of gpyext_work.py's mix (three functions on a fixed
#          schedule of wall-clock time: 50.00, 29.94 and 20.06 %) at nice -20, recorded at once
#          for -a SECONDS (default 60) by gp-record -F 999 --python-frames and by gp's
#          user-space sampler (gp-runtime --python-mode gp -F 50, its limit), -R ROUNDS times
#          (default 3). Per round and function: each one's share of the Python samples (leaf
#          Python frame), their difference, its standard error from the two sample counts, and
#          each one's offset from the schedule. The sampler's 50 Hz per process is what the CI
#          test (15 s, one process: ~730 samples, a share's standard error up to 1.85 points)
#          cannot make small; here ~PROCESSES x 50 x SECONDS samples make 2 points several
#          standard errors.
# Needs root; GP_BUILD_DIR points at the build (gp-record, gp-symbolize, gp-fold, gp-runtime).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${GP_BUILD_DIR:-$root/build}/bin"
freqs="99 999" window=10 rounds=3 parts="cost agree" agree_seconds=60 agree_procs=4 agree_rounds=3
while getopts "o:f:w:r:a:n:R:" o; do
  case $o in
    o) parts=$OPTARG ;;
    f) freqs=$OPTARG ;;
    w) window=$OPTARG ;;
    r) rounds=$OPTARG ;;
    a) agree_seconds=$OPTARG ;;
    n) agree_procs=$OPTARG ;;
    R) agree_rounds=$OPTARG ;;
    *) sed -n '2,30p' "$0"; exit 2 ;;
  esac
done
for p in $parts; do
  [[ " cost agree " == *" $p "* ]] || { echo "python_walk_bench: error: -o: unknown part '$p'" >&2; exit 2; }
done
part() { [[ " $parts " == *" $1 "* ]]; }
bench=python_walk_bench
[ "$(id -u)" -eq 0 ] || { echo "$bench: error: must run as root" >&2; exit 77; }
tmp=$(mktemp -d /tmp/$bench.XXXXXX)
ncpu=$(nproc)
. "$root/tests/bench/sampler_lib.sh"
# shellcheck source=../cli/python_shares.bash
. "$root/tests/cli/python_shares.bash"
workers=()
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup_extra='stop_workers; sysctl -qw kernel.bpf_stats_enabled=$stats_before'
stop_workers() {
  [ ${#workers[@]} -eq 0 ] && return 0
  kill "${workers[@]}" 2>/dev/null || true
  wait "${workers[@]}" 2>/dev/null || true
  workers=()
}
install_cleanup
printf 'python walk bench: %d CPUs, load before: %s, %s\n\n' "$ncpu" "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$(date -u '+%F %T UTC')"

# --- cost ---------------------------------------------------------------------------------------
cat >"$tmp/work.py" <<'PY'
class Burner:
    def burn(self):
        total = 0
        while True:
            total += sum(range(1000))

def outer():
    Burner().burn()

outer()
PY

# Records the workers for the window with the options given; prints the ns per run of its
# perf_event program.
measure() {
  local hz=$1
  shift
  "$bin/gp-record" -F "$hz" -p "$pids" -o /dev/null -q "$@" &
  sampler_pid=$!
  wait_attached "$sampler_pid"
  sleep 2  # tables loaded, Python processes announced
  read_bpf_stats "$sampler_pid"
  local n0=$bpf_pe_ns r0=$bpf_runs
  sleep "$window"
  read_bpf_stats "$sampler_pid"
  local n1=$bpf_pe_ns r1=$bpf_runs
  stop_sampler
  echo $(((n1 - n0) / ((r1 - r0) > 0 ? (r1 - r0) : 1)))
}

if part cost; then
  for ((i = 0; i < ncpu; i++)); do
    /usr/bin/python3 "$tmp/work.py" &
    workers+=($!)
  done
  pids=$(IFS=,; echo "${workers[*]}")
  sleep 1
  sysctl -qw kernel.bpf_stats_enabled=1
  printf 'cost: %d python3 busy 4 Python frames deep, recorded by pid %s s a round, %d rounds, medians\n' \
    "$ncpu" "$window" "$rounds"
  printf '%-6s %18s %18s %12s\n' Hz "native ns/sample" "+python ns/sample" "walk ns"
  for hz in $freqs; do
    : >"$tmp/off" && : >"$tmp/on"
    for ((r = 0; r < rounds; r++)); do
      measure "$hz" >>"$tmp/off"
      measure "$hz" --python-frames >>"$tmp/on"
    done
    off=$(median <"$tmp/off") on=$(median <"$tmp/on")
    printf '%-6s %18s %18s %12s\n' "$hz" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a - b }')"
  done
  sysctl -qw kernel.bpf_stats_enabled="$stats_before"
  stop_workers
  echo
fi

# --- agree --------------------------------------------------------------------------------------
# One round: the mix workers, both samplers at once; appends "round function schedule% bpf% bpf_n
# sampler% sampler_n" per function to $tmp/agree.
agree_round() {
  local r=$1 pids rec f
  for ((i = 0; i < agree_procs; i++)); do
    nice -n -20 /usr/bin/python3 "$root/tests/fixtures/src/gpyext_work.py" $((agree_seconds + 60)) mix &
    workers+=($!)
  done
  pids=$(IFS=,; echo "${workers[*]}")
  sleep 0.5
  nice -n -20 "$bin/gp-record" -q -d "$agree_seconds" -F 999 -p "$pids" --python-frames -o "$tmp/agree.gpa" \
    2>"$tmp/record.err" &
  rec=$!
  nice -n -20 "$bin/gp-runtime" --python-mode gp -F 50 -d "$agree_seconds" -p "$pids" -o "$tmp/rt.gpa" \
    2>"$tmp/runtime.err" || { echo "$bench: error: gp-runtime failed: $(cat "$tmp/runtime.err")" >&2; exit 1; }
  wait "$rec" || { echo "$bench: error: gp-record failed: $(cat "$tmp/record.err")" >&2; exit 1; }
  stop_workers
  "$bin/gp-symbolize" -q "$tmp/agree.gpa" | "$bin/gp-fold" -f folded --annotate | leaf_python_shares >"$tmp/bpf.shares"
  "$bin/gp-fold" -f folded --annotate "$tmp/rt.gpa" | leaf_python_shares >"$tmp/rt.shares"
  for f in spin_a:50.00 spin_b:29.94 spin_c:20.06; do
    awk -v r="$r" -v f="${f%%:*}" -v s="${f#*:}" '
      FNR == 1 { file++ } $1 == "all" { n[file] = $3 } $1 == f { p[file] = $2 }
      END { printf "%d %s %s %.2f %d %.2f %d\n", r, f, s, p[1], n[1], p[2], n[2] }' "$tmp/bpf.shares" "$tmp/rt.shares"
  done >>"$tmp/agree"
}

if part agree; then
  : >"$tmp/agree"
  printf 'agree: %d processes of the mix at nice -20 for %s s, gp-record -F 999 --python-frames and gp-runtime\n' \
    "$agree_procs" "$agree_seconds"
  printf '  --python-mode gp -F 50 at once; shares of each one'"'"'s Python samples (leaf frame); SE: the standard error\n'
  printf '  of the difference from the two counts\n'
  printf '%-5s %-7s %9s %16s %16s %8s %6s %8s %8s %10s %10s\n' round function schedule "BPF% (n)" "sampler% (n)" \
    "BPF-smp" SE "|d|/SE" "within 2" "BPF-sched" "smp-sched"
  for ((r = 1; r <= agree_rounds; r++)); do
    agree_round "$r"
    awk -v r="$r" '$1 == r {
      p = $4 / 100; se = 100 * sqrt(p * (1 - p) * (1 / ($5 > 0 ? $5 : 1) + 1 / ($7 > 0 ? $7 : 1))); d = $4 - $6
      printf "%-5d %-7s %9.2f %16s %16s %+8.2f %6.2f %8.1f %8s %+10.2f %+10.2f\n", r, $2, $3, sprintf("%.2f (%d)", $4, $5),
        sprintf("%.2f (%d)", $6, $7), d, se, (se > 0 ? (d < 0 ? -d : d) / se : 0), ((d <= 2 && d >= -2) ? "yes" : "NO"),
        $4 - $3, $6 - $3 }' "$tmp/agree"
  done
  awk '{ d = $4 - $6; if (d < 0) d = -d; if (d > m) m = d; n++; w += (d <= 2) }
       END { printf "largest |BPF - sampler|: %.2f points; within 2 points: %d of %d (round, function) pairs\n", m, w, n }' "$tmp/agree"
fi
