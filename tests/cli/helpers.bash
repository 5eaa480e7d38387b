# Shared setup for gp's bats suites. CTest sets GP_BUILD_DIR and GP_SOURCE_DIR; when a suite
# is run by hand, they default to ./build and the repository root.
: "${GP_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${GP_BUILD_DIR:=$GP_SOURCE_DIR/build}"
export GP_SOURCE_DIR GP_BUILD_DIR
export PATH="$GP_BUILD_DIR/bin:$PATH"
export BATS_LIB_PATH="${BATS_LIB_PATH:-/usr/lib/bats}"
bats_load_library bats-support
bats_load_library bats-assert

# Skips a test (with the reason) unless running as root with BPF and BTF available.
require_root_bpf() {
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  [ -r /sys/kernel/btf/vmlinux ] || skip "needs kernel BTF (/sys/kernel/btf/vmlinux)"
}

# Fails the test unless a command exists.
require_command() {
  command -v "$1" >/dev/null 2>&1 || fail "missing command '$1' (scripts/install-deps.sh --test installs it)"
}

# A real venv (python3 -m venv) in $BATS_TEST_TMPDIR/venv with one installed package, TinyPkg
# 1.2.3 (module tinypkg), its dist-info METADATA and RECORD written as pip writes them. Starts
# the venv's python on main.py, whose thread runs main -> tinypkg.spin, and sets PY_PID,
# VENV_SITE (the site-packages directory) and PY_FULL_VERSION ("3.11.2"). Kill PY_PID after.
start_venv_target() {
  local dir="$BATS_TEST_TMPDIR"
  /usr/bin/python3 -m venv --without-pip "$dir/venv"
  VENV_SITE=$("$dir/venv/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  PY_FULL_VERSION=$("$dir/venv/bin/python3" -c 'import platform; print(platform.python_version())')
  mkdir -p "$VENV_SITE/tinypkg" "$VENV_SITE/tinypkg-1.2.3.dist-info"
  printf '%s\n' 'def spin(n):' '    total = 0' '    while True:' '        for i in range(n):' \
    '            total += i * i' > "$VENV_SITE/tinypkg/__init__.py"
  printf 'Metadata-Version: 2.1\nName: TinyPkg\nVersion: 1.2.3\nSummary: a test package\n\nText.\n' \
    > "$VENV_SITE/tinypkg-1.2.3.dist-info/METADATA"
  printf '%s\n' 'tinypkg/__init__.py,sha256=AAAA,96' 'tinypkg-1.2.3.dist-info/METADATA,sha256=BBBB,80' \
    'tinypkg-1.2.3.dist-info/RECORD,,' > "$VENV_SITE/tinypkg-1.2.3.dist-info/RECORD"
  printf '%s\n' 'import threading, time, tinypkg' 'def main():' '    tinypkg.spin(1000)' \
    't = threading.Thread(target=main, daemon=True)' 't.start()' 'time.sleep(3600)' > "$dir/main.py"
  "$dir/venv/bin/python3" "$dir/main.py" &
  PY_PID=$!
  sleep 0.5
}

# Kills the background workloads a test started (their pids in WORKLOADS), also when it failed: a
# survivor would keep bats waiting for its output, and busy ones would crowd the next tests'
# CPUs. For a file's teardown.
kill_workloads() {
  local pid
  for pid in "${WORKLOADS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

# make_roots "SUITE PACKAGE..." ...: the Debian roots of other suites (scripts/debian-root.sh,
# cached under /var/cache/gp/roots), made or found once per file in setup_file, in parallel; each
# one's path is read back with root_of SUITE. Nothing to do without root.
make_roots() {
  [ "$(id -u)" -eq 0 ] || return 0
  local spec pids=() pid
  for spec in "$@"; do
    set -- $spec
    bash "$GP_SOURCE_DIR/scripts/debian-root.sh" "$@" >"$BATS_FILE_TMPDIR/root-$1" \
      2>"$BATS_FILE_TMPDIR/root-$1.err" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || true; done
}

# The cached root of SUITE (made by make_roots); "/" for "host".
root_of() {
  [ "$1" = host ] && { echo /; return 0; }
  local root
  root=$(cat "$BATS_FILE_TMPDIR/root-$1")
  [ -n "$root" ] && [ -d "$root" ] || fail "no $1 root: $(cat "$BATS_FILE_TMPDIR/root-$1.err")"
  echo "$root"
}

# start_in_root ROOT READY CMD...: runs CMD (its paths as ROOT sees them) chrooted into ROOT in
# new mount and pid namespaces, as in a container, its output in $OUT/target.err, and waits (up
# to 60 s) for the host path READY to appear. Sets UNSHARE_PID and TARGET_PID (CMD's host pid).
start_in_root() {
  local root="$1" ready="$2"
  shift 2
  unshare --mount --pid --fork chroot "$root" "$@" >"$OUT/target.err" 2>&1 &
  UNSHARE_PID=$!
  for _ in $(seq 600); do
    [ -e "$ready" ] && break
    sleep 0.1
  done
  [ -e "$ready" ] || fail "$* did not start in $root: $(cat "$OUT/target.err")"
  TARGET_PID=$(cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children")
  TARGET_PID=${TARGET_PID%% *}
  [ -n "$TARGET_PID" ] || fail "no process under unshare $UNSHARE_PID"
}

# end_container TARGET_PID UNSHARE_PID: kills a runtime started as a container's init (killing it
# ends the namespace) and reaps its unshare; either pid may be empty.
end_container() {
  [ -n "$1" ] && kill -KILL "$1" 2>/dev/null
  if [ -n "$2" ]; then
    kill -KILL "$2" 2>/dev/null
    wait "$2" 2>/dev/null
  fi
  return 0
}

# The frames phpspy would print for the stack in the debug_backtrace() dump $1 (JSON), root
# first, each with gProfiler's suffix, joined by ';': a frame's name from its debug_backtrace() entry ("include" is the
# included file's "<main>"), its location from the entry of the frame it called ("<internal>:-1"
# when that entry has no file: the frame is an internal function), the leaf at the spin line.
php_expected_frames() {
  jq -r '
    .trace as $t | .file as $f | .line as $l
    | def loc($e): if $e.file then "\($e.file):\($e.line)" else "<internal>:-1" end;
      [range(0; $t | length) as $k | $t[$k]
       | ((if .class then .class + "::" else "" end)
          + (if (.function | test("^(include|require)(_once)?$")) then "<main>" else .function end)
          + " " + (if $k == 0 then "\($f):\($l)" else loc($t[$k - 1]) end))]
      + ["<main> " + loc($t[-1])]
    | reverse | map(. + "_[php]") | join(";")' "$1"
}

# php_samples_are STACK MIN: every sample of gp-fold's .col output in $output is the folded PHP
# STACK, with max() (the spin fixture's call) as the leaf while it runs, and there are MIN or more.
php_samples_are() {
  local want="$1" min="$2" line total=0
  while IFS= read -r line; do
    [[ "$line" == \#* ]] && continue
    [[ "$line" =~ ^[0-9]*\;\;php\;(.*)\ ([0-9]+)$ ]] || fail "not a php line: $line"
    case "${BASH_REMATCH[1]}" in
      "$want" | "$want;max <internal>:-1_[php]") total=$((total + BASH_REMATCH[2])) ;;
      *) fail "unexpected stack: $line (want $want)" ;;
    esac
  done <<<"$output"
  [ "$total" -ge "$min" ] || fail "only $total samples, fewer than $min"
}

# The headless-Chromium tests (tests/browser), copied to the build tree with their node modules
# (so node_modules stays out of the sources), one copy per suite (ctest runs suites in parallel,
# and npm ci starts by removing node_modules); prints the directory.
browser_tests_dir() {
  require_command node
  require_command npm
  require_command chromium
  local dir="$GP_BUILD_DIR/browser-tests/$(basename "$BATS_TEST_FILENAME" .bats)"
  mkdir -p "$dir"
  cp "$GP_SOURCE_DIR"/tests/browser/{package.json,package-lock.json,*.mjs} "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$dir"
}

# The loopback Performance Studio (tests/servers/studio.py) with token $TOKEN, storing profiles
# under ./store; sets $studio to its URL. Its pid goes in PIDS (the caller's teardown kills it).
start_studio() {
  require_command python3
  rm -f studio.port
  python3 "$GP_SOURCE_DIR/tests/servers/studio.py" --port-file studio.port --log studio.log \
    --store store --token "$TOKEN" "$@" 2>studio.err &
  PIDS+=($!)
  local i
  for i in $(seq 100); do [ -s studio.port ] && break; sleep 0.1; done
  studio="http://127.0.0.1:$(cat studio.port)"
}

# The studio's heartbeat commands (one JSON object per argument) into commands.json, and whether
# it was told that command $1 completed.
commands() { printf '%s\n' "$@" | python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in sys.stdin if l.strip()]))' >commands.json; }
completed() { python3 -c 'import json,sys; sys.exit(not any(e["path"] == "/api/metrics/command_completion" and e["body"]["command_id"] == sys.argv[1] for e in map(json.loads, open("studio.log"))))' "$1"; }

# wait_for SECONDS COMMAND...: polls until COMMAND succeeds; fails the test after SECONDS, with
# the end of the file $WAIT_FOR_SHOW (a log the test watches) when it is set.
wait_for() {
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 5; i++)); do
    "$@" && return 0
    sleep 0.2
  done
  local shown=""
  [ -n "${WAIT_FOR_SHOW:-}" ] && shown=$'\n'"last lines of $WAIT_FOR_SHOW:"$'\n'"$(tail -n 40 "$WAIT_FOR_SHOW" 2>&1)"
  fail "timed out after ${limit}s waiting for: $*$shown"
}

