#!/usr/bin/env bats
# gp-profile's gProfiler options for hardware metrics (PerfSpect) and PyPerf, run for real: a
# stand-in PerfSpect with the real tool's command line and output files, gp-record's Python walk
# (--python-mode pyperf), gp-runtime's Python sampler on an interpreter under another name.
# Needs root (gp-profile's precondition).
# bats file_tags=gp-profile

load helpers
bats_require_minimum_version 1.5.0

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  profile_test_setup
}

teardown() {
  profile_test_kill
  wait 2>/dev/null || true
}

# A busy sh for gp-record to sample (BUSY).
start_busy() {
  sh -c 'while :; do :; done' &
  BUSY=$!
  PIDS+=("$BUSY")
}

# The .col header's (stdin) hwmetrics and, when there is one, the page htmlblob holds (gunzipped,
# from base64): "hwmetrics: <json>" then "html: <text>".
hw_of_col() {
  python3 -c '
import base64, gzip, json, sys
header = json.loads(sys.stdin.readline()[2:])
print("hwmetrics:", json.dumps(header["hwmetrics"], sort_keys=True))
blob = header["htmlblob"]
print("html:", None if blob is None else gzip.decompress(base64.b64decode(blob)).decode())
'
}

@test "--enable-hw-metrics-collection --perfspect-path: PerfSpect runs once, its summary in the .col header" {
  require_root_bpf
  # A stand-in for Intel PerfSpect's 'perfspect metrics' (github.com/intel/PerfSpect,
  # cmd/metrics): it takes the real tool's options (--duration, --output, the global --debug),
  # collects for the duration, then writes its summary of the run into the output directory as
  # <host>_metrics_summary.csv (summary.go's getCSV: "metric,mean,min,max,stddev", each value
  # %f) and <host>_metrics_summary.html, named by the host (its local target's name).
  cat >tmp/perfspect <<'SH'
#!/bin/sh
echo "$*" >>"${0%/*}/../perfspect.args"
[ "$1" = metrics ] || { echo "unknown command $1" >&2; exit 1; }
shift
debug=no
while [ $# -gt 0 ]; do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --debug) debug=yes; shift ;;
    *) echo "unknown flag $1" >&2; exit 1 ;;
  esac
done
sleep "$duration"
host=$(uname -n)
printf 'metric,mean,min,max,stddev\n%s\n%s\n' \
  'metric_CPU operating frequency (in GHz),2.401000,2.100000,2.900000,0.200000' \
  'metric_CPI,0.812000,0.700000,0.950000,0.050000' >"$output/${host}_metrics_summary.csv"
printf '<html><body>PerfSpect summary, debug %s</body></html>\n' "$debug" \
  >"$output/${host}_metrics_summary.html"
SH
  chmod +x tmp/perfspect
  start_busy
  # Two 2 s sessions: PerfSpect's 1 s is over by the end of the first.
  local args=(-d 2 -o out --pids "$BUSY" --perf-mode fp --no-java --no-python --no-php --no-ruby
    --no-flamegraph)
  bash -c 'until [ "$(ls out/profile_*.col 2>/dev/null | wc -l)" -ge 1 ]; do sleep 0.1; done; sleep 3' &
  local controller=$!
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${args[@]}" -c --controller-pid "$controller" \
    --enable-hw-metrics-collection --perfspect-path "$PWD/tmp/perfspect" --perfspect-duration 1 -v
  [[ "$stderr" == *"Using perfspect path: $PWD/tmp/perfspect"* ]] || fail "$stderr"
  # Started once, with gProfiler's command line (--debug: gp-profile's -v, gProfiler's verbose).
  [ "$(wc -l <perfspect.args)" -eq 1 ] || fail "$(cat perfspect.args)"
  grep -qx 'metrics --duration 1 --output /[^ ]*/perfspect_data --debug' perfspect.args ||
    fail "$(cat perfspect.args)"
  # gProfiler's hw_metrics.py: each metric's first column maps to its second (the mean), as
  # text; the page is gzipped and base64-encoded.
  hw_of_col <out/last_profile.col >hw
  cat >expected <<'EOF'
hwmetrics: {"metric_CPI": "0.812000", "metric_CPU operating frequency (in GHz)": "2.401000"}
html: <html><body>PerfSpect summary, debug yes</body></html>

EOF
  diff expected hw || fail "$(cat hw)"
}

