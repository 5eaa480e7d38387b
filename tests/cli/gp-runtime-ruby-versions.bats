#!/usr/bin/env bats
# gp's own CRuby sampler across the versions a fleet runs: Debian's ruby2.7 (bullseye), ruby3.1
# (this host), ruby3.3 (trixie) and ruby3.4 (experimental). Each runs
# tests/fixtures/runtime/ruby/chain.rb, a thread spinning at the end of a known call chain, and
# writes what Ruby itself reports of it (Thread#backtrace_locations); every sample gp takes of
# that thread must be that stack, every frame's function, file and line. The interpreters run as they
# do in production, in containers: their own root (scripts/debian-root.sh, cached under
# /var/cache/gp/roots; the host's own for 3.1), mount and pid namespaces
# (unshare --mount --pid --fork chroot ROOT ...), profiled from the host by host pid. Also: the
# layout tables regenerated from each version's headers equal the checked-in ones, and a
# container's ruby whose memory lies is a counted, named error frame, never a wrong frame, and
# one killed mid-session is reported while the session goes on.
# bats file_tags=gp-runtime,ruby,root

load helpers
bats_require_minimum_version 1.5.0

# The roots (the package sets of scripts/gen-interp-layouts.sh and the PHP version tests: one
# root per suite serves both), made or found in the cache once per run, in parallel.
setup_file() {
  make_roots "bullseye php7.4-cli ruby2.7" "trixie php8.4-cli ruby3.3" \
    "experimental php-common/sid php8.5-cli ruby3.4"
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (chroot, unshare, reading other processes)"
  OUT="$BATS_TEST_TMPDIR"
  UNSHARE_PID=
  RB_PID=
}

teardown() {
  end_container "$RB_PID" "$UNSHARE_PID"
  rm -rf "${JOB_DIR:-}" "${PATCHED_DIR:-}"
  return 0
}

# start_target ROOT RUBY [ENV...]: runs chain.rb under ROOT's RUBY (a path inside ROOT; ENV:
# NAME=VALUE settings for it) in new mount and pid namespaces. Sets RB_PID (host pid), REPORT
# (Ruby's own backtrace of the spinning thread, host path) and SCRIPT (the script's path as Ruby
# sees it).
start_target() {
  local root="$1" ruby="$2" inner
  shift 2
  JOB_DIR=$(mktemp -d "${root%/}/tmp/gp-ruby-XXXXXX")
  inner="${JOB_DIR#"${root%/}"}"
  cp "$GP_SOURCE_DIR/tests/fixtures/runtime/ruby/chain.rb" "$JOB_DIR/chain.rb"
  SCRIPT="$inner/chain.rb"
  REPORT="$JOB_DIR/report"
  start_in_root "$root" "$REPORT" env "$@" "$ruby" --disable-gems "$SCRIPT" "$inner/report"
  RB_PID=$TARGET_PID
}