# build_nofp_fixtures PROGRAM...: builds tests/fixtures/src/PROGRAM.c as PROGRAM_nofp, as most
# distribution -O2 code is built (no frame pointers, no inlining), into a new FIXTURES directory
# (exported; the caller's teardown_file removes it).
build_nofp_fixtures() {
  local src="$GP_SOURCE_DIR/tests/fixtures/src" program
  FIXTURES=$(mktemp -d /tmp/gp-fixtures.XXXXXX)
  export FIXTURES
  for program in "$@"; do
    cc -O2 -g -fomit-frame-pointer -fno-inline -o "$FIXTURES/${program}_nofp" "$src/$program.c"
  done
  chmod 755 "$FIXTURES" "$FIXTURES"/*
}

# gp_runtime_target_killed PID ARG...: runs gp-runtime -v ARG... -d 5 -p PID, kills PID once it is
# being profiled, and checks that the session ends normally with the exit reported and gProfiler's
# error frame in place of the process's stacks. $OUT/rt.gpa is the archive.
gp_runtime_target_killed() {
  local pid=$1 status=0 rt
  shift
  gp-runtime -v "$@" -d 5 -p "$pid" -o "$OUT/rt.gpa" 2>"$OUT/err.txt" &
  rt=$!
  for _ in $(seq 1 300); do grep -q "profiling pid $pid" "$OUT/err.txt" && break; sleep 0.1; done
  sleep 1
  kill -9 "$pid"
  wait "$rt" || status=$?
  [ "$status" -eq 0 ] || fail "exit status $status: $(cat "$OUT/err.txt")"
  grep -q "pid $pid (.*: exited during the session" "$OUT/err.txt" ||
    fail "the exit is not reported: $(cat "$OUT/err.txt")"
  run -0 gp-fold -f folded "$OUT/rt.gpa"
  assert_output --partial "[Profiling error: process went down during profiling]"
}

# gp-profile tests: each runs in its own directory, with gp-profile's temporary files under it
# (its children are then recognisable by their command lines, pgrep -f, and leftovers are
# visible). PIDS holds the test's own background processes.
profile_test_setup() {
  cd "$BATS_TEST_TMPDIR"
  PIDS=()
  mkdir -p tmp
  export TMPDIR="$BATS_TEST_TMPDIR/tmp"
}

# Kills the test's processes (PIDS) and whatever gp-profile left running.
profile_test_kill() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  pkill -KILL -f "$BATS_TEST_TMPDIR/tmp/" 2>/dev/null || true
}
