#!/usr/bin/env bats
# gp's own CPython sampler across the versions a fleet runs: Debian's python3.9 (bullseye),
# python3.11 (this host), python3.13 (trixie), python3.14 and python3.15 (sid). Each runs
# tests/fixtures/runtime/python/chain.py, which writes what the interpreter itself reports for its
# hot thread (every frame's name, file, first and current line); gp must read the same.
# The other suites' interpreters run as they do in production, in containers: their own root
# (scripts/debian-root.sh, cached under /var/cache/gp/roots), mount and pid namespaces
# (unshare --mount --pid --fork chroot ROOT ...), profiled from the host by host pid.
# Also: interpreters whose _Py_DebugOffsets were patched (a copy of the binary) are walked by the
# offsets they publish, or refused with the reason named, never walked with gp's table.
# A container's interpreter killed mid-session is reported while the session goes on.
# bats file_tags=gp-runtime,python,root

load helpers
bats_require_minimum_version 1.5.0

# The roots are made (or found in the cache) once per run, the three suites in parallel.
setup_file() {
  make_roots "bullseye python3.9" "trixie python3.13" "sid python3.14 python3.15"
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (chroot, unshare, reading other processes)"
  OUT="$BATS_TEST_TMPDIR"
  UNSHARE_PID=
  PY_PID=
}

teardown() {
  end_container "$PY_PID" "$UNSHARE_PID"
  rm -rf "${JOB_DIR:-}" "${PATCHED_DIR:-}"
  return 0
}

