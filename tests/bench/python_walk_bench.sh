#!/usr/bin/env bash
# BPF time per sample of gp-record on a CPU-bound CPython workload, with and without the
# Python frame walk (--python-frames), at each frequency.
#
#   tests/bench/python_walk_bench.sh [-f "99 999"] [-w SECONDS] [-r ROUNDS]
#
# One busy python3 per CPU (a method in a loop, 4 Python frames deep) runs while gp-record
# records them by pid for -w SECONDS (default 10), alternately without and with
# --python-frames, -r ROUNDS times (default 3). kernel.bpf_stats_enabled gives the run time and
# runs of gp-record's perf_event program; the table shows the median ns per sample of the rounds
# and the walk's own cost (the difference). Needs root; GP_BUILD_DIR points at the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="${GP_BUILD_DIR:-$root/build}/bin"
freqs="99 999" window=10 rounds=3
while getopts "f:w:r:" o; do
  case $o in
    f) freqs=$OPTARG ;;
    w) window=$OPTARG ;;
    r) rounds=$OPTARG ;;
    *) exit 2 ;;
  esac
done
bench=python_walk_bench
tmp=$(mktemp -d /tmp/$bench.XXXXXX)
ncpu=$(nproc)
. "$root/tests/bench/sampler_lib.sh"
workers=()
stats_before=$(sysctl -n kernel.bpf_stats_enabled)
cleanup_extra='kill ${workers[*]} 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled=$stats_before'
install_cleanup

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
for ((i = 0; i < ncpu; i++)); do
  /usr/bin/python3 "$tmp/work.py" &
  workers+=($!)
done
pids=$(IFS=,; echo "${workers[*]}")
sleep 1
sysctl -qw kernel.bpf_stats_enabled=1

# Records for the window with the options given; prints the ns per run of its perf_event program.
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