@test "--enable-hw-metrics-collection without PerfSpect: said at start, with where to get it" {
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 1 -o out --pids "$BUSY" \
    --perf-mode fp --no-java --no-python --no-php --no-ruby --no-flamegraph \
    --enable-hw-metrics-collection
  [[ "$stderr" == *"warning: --enable-hw-metrics-collection: no hardware metrics without --perfspect-path: they need Intel PerfSpect, installed separately (https://github.com/intel/PerfSpect)"* ]] ||
    fail "$stderr"
  [[ "$stderr" != *"not implemented"* ]] || fail "$stderr"
  hw_of_col <out/last_profile.col >hw
  printf 'hwmetrics: null\nhtml: None\n' | diff - hw
  # (A --perfspect-path naming no file: gp-profile.bats.)
}

@test "--python-pyperf-verbose and --pyperf-user-stacks-pages: gp-record's Python walk diagnostics and stack copy" {
  require_root_bpf
  local gp_args=(-d 1 -o out --python-mode pyperf --perf-mode smart --no-java --no-php --no-ruby
    --no-flamegraph -vv)
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" \
    --python-pyperf-verbose --pyperf-user-stacks-pages 2
  # 2 pages of 4 KiB: the stack gp-record copies of a sample taken before its process's
  # unwind tables are loaded (PyPerf's copy for its native frames).
  grep -q 'gp-record .*--unwind-copy-size 8192 --python-frames -vv' <<<"$stderr" || fail "$stderr"
  # gp-record's debug lines, its Python walk's counters among them, in gp-profile's log.
  grep -q 'gp-record: session counters: .* python.processes=[0-9]' <<<"$stderr" || fail "$stderr"
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}"
  grep -q 'gp-record .*--python-frames' <<<"$stderr" || fail "$stderr"
  ! grep -q 'gp-record .*--unwind-copy-size\|gp-record .* -vv\|session counters' <<<"$stderr" ||
    fail "$stderr"
  # More pages than gp-record copies: its largest, said.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" --pyperf-user-stacks-pages 9
  [[ "$stderr" == *"warning: --pyperf-user-stacks-pages 9: gp-record copies at most 4 pages of stack; it copies 4"* ]] ||
    fail "$stderr"
  grep -q 'gp-record .*--unwind-copy-size 16384' <<<"$stderr" || fail "$stderr"
}

@test "--python-pyspy-process: an interpreter under another name is profiled as Python" {
  require_root_bpf
  require_command python3
  # Debian's python3 has libpython linked in: a copy named pyapp maps no libpython and has no
  # Python name, so gp (as gProfiler) does not recognise it as Python.
  cp "$(readlink -f /usr/bin/python3)" tmp/pyapp
  cat >app.py <<'PY'
def spin_in_app():
    n = 0
    while True:
        n += 1

spin_in_app()
PY
  tmp/pyapp app.py &
  local app=$!
  PIDS+=("$app")
  local gp_args=(-d 2 -o out --pids "$app" --perf-mode fp --python-mode gp --no-java --no-php
    --no-ruby --no-flamegraph)
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" --python-pyspy-process "$app"
  grep -q ';pyapp;.*spin_in_app (.*/app.py:[0-9]*)_\[p\]' out/last_profile.col ||
    fail "$(cut -c1-300 out/last_profile.col)"
  # Without it: the native stacks of gp-record only (--python-mode gp: gp-runtime's own sampler,
  # no walk of Python frames by gp-record).
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}"
  grep -q ';pyapp;' out/last_profile.col || fail "$(cut -c1-300 out/last_profile.col)"
  run -1 grep -q 'spin_in_app' out/last_profile.col
}
