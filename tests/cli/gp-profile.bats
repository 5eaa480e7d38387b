#!/usr/bin/env bats
# gp-profile: the gProfiler-compatible driver, run for real (gp-record with BPF, gp-merge,
# gp-symbolize, gp-fold, gp-flame, gp-upload; gp-runtime when it is built) against the
# loopback Performance Studio of tests/servers/studio.py. Recording tests need root with BPF
# and BTF (tagged root,bpf); one-shot runs are under `timeout`, continuous ones are killed by
# teardown if a test fails. Every wait is generous: the CI machine is small and shared.
# bats file_tags=gp-profile

load helpers
bats_require_minimum_version 1.5.0

SERVERS="$GP_SOURCE_DIR/tests/servers"
TOKEN="s3cret-token-XYZ"

setup() {
  cd "$BATS_TEST_TMPDIR"
  PIDS=()
  # gp-profile's temporary files go here, so its children are recognisable by their
  # command lines (pgrep -f) and leftovers are visible.
  mkdir -p tmp
  export TMPDIR="$BATS_TEST_TMPDIR/tmp"
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  pkill -KILL -f "$BATS_TEST_TMPDIR/tmp/" 2>/dev/null || true
}

# A CPU-bound process to profile (its comm is 'sh'); its pid is $busy.
start_busy() {
  sh -c 'while :; do :; done' &
  busy=$!
  PIDS+=("$busy")
}

