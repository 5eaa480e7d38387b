#!/usr/bin/env bats
# gp-runtime's Ruby support end to end with gp's own CRuby sampler (--ruby-mode gp, and auto
# without rbspy) on live Debian ruby processes: tests/fixtures/runtime/ruby/busy.rb (three
# threads spinning in methods, a block and Integer#times) folded by gp-fold into rbspy's frames
# "LABEL - PATH:LINE_[rb]" with the process's appid; and the cases that must skip or fail one
# process while the session goes on: an unknown Ruby version, a "ruby" that is no CRuby (no
# symbols), a process that exits mid-session.
# bats file_tags=gp-runtime,ruby

load helpers
bats_require_minimum_version 1.5.0

setup() {
  OUT="$BATS_TEST_TMPDIR"
  BUSY="$GP_SOURCE_DIR/tests/fixtures/runtime/ruby/busy.rb"
  pids=()
}

teardown() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

rbspy_installed() {
  command -v rbspy >/dev/null && return 0
  for d in /root/.cargo/bin /usr/local/bin /opt/rbspy/bin /opt/gprofiler/ruby; do
    [ -x "$d/rbspy" ] && return 0
  done
  return 1
}

# Starts busy.rb and waits until its threads spin (it creates $OUT/ready then); sets RB_PID.
start_busy() {
  /usr/bin/ruby "$BUSY" "$OUT/ready" &
  RB_PID=$!
  pids+=("$RB_PID")
  for _ in $(seq 1 600); do [ -e "$OUT/ready" ] && return 0; sleep 0.1; done
  fail "busy.rb did not start"
}

# Starts a command in the background, adds it to pids, sets RB_PID; waits until libruby is
# mapped.
start_ruby() {
  "$@" &
  RB_PID=$!
  pids+=("$RB_PID")
  for _ in $(seq 1 300); do grep -q libruby "/proc/$RB_PID/maps" 2>/dev/null && return 0; sleep 0.1; done
  fail "ruby did not start"
}

@test "--ruby-mode gp: busy.rb's threads as LABEL - PATH:LINE_[rb] frames with the process's appid" {
  start_busy
  run -0 --separate-stderr gp-runtime --ruby-mode gp -F 99 -p "$RB_PID" -d 3 -o "$OUT/rt.gpa"
  stderr_has "pid $RB_PID (ruby): ruby via gp-ruby:"
  run -0 gp-fold "$OUT/rt.gpa"
  # gProfiler's Ruby appid: the script as given on the command line, then its absolute path.
  local app="ruby;appid: ruby: $BUSY ($BUSY)"
  # The main thread and the two workers (whose block is nested in Array.new's), root first; the
  # leaf is Integer#times (C) or the block it yields to.
  local chain="outer - $BUSY:12_[rb];inner - $BUSY:7_[rb];times [c function] - (unknown):0_[rb]"
  assert_output --partial "$app;<main> - $BUSY:17_[rb];$chain;block in inner - $BUSY:7_[rb] "
  assert_output --partial "$app;<main> - $BUSY:17_[rb];$chain "
  assert_output --partial "$app;block (2 levels) in <main> - $BUSY:15_[rb];$chain;block in inner - $BUSY:7_[rb] "
  # Every Ruby frame is one of busy.rb's (or a C function): nothing invented.
  local bad
  bad=$(printf '%s\n' "$output" | sed -E 's/ [0-9]+$//' | tr ';' '\n' | grep '_\[rb\]' |
    grep -v -E "^(<main>|block \(2 levels\) in <main>|outer|inner|block in inner) - $BUSY:[0-9]+_\[rb\]$" |
    grep -v -E '^[a-z_]+ \[c function\] - \(unknown\):0_\[rb\]$' || true)
  [ -z "$bad" ] || fail "unexpected frames: $bad"
}

@test "--ruby-mode gp: a Ruby process in its own pid namespace (as in a container) is sampled" {
  [ "$(id -u)" -eq 0 ] || skip "needs root (unshare --pid)"
  unshare --pid --fork --mount-proc /usr/bin/ruby "$BUSY" "$OUT/ready" &
  pids+=("$!")
  for _ in $(seq 1 600); do [ -e "$OUT/ready" ] && break; sleep 0.1; done
  RB_PID=$(pgrep -f -n "^/usr/bin/ruby $BUSY $OUT/ready")
  pids+=("$RB_PID")
  # Ruby knows its threads by their tids in that namespace (1, 2, 3): gp maps them to its own.
  grep -q -P '^NSpid:\t[0-9]+\t1$' "/proc/$RB_PID/status" || fail "not in its own pid namespace"
  run -0 --separate-stderr gp-runtime --ruby-mode gp -F 50 -p "$RB_PID" -d 2 -o "$OUT/rt.gpa"
  run -0 gp-fold -f folded --with-tid "$OUT/rt.gpa"
  assert_output --regexp "ruby-$RB_PID/[0-9]+;<main> - $BUSY:17;outer - "
  refute_output --regexp "ruby-$RB_PID/[123];"
}

@test "--ruby-mode auto without rbspy is gp's sampler, and auto is the default" {
  rbspy_installed && skip "rbspy is installed here: auto takes it"
  start_busy
  run -0 --separate-stderr gp-runtime -F 20 -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  stderr_has "pid $RB_PID (ruby): ruby via gp-ruby:"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "block in inner - $BUSY:7_[rb]"
}

