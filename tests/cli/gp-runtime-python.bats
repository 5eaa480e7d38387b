#!/usr/bin/env bats
# gp-runtime's Python support end to end: gp's own CPython sampler (--python-mode gp) on a live
# Python 3.11 script (tests/fixtures/runtime/python/target.py: four busy threads, one of them
# 50 calls deep, one inside a generator, one calling a C function), folded by gp-fold into
# gProfiler's py-spy frames "func (/path/file.py:first line)_[p]"; a process that exits
# mid-session; and py-spy mode without py-spy installed.
# bats file_tags=gp-runtime,python

load helpers
bats_require_minimum_version 1.5.0

setup() {
  OUT="$BATS_TEST_TMPDIR"
  SCRIPT="$GP_SOURCE_DIR/tests/fixtures/runtime/python/target.py"
  PY_PID=
}

teardown() {
  if [ -n "$PY_PID" ]; then
    kill -KILL "$PY_PID" 2>/dev/null || true
    wait "$PY_PID" 2>/dev/null || true
  fi
}

# Starts target.py and waits until its threads have settled (it writes its snapshot then).
start_target() {
  /usr/bin/python3 "$SCRIPT" "$OUT/snapshot" 2>"$OUT/target.err" &
  PY_PID=$!
  for _ in $(seq 600); do
    [ -e "$OUT/snapshot" ] && return 0
    sleep 0.1
  done
  fail "target.py did not start: $(cat "$OUT/target.err")"
}

@test "--python-mode gp: the script's functions as func (file:line)_[p] frames" {
  start_target
  run -0 gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 4 -o "$OUT/rt.gpa"
  run -0 gp-fold "$OUT/rt.gpa"
  # The first line of each function, as py-spy -F prints it (gProfiler's format).
  assert_output --partial "spin_outer ($SCRIPT:31)_[p];spin_inner ($SCRIPT:24)_[p]"
  assert_output --partial "consume ($SCRIPT:50)_[p];numbers ($SCRIPT:42)_[p]"
  assert_output --partial "call_c ($SCRIPT:55)_[p]"
  assert_output --partial "Thread._bootstrap (/usr/lib/python3.11/threading.py:"
  # 51 recurse frames in a row: recurse(50) .. recurse(0).
  assert_output --regexp "(recurse \($SCRIPT:35\)_\[p\];){50}recurse \($SCRIPT:35\)_\[p\] [0-9]+"
  refute_output --partial "idle_wait"  # the main thread sleeps without the GIL
}

@test "Python frames carry gProfiler's [pkg==ver] and [standard-library==X.Y.Z], not with --no-python-versions" {
  start_venv_target
  local main="$BATS_TEST_TMPDIR/main.py"
  run -0 gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 2 -o "$OUT/rt.gpa"
  run -0 gp-fold "$OUT/rt.gpa"
  # A file of an installed package: its metadata's name and version after the line.
  assert_output --partial "main ($main:2)_[p];spin ($VENV_SITE/tinypkg/__init__.py:1 [TinyPkg==1.2.3])_[p] "
  # The standard library: Python's full version, read from the interpreter binary.
  assert_output --regexp "Thread\.run \(/usr/lib/python3\.[0-9]+/threading\.py:[0-9]+ \[standard-library==$PY_FULL_VERSION\]\)_\[p\];main \($main:2\)_\[p\]"
  run -0 gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 1 --no-python-versions -o "$OUT/plain.gpa"
  run -0 gp-fold "$OUT/plain.gpa"
  assert_output --partial "main ($main:2)_[p];spin ($VENV_SITE/tinypkg/__init__.py:1)_[p] "
  refute_output --partial "standard-library=="
  refute_output --partial "[TinyPkg"
}

@test "--python-mode gp: a process that exits mid-session gets gProfiler's error frame" {
  /usr/bin/python3 -c 'import time; time.sleep(1.5)' &
  PY_PID=$!
  sleep 0.5
  # A target that exits is churn, not a failure: reported once, exit 0.
  run -0 gp-runtime --python-mode gp -p "$PY_PID" -d 4 -o "$OUT/rt.gpa"
  assert_output --partial "python via gp-python: exited during the session: [Profiling error: process went down during profiling]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial ";python3;[Profiling error: process went down during profiling] 1"
}

@test "--python-mode py-spy without py-spy: a per-process skip frame" {
  start_target
  PATH="$GP_BUILD_DIR/bin:/usr/bin:/bin" run -1 gp-runtime --python-mode py-spy -p "$PY_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: py-spy is not installed (not on PATH)]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: py-spy is not installed (not on PATH)]"
}

@test "--min-duration leaves out a process younger than it, and profiles one that is older" {
  start_target
  run -0 --separate-stderr gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 2 --min-duration 3600 \
    -v -o "$OUT/young.gpa"
  [[ "$stderr" == *"not profiling pid $PY_PID (python3): it started "*" s ago (minimum age 3600 s)"* ]] ||
    fail "$stderr"
  run -0 gp-fold -f folded "$OUT/young.gpa"
  refute_output --partial "target.py:"
  sleep 1.2  # now at least a second old
  run -0 --separate-stderr gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 2 --min-duration 1 \
    -o "$OUT/old.gpa"
  run -0 gp-fold -f folded "$OUT/old.gpa"
  assert_output --partial "target.py:"
}

@test "--max-processes N profiles the N busiest processes of a runtime and names the others" {
  local busy1 busy2 idle
  /usr/bin/python3 -c 'while True: pass' & busy1=$!
  /usr/bin/python3 -c 'while True: pass' & busy2=$!
  /usr/bin/python3 -c 'import time; time.sleep(60)' & idle=$!
  sleep 1
  run -0 --separate-stderr gp-runtime --python-mode gp -F 20 -p "$busy1,$busy2,$idle" -d 2 \
    --max-processes 2 -v -o "$OUT/max.gpa"
  kill "$busy1" "$busy2" "$idle" 2>/dev/null || true
  wait "$busy1" "$busy2" "$idle" 2>/dev/null || true
  [[ "$stderr" == *"not profiling pid $idle (python3): not among the 2 busiest python processes ("*"% CPU)"* ]] ||
    fail "$stderr"
  [[ "$stderr" != *"not profiling pid $busy1 "* && "$stderr" != *"not profiling pid $busy2 "* ]] || fail "$stderr"
  run -0 gp-fold -f folded --with-pid "$OUT/max.gpa"
  assert_line --regexp "^python3-$busy1;"
  assert_line --regexp "^python3-$busy2;"
  refute_output --partial "python3-$idle;"
}