start_studio() {
  require_command python3
  rm -f studio.port
  python3 "$SERVERS/studio.py" --port-file studio.port --log studio.log --store store \
    --token "$TOKEN" "$@" 2>studio.err &
  PIDS+=($!)
  local i
  for i in $(seq 100); do [ -s studio.port ] && break; sleep 0.1; done
  studio="http://127.0.0.1:$(cat studio.port)"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Profile POSTs the studio answered with 200 (stored files).
stored() { find store -name '*.gz' 2>/dev/null | wc -l; }

# wait_for SECONDS COMMAND...: polls until COMMAND succeeds; fails the test after SECONDS.
wait_for() {
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 5; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  fail "timed out after ${limit}s waiting for: $*"
}

at_least() { [ "$("$2")" -ge "$1" ]; }
children_running() { pgrep -f "$BATS_TEST_TMPDIR/tmp/" >/dev/null; }
no_children() { ! pgrep -f "$BATS_TEST_TMPDIR/tmp/" >/dev/null; }
sessions_logged() { grep -c 'session [0-9]*: ' "$1" 2>/dev/null || echo 0; }

# Checks that a .col file has a JSON header and at least one stack line with a count.
check_col() {
  python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
assert lines[0].startswith("# "), lines[0][:80]
header = json.loads(lines[0][2:])
assert "metadata" in header, header.keys()
assert len(lines) > 1, "no stacks"
for l in lines[1:]:
    stack, count = l.rsplit(" ", 1)
    assert int(count) > 0 and stack, l
PY
}

# ---------------------------------------------------------------------------------------------
# Usage errors (no root needed): gProfiler's rules and messages, exit 2.

@test "no output at all is a usage error with gProfiler's message" {
  run -2 --separate-stderr gp-profile -d 1
  assert_equal "${lines[*]}" ""
  [[ "$stderr" == *"gp-profile: error: must pass at least one output method (--upload-results / --output-dir)"* ]] || fail "$stderr"
  [[ "$stderr" == *"Try 'gp-profile --help'"* ]] || fail "$stderr"
}

@test "--upload-results needs --token, then --service-name" {
  run -2 --separate-stderr gp-profile -u -o out
  [[ "$stderr" == *"must provide --token when --upload-results is passed"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile -cu --token "$TOKEN"
  [[ "$stderr" == *"must provide --service-name when --upload-results is passed"* ]] || fail "$stderr"
  [[ "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  [ ! -e out ]
}

@test "--perf-mode dwarf is refused (gp-record has no DWARF unwinder); smart needs -f <= 100" {
  run -2 --separate-stderr gp-profile --perf-mode dwarf -o out
  [[ "$stderr" == *"gp-profile: error: --perf-mode dwarf is not available"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --perf-mode smart -f 101 -o out
  [[ "$stderr" == *"can't be larger than 100 when using --perf-mode smart|dwarf"* ]] || fail "$stderr"
}

@test "bad values and impossible combinations are usage errors" {
  run -2 --separate-stderr gp-profile --perf-mode lbr -o out
  [[ "$stderr" == *"gp-profile: error: "*"lbr"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --java-mode bogus -o out
  [[ "$stderr" == *"bogus"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --no-perf --nodejs-mode perf -o out
  [[ "$stderr" == *"--nodejs-mode perf requires --perf-mode fp or smart"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile -d 0 -o out
  run -2 --separate-stderr gp-profile upload-file --token "$TOKEN" --service-name web
  [[ "$stderr" == *"--file-path"* ]] || fail "$stderr"
}

@test "every profiler disabled is refused like gProfiler's 'All profilers are disabled!'" {
  run -2 --separate-stderr gp-profile --perf-mode none --no-java --no-python --no-ruby -o out
  [[ "$stderr" == *"all profilers are disabled!"* ]] || fail "$stderr"
}

@test "--rootless needs --pids and cannot be used as root" {
  run -2 --separate-stderr gp-profile --rootless -o out
  [[ "$stderr" == *"--rootless requires --pids"* ]] || fail "$stderr"
  if [ "$(id -u)" -eq 0 ]; then
    run -2 --separate-stderr gp-profile --rootless --pids 1 -o out
    [[ "$stderr" == *"--rootless cannot be used when running as root"* ]] || fail "$stderr"
  fi
}

@test "without root and without --rootless it stops at once with exit 1" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
  require_command setpriv
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" -d 1 -o "$BATS_TEST_TMPDIR/out"
  [[ "$stderr" == *"gp-profile: error: Must run gp-profile as root"* ]] || fail "$stderr"
}

@test "--pids with no live process stops at once with exit 1, as gProfiler does" {
  [ "$(id -u)" -eq 0 ] || skip "needs root (the root check comes first)"
  sh -c 'exit 0' &
  dead=$!
  wait "$dead"
  run -1 --separate-stderr gp-profile -d 1 -o out --pids "$dead"
  [[ "$stderr" == *"gp-profile: error: none of the processes given with --pids is running"* ]] || fail "$stderr"
}

# ---------------------------------------------------------------------------------------------
# upload-file (gprofiler.md §8.5): no root, delegates to gp-upload.

@test "upload-file sends an existing .col to the Studio, stacks unchanged" {
  start_studio
  now=$(date -u +%Y-%m-%dT%H:%M:%S)
  printf '# {"metadata": {"hostname": "h1", "agent_version": "1.57.1", "current_time": "%s", "spawn_time": "%s"}}\n0;;python;main;work 7\n1;web;java;Main.run 3\n' "$now" "$now" > a.col
  run -0 --separate-stderr gp-profile upload-file --file-path a.col --token "$TOKEN" \
    --service-name web --server-host "$studio"
  [[ "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  assert_equal "$(stored)" 1
  python3 - <<'PY'
import json
posts = [e for e in map(json.loads, open("studio.log")) if e["method"] == "POST"]
assert len(posts) == 1
b, h = posts[0]["body"], posts[0]["headers"]
assert h["content-encoding"] == "gzip" and h["gprofiler-service-name"] == "web", h
assert b["profile"].split("\n", 1)[1].rstrip("\n") == "0;;python;main;work 7\n1;web;java;Main.run 3", b["profile"]
PY
}

@test "upload-file reports the Studio's refusal with gp-upload's status" {
  start_studio
  printf '# {"metadata": {"hostname": "h1"}}\nmain 1\n' > a.col
  run -1 --separate-stderr gp-profile --token wrong --service-name web --server-host "$studio" \
    upload-file --file-path a.col
  [[ "$stderr" == *"Invalid API key"* ]] || fail "$stderr"
  assert_equal "$(stored)" 0
}

# ---------------------------------------------------------------------------------------------
# Real profiling sessions (root, BPF).

@test "one session: -d 2 -o DIR writes profile_<time>.col and .html and the last_* links" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$busy"
  [[ "$stderr" == *"session 1: "*" samples, wrote '"* ]] || fail "$stderr"
  run ls out
  assert_line --regexp '^profile_[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.col$'
  assert_line --regexp '^profile_[0-9T:-]+\.html$'
  col=$(cd out && ls profile_*.col)
  assert_equal "$(readlink out/last_profile.col)" "$col"
  assert_equal "$(readlink out/last_flamegraph.html)" "${col%.col}.html"
  check_col out/last_profile.col
  grep -q ';sh;' out/last_profile.col || fail "the busy shell is missing: $(head -c 600 out/last_profile.col)"
  grep -q '<html' out/last_flamegraph.html
  [ -z "$(ls tmp)" ] || fail "temporary files left: $(ls -R tmp)"
}

@test "--no-flamegraph writes the .col only" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 -o out --pids "$busy" --no-flamegraph
  run ls out
  assert_line --regexp '^profile_.*\.col$'
  refute_line --regexp '\.html$'
}

@test "continuous: three sessions uploaded and rotated; SIGTERM ends it cleanly" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  gp-profile -c -d 2 -f 99 --pids "$busy" -u --server-host "$studio" \
    --token "$TOKEN" --service-name svc -o out --rotating-output --pid-file gp.pid \
    --log-file gp.log 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 at_least 3 stored
  # A second instance is refused while the first runs (gprofiler.md §9.4).
  run -1 --separate-stderr gp-profile -d 1 -o other
  [[ "$stderr" == *"is it already running?"* ]] || fail "$stderr"
  assert_equal "$(cat gp.pid)" "$gp"
  # Stop it in the middle of a session: its stages must go with it.
  wait_for 120 children_running
  kill -TERM "$gp"
  status=0
  for _ in $(seq 150); do kill -0 "$gp" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$gp" 2>/dev/null && fail "gp-profile still runs 30 s after SIGTERM"
  wait "$gp" || status=$?
  assert_equal "$status" 0
  wait_for 10 no_children
  [ ! -e gp.pid ] || fail "pid file left behind"
  [ -z "$(ls tmp)" ] || fail "temporary files left: $(ls -R tmp)"
  grep -q 'stopped by signal' gp.err || fail "$(cat gp.err)"
  grep -q 'session 3: ' gp.log || fail "log file: $(cat gp.log)"
  ! grep -q "$TOKEN" gp.err gp.log || fail "the token was logged"
  # Every upload is the agent's request: gzip JSON with a .col whose first line is the header.
  python3 - "$TOKEN" <<'PY'
import json, sys
posts = [e for e in map(json.loads, open("studio.log")) if e["method"] == "POST"]
assert len(posts) >= 3, len(posts)
busy = 0
for p in posts[:3]:
    h, b = p["headers"], p["body"]
    assert h["content-encoding"] == "gzip" and h["content-type"] == "application/json", h
    assert h["gprofiler-api-key"] == sys.argv[1] and h["gprofiler-service-name"] == "svc", h
    head = b["profile"].split("\n", 1)[0]
    assert json.loads(head[2:])["metadata"]["hostname"], head
    busy += ";sh;" in b["profile"]  # a loaded machine may leave one session without samples
    assert len(b["start_time"]) == 19 and b["start_time"] <= b["end_time"], b
assert busy >= 1, "the busy shell is in no upload"
PY
  # --rotating-output: only the newest .col/.html are left, and the links point at them.
  run ls out
  assert_equal "$(ls out | grep -c '^profile_.*\.col$')" 1
  assert_equal "$(ls out | grep -c '^profile_.*\.html$')" 1
  col=$(cd out && ls profile_*.col)
  assert_equal "$(readlink out/last_profile.col)" "$col"
  assert_equal "$(readlink out/last_flamegraph.html)" "${col%.col}.html"
  check_col out/last_profile.col
  [ ! -e out/last_profile.col.tmp ]
}

@test "continuous: a failing upload is logged and the loop goes on" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  closed=$(free_port)
  gp-profile -c -d 1 --pids "$busy" -u --server-host "http://127.0.0.1:$closed" \
    --token "$TOKEN" --service-name svc -o out --server-upload-timeout 5 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  count_cols() { ls out 2>/dev/null | grep -c '^profile_.*\.col$'; }
  wait_for 300 at_least 2 count_cols
  wait_for 120 grep -q 'session 2: gp-upload failed' gp.err
  kill -TERM "$gp"
  status=0
  wait "$gp" || status=$?
  assert_equal "$status" 0
  grep -q 'session 1: gp-upload failed (exit status 1' gp.err || fail "$(cat gp.err)"
  ! grep -q "$TOKEN" gp.err || fail "the token was logged"
}

@test "continuous: a Studio answering 500 does not stop the loop either" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio --fail 1000
  gp-profile -c -d 1 --pids "$busy" -u --server-host "$studio" \
    --token "$TOKEN" --service-name svc 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 grep -q 'session 2: gp-upload failed' gp.err
  kill -TERM "$gp"
  status=0
  wait "$gp" || status=$?
  assert_equal "$status" 0
  grep -q 'HTTP 500' gp.err || fail "$(cat gp.err)"
}