@test "--ruby-mode gp above 100 Hz samples at gProfiler's 100 Hz limit, with a warning" {
  start_busy
  run -0 --separate-stderr gp-runtime --ruby-mode gp -F 500 -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  stderr_has "ruby sampling frequency limited to 100 Hz (asked 500 Hz), as gProfiler does"
}

# A copy of the system libruby in $OUT/lib, under its soname, with the bytes "\0OLD\0" (each
# found exactly once) replaced by "\0NEW\0" (same length) for each OLD NEW pair of arguments;
# ruby runs on it with LD_LIBRARY_PATH=$OUT/lib.
patched_libruby() {
  local lib soname
  lib=$(ldd /usr/bin/ruby | awk '/libruby/ { print $3 }')
  soname=$(ldd /usr/bin/ruby | awk '/libruby/ { print $1 }')
  mkdir -p "$OUT/lib"
  python3 - "$lib" "$OUT/lib/$soname" "$@" <<'PY'
import sys
src, dst, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
data = open(src, "rb").read()
for old, new in zip(pairs[0::2], pairs[1::2]):
    assert len(old) == len(new)
    old, new = b"\0" + old.encode() + b"\0", b"\0" + new.encode() + b"\0"
    assert data.count(old) == 1, data.count(old)
    data = data.replace(old, new)
open(dst, "wb").write(data)
PY
}

@test "an unknown Ruby version is skipped with gProfiler's frame naming the version" {
  # The same libruby with its version constant changed: a Ruby gp has no layout for.
  local version
  version=$(/usr/bin/ruby --disable-gems -e 'print RUBY_VERSION')
  patched_libruby "$version" "9.9.9"
  LD_LIBRARY_PATH="$OUT/lib" start_ruby /usr/bin/ruby --disable-gems -e 'sleep 120'
  grep -q "$OUT/lib/libruby" "/proc/$RB_PID/maps" || fail "the patched libruby is not the one mapped"
  run -1 --separate-stderr gp-runtime --ruby-mode gp -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  stderr_has "pid $RB_PID (ruby): ruby via gp-ruby: [Profiling skipped: ruby 9.9.9 is not supported by gp's sampler (2.7, 3.1, 3.3, 3.4)]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "ruby;[Profiling skipped: ruby 9.9.9 is not supported by gp's sampler (2.7, 3.1, 3.3, 3.4)] 1"
}

@test "a libruby stripped of the VM's symbol is skipped naming what is missing, never guessed" {
  # Its exported ruby_current_vm_ptr renamed, and ruby_vm_at_exit (whose code leads to it when
  # it is not exported): "vm" -> "wL" keeps a name's GNU hash (33 * 1 - 33 = 0), so libruby's
  # own references still resolve and ruby runs.
  patched_libruby ruby_current_vm_ptr ruby_current_wL_ptr ruby_vm_at_exit ruby_wL_at_exit
  LD_LIBRARY_PATH="$OUT/lib" start_ruby /usr/bin/ruby --disable-gems -e 'loop { }'
  run -1 --separate-stderr gp-runtime --ruby-mode gp -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  stderr_has "[Profiling skipped: '$OUT/lib/libruby"
  stderr_has "' has no ruby_current_vm_ptr / ruby_version symbol (not CRuby 2.5+, or stripped)]"
  run -0 gp-fold "$OUT/rt.gpa"
  refute_output --partial "_[rb]"
}

@test "a 'ruby' without CRuby's symbols is skipped, and the other processes are profiled" {
  mkdir -p "$OUT/bin"
  cp /bin/sleep "$OUT/bin/ruby"
  "$OUT/bin/ruby" 120 &
  local fake=$!
  pids+=("$fake")
  start_busy
  sleep 0.3
  run -0 --separate-stderr gp-runtime --ruby-mode gp -F 20 -p "$fake,$RB_PID" -d 2 -o "$OUT/rt.gpa"
  stderr_has "pid $fake (ruby): ruby via gp-ruby: [Profiling skipped: '$OUT/bin/ruby' has no ruby_current_vm_ptr / ruby_version symbol (not CRuby 2.5+, or stripped)]"
  stderr_has "2 processes: 1 profiled, 1 skipped, 0 failed"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "block in inner - $BUSY:7_[rb]"
}

@test "a Ruby process that exits mid-session: reported, the session ends normally" {
  start_busy
  gp-runtime -v --ruby-mode gp -F 50 -d 5 -p "$RB_PID" -o "$OUT/rt.gpa" 2> "$OUT/err.txt" &
  local rt=$!
  for _ in $(seq 1 300); do grep -q "profiling pid $RB_PID" "$OUT/err.txt" && break; sleep 0.1; done
  sleep 1
  kill -9 "$RB_PID"
  local status=0
  wait "$rt" || status=$?
  stderr=$(cat "$OUT/err.txt")
  [ "$status" -eq 0 ] || fail "exit status $status: $stderr"
  stderr_has "pid $RB_PID (ruby): ruby"
  stderr_has ": exited during the session"
  run -0 gp-fold "$OUT/rt.gpa"
}
