#!/usr/bin/env bats
# gp-runtime's Node support on real node processes running tests/fixtures/runtime/node/chain.js
# (main -> work -> spin): perf maps written by node itself (--perf-basic-prof) or switched on
# in a running node by the attach-maps adapter, resolved by gp-record | gp-symbolize; and the
# inspector adapter's own JS stacks. The adapters run through gp_node_adapter_run (a test
# driver of one adapter, built with the unit tests). Recording tests need root with BPF and BTF.
# bats file_tags=gp-runtime,node

load helpers
bats_require_minimum_version 1.5.0

setup() {
  require_command node
  OUT="$BATS_TEST_TMPDIR"
  CHAIN="$GP_SOURCE_DIR/tests/fixtures/runtime/node/chain.js"
  RUN_ADAPTER="$GP_BUILD_DIR/tests/gp_node_adapter_run"
  [ -x "$RUN_ADAPTER" ] || fail "missing $RUN_ADAPTER (built with the unit tests)"
  NODE_PID=
}

teardown() {
  if [ -n "$NODE_PID" ]; then
    kill -KILL "$NODE_PID" 2>/dev/null || true
    wait "$NODE_PID" 2>/dev/null || true
    rm -f "/tmp/perf-$NODE_PID.map"
  fi
}

# Starts chain.js with the given node options (60 s lifetime) and waits for its "ready" line.
# --inspect-port=0: SIGUSR1 opens the inspector on a free port (suites run in parallel).
start_node() {
  # --no-turbo-inlining: a busy machine gives TurboFan time to inline spin() into work()
  # anyway (seen in CI), and the tests look for both frames.
  # From $OUT: node 20 with --perf-basic-prof also writes isolate-*-v8.log into its working directory.
  (cd "$OUT" && exec node --inspect-port=0 --no-turbo-inlining "$@" "$CHAIN" 60 \
    >"$OUT/node.out" 2>"$OUT/node.err") &
  NODE_PID=$!
  for _ in $(seq 200); do
    grep -q '^ready' "$OUT/node.out" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "node did not start: $(cat "$OUT/node.err")"
}

# The number of sockets node holds open (the inspector adds a listening one).
socket_count() {
  find "/proc/$NODE_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l
}

# Folded stacks of $OUT/rec.gpa after symbolization.
folded() {
  gp-symbolize "$OUT/rec.gpa" 2>"$OUT/symbolize.err" | gp-fold -f folded
}

@test "a node started with --perf-basic-prof shows its JS functions after gp-record | gp-symbolize" {
  require_root_bpf
  start_node --perf-basic-prof
  timeout -s KILL 60 gp-record -p "$NODE_PID" -F 99 -d 4 -o "$OUT/rec.gpa"
  run -0 folded
  assert_output --regexp 'JS:[*^~]?work [^;]*chain\.js:[0-9]+:[0-9]+;JS:[*^~]?spin [^;]*chain\.js'
}

@test "the perf adapter warns about a node started without --perf-basic-prof" {
  start_node
  run -0 "$RUN_ADAPTER" perf "$NODE_PID" 1
  assert_line --partial "started without --perf-basic-prof: its JS frames stay unnamed"
  assert_line "stacks 0 samples 0"
}

@test "attach-maps switches perf maps on in a running node: gp-record | gp-symbolize names its JS functions" {
  require_root_bpf
  start_node
  local sockets_before
  sockets_before=$(socket_count)
  timeout -s KILL 60 gp-record -p "$NODE_PID" -F 99 -d 7 -o "$OUT/rec.gpa" &
  local rec=$!
  run -0 timeout -s KILL 60 "$RUN_ADAPTER" attach-maps "$NODE_PID" 5
  assert_output "stacks 0 samples 0"
  wait "$rec"
  run -0 folded
  assert_output --regexp 'JS:[*^~]?work [^;]*chain\.js:[0-9]+:[0-9]+;JS:[*^~]?spin [^;]*chain\.js'
  # Left as found: the inspector gp opened is closed again, and node still runs.
  [ "$(socket_count)" -eq "$sockets_before" ] || fail "node holds $(socket_count) sockets, had $sockets_before"
  kill -0 "$NODE_PID"
}

@test "attach-maps ends early on SIGTERM and still closes the inspector" {
  start_node
  local sockets_before
  sockets_before=$(socket_count)
  "$RUN_ADAPTER" attach-maps "$NODE_PID" 60 >"$OUT/run.out" &
  local run_pid=$!
  for _ in $(seq 200); do
    [ -s "/tmp/perf-$NODE_PID.map" ] && break
    sleep 0.1
  done
  grep -q ' JS:.spin .*chain\.js' "/tmp/perf-$NODE_PID.map" || fail "no map entry for spin"
  kill -TERM "$run_pid"
  timeout 30 tail --pid="$run_pid" -f /dev/null
  wait "$run_pid"
  [ "$(socket_count)" -eq "$sockets_before" ] || fail "the inspector is still open"
  # Off: the map no longer grows.
  local size
  size=$(stat -c %s "/tmp/perf-$NODE_PID.map")
  sleep 1
  [ "$(stat -c %s "/tmp/perf-$NODE_PID.map")" -eq "$size" ] || fail "the map still grows"
}

@test "inspector mode samples the JS call chain main;work;spin" {
  start_node
  run -0 timeout -s KILL 60 "$RUN_ADAPTER" inspector "$NODE_PID" 3
  assert_output --regexp '(^|;)main;work;spin [0-9]+'
  [ "$(socket_count)" -eq 0 ] || fail "the inspector is still open"
}

@test "a node that exits during the session yields gProfiler's error frame" {
  node --inspect-port=0 "$CHAIN" 2 >"$OUT/node.out" 2>&1 &
  NODE_PID=$!
  sleep 0.5
  run -1 timeout -s KILL 60 "$RUN_ADAPTER" inspector "$NODE_PID" 8
  assert_line "[Profiling error: process went down during profiling]"
}
