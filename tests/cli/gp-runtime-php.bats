#!/usr/bin/env bats
# gp-runtime's PHP support end to end: gp's own PHP sampler (--php-mode gp) on live php8.2
# processes, folded by gp-fold into gProfiler's phpspy frames "[Class::]func FILE:LINE_[php]"
# under the literal root "php". The target (tests/fixtures/runtime/php/target.php) runs a known
# chain through class methods, closures, array_map and usort calling back into user code and an
# included file, writes PHP's own debug_backtrace() to a file and spins; the test turns that
# trace into the frames phpspy would print and expects exactly those. Then the bad cases: an
# unknown PHP version, an interpreter without executor_globals, a process that exits, a
# corrupted execute_data chain; and --php-proc-filter, auto and the default (disabled).
# bats file_tags=gp-runtime,php

load helpers
bats_require_minimum_version 1.5.0

setup() {
  OUT="$BATS_TEST_TMPDIR"
  SCRIPT="$GP_SOURCE_DIR/tests/fixtures/runtime/php/target.php"
  PHP=/usr/bin/php8.2
  PIDS=()
  require_command "$PHP"
  require_command jq
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}

# start_target [PHP_BINARY]: runs target.php, waits for its trace; sets PHP_PID and TRACE.
start_target() {
  local bin=${1:-$PHP}
  TRACE="$OUT/trace.$RANDOM.json"
  "$bin" -n "$SCRIPT" "$TRACE" >/dev/null 2>"$OUT/target.err" &
  PHP_PID=$!
  PIDS+=("$PHP_PID")
  for _ in $(seq 600); do
    [ -e "$TRACE" ] && return 0
    sleep 0.1
  done
  fail "target.php did not start: $(cat "$OUT/target.err")"
}

@test "--php-mode gp: frames as phpspy names them, equal to PHP's own debug_backtrace()" {
  start_target
  local want
  want=$(php_expected_frames "$TRACE")
  # The chain the fixture builds, spelled out once so a wrong conversion cannot hide it.
  [[ "$want" == "<main> $SCRIPT:39_[php];Shop::checkout $SCRIPT:13_[php];array_map <internal>:-1_[php];Shop::{closure} $SCRIPT:13_[php];Shop::price $SCRIPT:17_[php];sort_prices $SCRIPT:22_[php];usort <internal>:-1_[php];{closure} $SCRIPT:22_[php];compare $SCRIPT:27_[php];<main> ${SCRIPT%/*}/spin.php:3_[php];record_and_spin $SCRIPT:36_[php]" ]] ||
    fail "unexpected trace: $want"
  run -0 gp-runtime --php-mode gp --php-proc-filter php -F 99 -p "$PHP_PID" -d 2 -o "$OUT/rt.gpa"
  assert_output --partial "pid $PHP_PID (php8.2): php via gp-php:"
  run -0 gp-fold "$OUT/rt.gpa"
  php_samples_are "$want" 100
  # App metadata: the version the engine announces, as `php -v` prints it.
  assert_output --partial "\"php_version\": \"PHP $("$PHP" -n -r 'echo PHP_VERSION;') (cli)"
}

@test "--php-proc-filter: gProfiler's default (php-fpm) leaves a CLI php alone; a regex selects" {
  start_target
  run -1 gp-runtime --php-mode gp -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "process $PHP_PID: a PHP process whose comm 'php8.2' does not match --php-proc-filter 'php-fpm'"
  run -0 gp-runtime --php-mode gp --php-proc-filter '^php[0-9.]*$' -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "php via gp-php:"
  run -2 gp-runtime --php-mode gp --php-proc-filter '(' -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "gp-runtime: error: invalid --php-proc-filter '(': "
}

@test "PHP is disabled by default (as in gProfiler); auto without phpspy is gp's sampler" {
  start_target
  # Disabled: a php process is no target at all.
  run -1 gp-runtime --php-proc-filter php -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "process $PHP_PID: not a "
  refute_output --partial "php via"
  PATH="$GP_BUILD_DIR/bin:/usr/bin:/bin" run -0 gp-runtime --php-mode auto --php-proc-filter php \
    -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "php via gp-php:"
  PATH="$GP_BUILD_DIR/bin:/usr/bin:/bin" run -1 gp-runtime --php-mode phpspy --php-proc-filter php \
    -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: phpspy is not installed"
}

