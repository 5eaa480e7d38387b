#!/usr/bin/env bats
# gp-runtime (core): options and usage errors, --pids messages, per-process skip frames while
# other processes are still profiled, SIGTERM mid-session, and archives that gp-merge and
# gp-fold take. Real Python and Ruby processes; Python is profiled by gp's own sampler.

bats_require_minimum_version 1.5.0
load helpers

PY=/usr/bin/python3

setup() {
  cd "$BATS_TEST_TMPDIR"
  pids=()
}

teardown() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

# A busy Python process (work() under main()); returns once the interpreter runs the loop.
start_python() {
  cat > busy.py <<'PYEOF'
import time
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def main():
    open("ready", "w").close()
    end = time.time() + 120
    while time.time() < end:
        work(10000)
main()
PYEOF
  rm -f ready
  "$PY" busy.py &
  PY_PID=$!
  disown "$PY_PID"
  pids+=("$PY_PID")
  for _ in $(seq 1 600); do [ -e ready ] && return 0; sleep 0.1; done
  fail "python did not start"
}

start_ruby() {
  ruby -e 'sleep 120' &
  RB_PID=$!
  disown "$RB_PID"
  pids+=("$RB_PID")
  for _ in $(seq 1 600); do grep -q libruby "/proc/$RB_PID/maps" 2>/dev/null && return 0; sleep 0.1; done
  fail "ruby did not start"
}

rbspy_installed() {
  command -v rbspy >/dev/null && return 0
  for d in /root/.cargo/bin /usr/local/bin /opt/rbspy/bin /opt/gprofiler/ruby; do
    [ -x "$d/rbspy" ] && return 0
  done
  return 1
}

@test "--help exits 0 and shows the modes and examples" {
  run --separate-stderr gp-runtime --help
  assert_success
  assert_output --partial 'gp-runtime -d 30 -o runtime.gpa'
  assert_output --partial '--java-mode'
  assert_output --partial '--nodejs-mode'
  assert_output --partial '--no-profile-spawned-processes'
}

@test "--version names the tool" {
  run gp-runtime --version
  assert_success
  assert_output --regexp '^gp-runtime \(gp\) [0-9]+\.[0-9]+'
}

@test "an unknown mode is a usage error naming the choices" {
  run --separate-stderr gp-runtime --java-mode bogus -o x.gpa
  assert_failure 2
  stderr_has "gp-runtime: error: --java-mode: invalid value 'bogus': expected one of auto, ap, jfr, disabled, none"
  stderr_has "Try 'gp-runtime --help' for more information."
  run --separate-stderr gp-runtime --ruby-mode pyspy -o x.gpa
  assert_failure 2
  [ ! -e x.gpa ] || fail "an archive was written after a usage error"
}

@test "pyperf is accepted with a warning and means auto" {
  run --separate-stderr gp-runtime --python-mode pyperf -p 999999999 -o x.gpa
  assert_failure 1
  stderr_has "gp-runtime: warning: --python-mode pyperf is not supported by gp: using 'auto' instead"
}

@test "--pids of a process that does not exist: a clear error and exit 1" {
  sleep 0.01 &
  local gone=$!
  wait "$gone"
  run --separate-stderr gp-runtime -d 2 -p "$gone" -o out.gpa
  assert_failure 1
  stderr_has "gp-runtime: error: process $gone: no such process"
}

@test "--pids of a process that runs no enabled runtime is named with its comm" {
  sleep 60 &
  local sleeper=$!
  disown "$sleeper"
  pids+=("$sleeper")
  run --separate-stderr gp-runtime -d 2 -p "$sleeper" -o out.gpa
  assert_failure 1
  stderr_has "gp-runtime: error: process $sleeper: not a Java, Python, Ruby process (comm 'sleep')"
  start_python
  run --separate-stderr gp-runtime -d 2 --no-python -p "$PY_PID" -o out.gpa
  assert_failure 1
  stderr_has "process $PY_PID: not a Java, Ruby process (comm 'python3')"
}