# start_chain ROOT PYTHON: runs chain.py under ROOT's PYTHON (a path inside ROOT) in new mount
# and pid namespaces; ROOT "/" runs it on the host as it is. Sets PY_PID (host pid), REPORT (the
# interpreter's own report, host path) and SCRIPT (the script's path as the interpreter sees it).
start_chain() {
  local root="$1" python="$2" inner
  JOB_DIR=$(mktemp -d "${root%/}/tmp/gp-chain-XXXXXX")
  inner="${JOB_DIR#"${root%/}"}"
  cp "$GP_SOURCE_DIR/tests/fixtures/runtime/python/chain.py" "$JOB_DIR/chain.py"
  SCRIPT="$inner/chain.py"
  REPORT="$JOB_DIR/report"
  if [ "$root" = / ]; then
    "$python" "$SCRIPT" "$inner/report" 2>"$OUT/chain.err" &
    PY_PID=$!
  else
    unshare --mount --pid --fork chroot "$root" "$python" "$SCRIPT" "$inner/report" \
      2>"$OUT/chain.err" &
    UNSHARE_PID=$!
  fi
  for _ in $(seq 600); do
    [ -e "$REPORT" ] && break
    sleep 0.1
  done
  [ -e "$REPORT" ] || fail "chain.py did not start under $python: $(cat "$OUT/chain.err")"
  if [ -n "$UNSHARE_PID" ]; then
    PY_PID=$(cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children")
    PY_PID=${PY_PID%% *}
  fi
}

# The host tid of a thread the process numbers NS_TID in its own pid namespace.
host_tid() {
  local status
  for status in /proc/"$PY_PID"/task/*/status; do
    awk -v ns="$1" '$1 == "NSpid:" && $NF == ns { print $2; found = 1 } END { exit !found }' \
      "$status" && return 0
  done
  return 1
}

# check_version ROOT PYTHON MINOR: gp reads the hot thread's frames exactly as the interpreter
# reports them (name, file, first and current line; the tid as the host numbers it), and
# gp-runtime's profile holds that stack as gProfiler's py-spy frames.
check_version() {
  local root="$1" python="$2" minor="$3" tid expected folded
  start_chain "$root" "$python"
  tid=$(host_tid "$(awk '$1 == "thread" { print $2 }' "$REPORT")") || fail "no host tid"
  [ "$root" = / ] || [ "$tid" != "$(awk '$1 == "thread" { print $2 }' "$REPORT")" ] ||
    fail "the container's pid namespace numbers threads as the host does"
  run -0 gp_python_stacks "$PY_PID"
  assert_line --regexp "^version 3\.$minor(\.[0-9]+)?$"  # 3.9 has no Py_Version: its file name
  # The hot thread's record in gp's snapshot: from its "thread" line to the next.
  expected=$(sed "s/^thread .*/thread $tid/" "$REPORT")
  got=$(printf '%s\n' "$output" | awk -v t="thread $tid" '$0 == t { on = 1; print; next }
    /^thread / { on = 0 } on')
  [ "$got" = "$expected" ] || fail "$(printf 'gp read:\n%s\nthe interpreter reports:\n%s' "$got" "$expected")"
  grep -q "^frame hot $SCRIPT " "$REPORT" || fail "the report has no hot frame: $(cat "$REPORT")"

  run -0 gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 2 --no-python-versions -o "$OUT/rt.gpa"
  run -0 gp-fold -f folded --annotate --with-tid "$OUT/rt.gpa"
  folded=$(awk '$1 == "frame" { printf "%s%s (%s:%s)_[p]", sep, $2, $3, $4; sep = ";" }' "$REPORT")
  assert_output --partial "/$tid;$folded "
}

@test "CPython 3.9 (bullseye, in a container): gp's frames are the interpreter's own" {
  check_version "$(root_of bullseye)" /usr/bin/python3.9 9
}

@test "CPython 3.11 (this host): gp's frames are the interpreter's own" {
  check_version / /usr/bin/python3.11 11
}

@test "CPython 3.13 (trixie, in a container): gp's frames are the interpreter's own" {
  check_version "$(root_of trixie)" /usr/bin/python3.13 13
}

@test "CPython 3.14 (sid, in a container): gp's frames are the interpreter's own" {
  check_version "$(root_of sid)" /usr/bin/python3.14 14
}

@test "CPython 3.15 (sid, in a container): gp's frames are the interpreter's own" {
  check_version "$(root_of sid)" /usr/bin/python3.15 15
}

# patched_python ROOT PYTHON: a copy of ROOT's PYTHON in a job directory inside ROOT; sets
# PATCHED (host path) and PATCHED_INNER (the path inside ROOT).
patched_python() {
  local root="$1"
  PATCHED_DIR=$(mktemp -d "${root%/}/tmp/gp-patched-XXXXXX")
  PATCHED="$PATCHED_DIR/$(basename "$2")"
  PATCHED_INNER="${PATCHED#"${root%/}"}"
  cp "$root$2" "$PATCHED"
}

tool() { /usr/bin/python3 "$GP_SOURCE_DIR/tests/fixtures/runtime/python/debug_offsets_tool.py" "$@"; }

@test "a CPython whose published offsets differ from gp's table is walked by the published ones" {
  local root
  root=$(root_of trixie)
  patched_python "$root" /usr/bin/python3.13
  # 3.13's code.name and code.qualname (slots 36 and 37) swapped: what the build says is walked.
  tool swap "$PATCHED" 36 37
  start_chain "$root" "$PATCHED_INNER"
  grep -q "^frame Chain.start " "$REPORT" || fail "$(cat "$REPORT")"
  run -0 --separate-stderr gp-runtime --python-mode gp -F 50 -p "$PY_PID" -d 2 \
    --no-python-versions -o "$OUT/rt.gpa"
  [[ "$stderr" == *"CPython 3.13.5 publishes offsets that differ from gp's 3.13 table (code.name, code.qualname): walked by the published offsets"* ]] ||
    fail "$stderr"
  run -0 gp-fold "$OUT/rt.gpa"
  # co_name where the table has co_qualname: the frame is "start", not "Chain.start".
  assert_output --partial ";start ($SCRIPT:"
  refute_output --partial "Chain.start"
}

@test "a CPython whose _Py_DebugOffsets version disagrees with Py_Version is refused, named" {
  local root
  root=$(root_of sid)
  patched_python "$root" /usr/bin/python3.14
  tool set "$PATCHED" 1 0x030E09F0  # the struct says 3.14.9; Py_Version says 3.14.10
  start_chain "$root" "$PATCHED_INNER"
  run -1 --separate-stderr gp-runtime --python-mode gp -p "$PY_PID" -d 1 -o "$OUT/rt.gpa"
  [[ "$stderr" == *"python via gp-python: "*"[Profiling skipped: "* ]] || fail "$stderr"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: the interpreter's versions disagree (Py_Version 3.14.10, _Py_DebugOffsets 3.14.9): not walked]"
  refute_output --partial "_[p]"
}

@test "a CPython whose _Py_DebugOffsets layout gp does not know is skipped with its version" {
  local root
  root=$(root_of sid)
  patched_python "$root" /usr/bin/python3.15
  tool set "$PATCHED" 1 0x031000F0  # 3.16.0, in the struct and in Py_Version
  tool py-version "$PATCHED" 031000F0
  start_chain "$root" "$PATCHED_INNER"
  run -1 --separate-stderr gp-runtime --python-mode gp -p "$PY_PID" -d 1 -o "$OUT/rt.gpa"
  [[ "$stderr" == *"python via gp-python: "*"[Profiling skipped: "* ]] || fail "$stderr"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: CPython 3.16.0 publishes its offsets in a _Py_DebugOffsets layout gp does not know (gp knows 3.13 - 3.15)]"
  refute_output --partial "_[p]"
}

@test "a container's CPython 3.14 killed mid-session: reported, the session ends normally" {
  start_chain "$(root_of sid)" /usr/bin/python3.14
  gp_runtime_target_killed "$PY_PID" --python-mode gp -F 50 --no-python-versions
  refute_output --partial "chain.py"
}