# A copy of php8.2 named php in $OUT/$1, with the bytes $2 replaced by $3 (same length).
patched_php() {
  mkdir -p "$OUT/$1"
  python3 - "$PHP" "$OUT/$1/php" "$2" "$3" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
old, new = sys.argv[3].encode(), sys.argv[4].encode()
assert data.count(old) == 1 and len(old) == len(new), "pattern not found once"
open(sys.argv[2], "wb").write(data.replace(old, new))
PY
  chmod +x "$OUT/$1/php"
}

@test "an unknown PHP version gets gProfiler's skip frame naming it, never a guessed walk" {
  patched_php v99 "X-Powered-By: PHP/8.2." "X-Powered-By: PHP/9.9."
  start_target "$OUT/v99/php"
  local micro
  micro=$("$PHP" -n -r 'echo PHP_RELEASE_VERSION;')
  run -1 gp-runtime --php-mode gp --php-proc-filter php -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: PHP 9.9.$micro is not supported by gp's sampler (7.4, 8.2, 8.4, 8.5)]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --regexp "
[0-9]+;;php;\[Profiling skipped: PHP 9\.9\.$micro is not supported by gp's sampler \(7\.4, 8\.2, 8\.4, 8\.5\)\] 1$"
}

@test "an interpreter without executor_globals (ZTS or stripped) gets a skip frame" {
  patched_php noeg "executor_globals" "executor_globalZ"
  start_target "$OUT/noeg/php"
  run -1 gp-runtime --php-mode gp --php-proc-filter php -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: '$OUT/noeg/php' (PHP 8.2."
  assert_output --partial ") has no executor_globals symbol (a ZTS build, or stripped)]"
}

@test "a php process that exits mid-session gets gProfiler's error frame" {
  "$PHP" -n -r 'function f() { $end = microtime(true) + 1.5; while (microtime(true) < $end) {} } f();' &
  PHP_PID=$!
  PIDS+=("$PHP_PID")
  sleep 0.3
  run -0 gp-runtime --php-mode gp --php-proc-filter php -p "$PHP_PID" -d 4 -o "$OUT/rt.gpa"
  assert_output --partial "php via gp-php: exited during the session: [Profiling error: process went down during profiling]"
}

# Overwrites prev_execute_data of the caller of the running frame in process $1 with $2, through
# /proc/PID/mem (offsets of PHP 8.2: executor_globals.current_execute_data at 488,
# zend_execute_data.prev_execute_data at 48; the layout unit test checks them).
corrupt_chain() {
  python3 - "$1" "$2" "$PHP" <<'PY'
import struct, subprocess, sys
pid, value, php = int(sys.argv[1]), int(sys.argv[2], 0), sys.argv[3]
sym = [l.split() for l in subprocess.run(["nm", "-D", php], capture_output=True, text=True).stdout.splitlines()]
eg = int(next(s[0] for s in sym if len(s) == 3 and s[2] == "executor_globals"), 16)
base = None
for line in open(f"/proc/{pid}/maps"):
    f = line.split()
    if len(f) >= 6 and f[5] == php and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
        break
with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
    def read(addr):
        mem.seek(addr)
        return struct.unpack("<Q", mem.read(8))[0]
    ex = read(base + eg + 488)
    caller = read(ex + 48)
    mem.seek(caller + 48)
    mem.write(struct.pack("<Q", value))
PY
}

@test "a corrupted execute_data chain is an error frame; the session goes on with the others" {
  "$PHP" -n -r 'function inner() { sleep(1000); } function outer() { inner(); } outer();' &
  local bad=$!
  PIDS+=("$bad")
  start_target
  sleep 0.3
  corrupt_chain "$bad" 0x10
  run -3 gp-runtime --php-mode gp --php-proc-filter php -p "$bad,$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "pid $bad (php8.2): php via gp-php: [Profiling error: cannot walk the PHP stack: cannot read execute_data (depth 2) at 0x10: "
  assert_output --regexp "pid $PHP_PID \(php8.2\): php via gp-php: [0-9]+ samples"
  kill -0 "$bad" || fail "the corrupted process died"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial ";php;[Profiling error: cannot walk the PHP stack: cannot read execute_data (depth 2) at 0x10: "
  assert_output --partial ";php;<main> $SCRIPT:39_[php];Shop::checkout $SCRIPT:13_[php];"
}