@test "a process whose profiler is unavailable is skipped, while the others are profiled" {
  rbspy_installed && skip "rbspy is installed here: the ruby process would be profiled"
  start_python
  start_ruby
  run --separate-stderr gp-runtime -d 3 --python-mode gp --ruby-mode rbspy -p "$PY_PID,$RB_PID" -o out.gpa
  assert_success
  stderr_has "gp-runtime: warning: pid $RB_PID (ruby): ruby (mode rbspy): [Profiling skipped: rbspy is not installed"
  stderr_has "gp-runtime: pid $PY_PID (python3): python via gp-python:"
  stderr_has "appid 'python: busy.py ($BATS_TEST_TMPDIR/busy.py)'"
  stderr_has "2 processes: 1 profiled, 1 skipped, 0 failed"
  run --separate-stderr gp-fold out.gpa
  assert_success
  assert_output --regexp "ruby;\[Profiling skipped: rbspy is not installed[^]]*\] 1"
  assert_output --regexp "python3;appid: python: busy.py \([^)]*\);<module> \([^)]*busy.py:1\)_\[p\];main \([^)]*busy.py:7\)_\[p\];work \([^)]*busy.py:2\)_\[p\] [0-9]+"
}

@test "a target that exits during the session is reported once, and the run succeeds" {
  start_python
  gp-runtime -v -d 6 --python-mode gp -p "$PY_PID" -o out.gpa 2> err.txt &
  local rt=$!
  for _ in $(seq 1 300); do grep -q "profiling pid $PY_PID" err.txt && break; sleep 0.1; done
  sleep 1
  kill -9 "$PY_PID"
  local status=0
  wait "$rt" || status=$?
  stderr=$(cat err.txt)
  [ "$status" -eq 0 ] || fail "exit status $status: $stderr"
  stderr_has "gp-runtime: pid $PY_PID (python3): python"
  stderr_has ": exited during the session"
  stderr_has "1 processes: 0 profiled, 0 skipped, 0 failed, 1 exited"
  [[ "$stderr" != *"warning"* ]] || fail "churn was a warning: $stderr"
  run -0 --separate-stderr gp-fold -f folded out.gpa
}

@test "all targets skipped: exit 1, the archive still says why" {
  rbspy_installed && skip "rbspy is installed here: the ruby process would be profiled"
  start_ruby
  run --separate-stderr gp-runtime -d 1 --ruby-mode rbspy -p "$RB_PID" -o out.gpa
  assert_failure 1
  run gp-fold out.gpa
  assert_success
  assert_output --partial "ruby;[Profiling skipped: rbspy is not installed"
}

@test "SIGTERM mid-session ends it normally: complete archive, exit 0" {
  start_python
  gp-runtime -v --python-mode gp -p "$PY_PID" -o out.gpa 2> err.txt &
  local rt=$!
  for _ in $(seq 1 300); do grep -q "profiling pid $PY_PID" err.txt && break; sleep 0.1; done
  grep -q "profiling pid $PY_PID" err.txt || fail "gp-runtime did not start: $(cat err.txt)"
  sleep 2
  kill -TERM "$rt"
  local status=0
  wait "$rt" || status=$?
  [ "$status" -eq 0 ] || fail "exit status $status after SIGTERM; stderr: $(cat err.txt)"
  run --separate-stderr gp-fold out.gpa
  assert_success
  [ -z "$stderr" ] || fail "gp-fold complained: $stderr"
  assert_output --partial "work ("
  assert_output --partial "_[p]"
}

@test "the archive merges with gp-merge: runtime frames in gProfiler's form" {
  start_python
  gp-runtime -d 3 --python-mode gp -p "$PY_PID" -o rt.gpa
  run --separate-stderr bash -c "gp-merge rt.gpa | gp-fold"
  assert_success
  assert_output --regexp ";main \([^)]*busy.py:7\)_\[p\];work \([^)]*busy.py:2\)_\[p\] [0-9]+"
}