# The stack in REPORT as gp folds it, root first, joined by ';': a Ruby frame
# "LABEL - PATH:LINE", a C function "LABEL [c function] - (unknown):0". Ruby 3.4's backtraces
# qualify a method with its owner ("Shop#price", "block in Shop#checkout"); the iseq's label,
# which gp (as rbspy) reads, is the bare name: the qualifier is dropped.
expected_stack() {
  awk -F'\t' '
    /^frame / {
      label = $2
      sub(/^[A-Z][A-Za-z0-9_:]*[#.]/, "", label)
      sub(/ in [A-Z][A-Za-z0-9_:]*[#.]/, " in ", label)
      f = ($1 == "frame c") ? label " [c function] - (unknown):0" : label " - " $3 ":" $4
      out = out (out == "" ? "" : ";") f
    }
    END { print out }' "$REPORT"
}

# check_version SUITE RUBY: every sample of chain.rb's spinning thread is the stack Ruby reports
# for it, and the thread is the one the kernel knows (Ruby names a native thread after it).
check_version() {
  local root want tid line total=0 stack count
  root=$(root_of "$1")
  start_target "$root" "$2"
  want=$(expected_stack)
  [[ "$want" == "block in <main> - $SCRIPT:28;checkout - $SCRIPT:9;"*"discount - $SCRIPT:18" ]] ||
    fail "unexpected report: $(cat "$REPORT")"
  tid=$(grep -l -x spinner /proc/"$RB_PID"/task/*/comm | head -1 | cut -d/ -f5)
  [ -n "$tid" ] || fail "no thread named spinner in $RB_PID"
  run -0 --separate-stderr gp-runtime --ruby-mode gp -F 49 -p "$RB_PID" -d 2 -o "$OUT/rt.gpa"
  [[ "$stderr" == *"pid $RB_PID ("*"ruby via gp-ruby:"* ]] || fail "not sampled by gp: $stderr"
  run -0 gp-fold -f folded --with-tid "$OUT/rt.gpa"
  while IFS= read -r line; do
    [[ "$line" == \#* || -z "$line" ]] && continue
    [[ "$line" == *"-$RB_PID/$tid;"* ]] || fail "a sample of another thread: $line"
    stack=${line#*"-$RB_PID/$tid;"}
    count=${stack##* }
    stack=${stack% *}
    [ "$stack" = "$want" ] || fail "gp's stack
  $stack
is not Ruby's
  $want"
    total=$((total + count))
  done <<<"$output"
  [ "$total" -ge 40 ] || fail "only $total samples: $output"
}

@test "Ruby 2.7 (bullseye, in a container): gp's frames are Ruby's own backtrace_locations" {
  check_version bullseye /usr/bin/ruby2.7
}

@test "Ruby 3.1 (this host, in a container): gp's frames are Ruby's own backtrace_locations" {
  check_version host /usr/bin/ruby3.1
}

@test "Ruby 3.3 (trixie, in a container): gp's frames are Ruby's own backtrace_locations" {
  check_version trixie /usr/bin/ruby3.3
}

@test "Ruby 3.4 (experimental, in a container): gp's frames are Ruby's own backtrace_locations" {
  check_version experimental /usr/bin/ruby3.4
}

@test "the Ruby layout tables equal what each version's CRuby headers give" {
  run -0 bash "$GP_SOURCE_DIR/scripts/gen-interp-layouts.sh" --check ruby
  assert_output --partial "ruby_layouts.inc' matches the headers"
}

@test "a Ruby whose version text lies (2.7 saying 3.3) is an error frame, never walked as 3.3" {
  local root lib soname
  root=$(root_of bullseye)
  # bullseye's libruby with its version constant "2.7.4" made "3.3.8" (same length): the VM
  # stays 2.7's, gp picks 3.3's table. Its reads must not pass as frames.
  PATCHED_DIR=$(mktemp -d "$root/tmp/gp-patched-XXXXXX")
  lib=$(chroot "$root" ldd /usr/bin/ruby2.7 | awk '/libruby/ { print $3 }')
  soname=$(chroot "$root" ldd /usr/bin/ruby2.7 | awk '/libruby/ { print $1 }')
  python3 - "$root$lib" "$PATCHED_DIR/$soname" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
old = re.findall(rb"\0(2\.7\.[0-9])\0", data)
assert len(old) == 1, old
open(sys.argv[2], "wb").write(data.replace(b"\0" + old[0] + b"\0", b"\x003.3.8\0"))
PY
  start_target "$root" /usr/bin/ruby2.7 "LD_LIBRARY_PATH=${PATCHED_DIR#"$root"}"
  grep -q "$PATCHED_DIR/libruby" "/proc/$RB_PID/maps" || fail "the patched libruby is not mapped"
  run --separate-stderr gp-runtime --ruby-mode gp -F 49 -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  [[ "$stderr" == *"pid $RB_PID ("*"[Profiling error: no Ruby stack could be read ("* ]] ||
    fail "no error frame: $stderr"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling error: no Ruby stack could be read ("
  refute_output --partial "chain.rb:"
}

@test "a container's ruby (3.3) killed mid-session: reported, the session ends normally" {
  start_target "$(root_of trixie)" /usr/bin/ruby3.3
  gp_runtime_target_killed "$RB_PID" --ruby-mode gp -F 49
  refute_output --partial "chain.rb:"
}