@test "gp-record and gp-runtime side by side: gp-merge replaces native stacks by Python frames" {
  require_root_bpf
  start_python
  gp-record -p "$PY_PID" -d 4 -o sys.gpa 2>/dev/null &
  local rec=$!
  gp-runtime -d 4 --python-mode gp -p "$PY_PID" -o rt.gpa 2>/dev/null
  wait "$rec"
  run --separate-stderr bash -c "gp-merge sys.gpa rt.gpa | gp-fold"
  assert_success
  assert_output --regexp "python3;appid: python: busy.py[^;]*;<module> [^;]*_\[p\];main [^;]*_\[p\];work [^;]*_\[p\] [0-9]+"
  refute_output --partial "_PyEval_EvalFrameDefault"
}

@test "--disable-application-identifiers leaves appids out" {
  start_python
  gp-runtime -d 2 --python-mode gp --disable-application-identifiers -p "$PY_PID" -o rt.gpa 2>/dev/null
  run gp-fold rt.gpa
  assert_success
  assert_output --partial "work ("
  refute_output --partial "appid:"
}

# The work directory ($TMPDIR/gp-runtime-XXXXXX) of a run that ends any way but SIGKILL is
# gone; a run killed with SIGKILL leaves it, and the next run removes it.
@test "work directory: removed on SIGTERM, on SIGINT, and after SIGKILL by the next run" {
  start_python
  mkdir tmp
  export TMPDIR="$BATS_TEST_TMPDIR/tmp"
  wait_for_work_dir() {
    for _ in $(seq 300); do
      compgen -G "tmp/gp-runtime-*/owner" >/dev/null && return 0
      sleep 0.1
    done
    fail "no work directory"
  }
  # SIGTERM: the session ends, the archive is written, the directory removed.
  gp-runtime --python-mode gp -p "$PY_PID" -d 60 -o term.gpa 2>term.err &
  local rt=$!
  wait_for_work_dir
  sleep 1
  kill -TERM "$rt"
  wait "$rt"
  run ls -A tmp
  assert_output ""
  gp-runtime --python-mode gp -p "$PY_PID" -d 60 -o int.gpa 2>int.err &
  rt=$!
  wait_for_work_dir
  sleep 1
  kill -INT "$rt"
  wait "$rt"
  run ls -A tmp
  assert_output ""
  # SIGKILL: left over, then removed by the next start (its own directory goes at its end).
  gp-runtime --python-mode gp -p "$PY_PID" -d 60 -o killed.gpa 2>killed.err &
  rt=$!
  wait_for_work_dir
  kill -KILL "$rt"
  wait "$rt" || true
  local left
  left=$(compgen -G "tmp/gp-runtime-*")
  [ -f "$left/owner" ] || fail "nothing left over: $(ls -lA tmp)"
  run -0 gp-runtime --python-mode gp -p "$PY_PID" -d 1 -o next.gpa
  run ls -A tmp
  assert_output ""
}

@test "a JVM directory left in /tmp by a killed run is removed at the next start, and only that" {
  start_python
  sh -c 'exit 0' &
  local dead=$!
  wait "$dead"
  local hex=0123456789abcdef
  local stale="/tmp/gp-jfr-99-r$dead.7-$hex" live="/tmp/gp-jfr-99-r$$.7-$hex"
  local self_ticks
  self_ticks=$(awk '{ print $22 }' /proc/$$/stat)
  live="/tmp/gp-jfr-99-r$$.$self_ticks-$hex"
  mkdir -p "$stale/sub" "$live"
  echo data > "$stale/rec.jfr"
  echo data > "$stale/sub/chunk"
  run -0 gp-runtime --python-mode gp -p "$PY_PID" -d 1 -o rt.gpa
  [ ! -e "$stale" ] || { rm -rf "$stale" "$live"; fail "the dead run's directory is still there"; }
  [ -d "$live" ] || fail "a live run's directory was removed"
  rm -rf "$live"
}
