#!/usr/bin/env bats
# gp-record -- COMMAND: runs a command, records it and what it starts from its first instruction
# until it exits, and exits with its status. Recording tests need root with BPF and BTF (tagged
# root,bpf); every recorder runs under `timeout`.
# bats file_tags=gp-record

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
  build_nofp_fixtures shortlived chain
}

teardown_file() {
  rm -rf "$FIXTURES"
}

setup() {
  FIX="$FIXTURES"
  OUT="$BATS_TEST_TMPDIR"
  WORKLOADS=()
}

teardown() {
  kill_workloads
}

# The folded stacks of archive $1 (comm;frames count), symbolized, kernel frames marked _[k].
folded() {
  gp-symbolize "$1" 2>"$OUT/symbolize.err" | gp-fold -f folded --annotate
}

@test "gp-record exits with the command's status, and 128+N when a signal N killed it" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -3 timeout -s KILL 60 gp-record -o "$OUT/three.gpa" -- sh -c 'exit 3'
  [ -s "$OUT/three.gpa" ] || fail "no archive written"
  run -143 timeout -s KILL 60 gp-record -o "$OUT/term.gpa" -- sh -c 'kill -TERM $$'
  run -0 timeout -s KILL 60 gp-record -o "$OUT/true.gpa" -- true
}

@test "a command that lives 30 ms without frame pointers is recorded with whole stacks" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Its samples in short_lived_work: each whole from _start or under [truncated], never a frame of
  # the program as a root. On a loaded host a 30-ms process gets few samples: up to three runs
  # for one whole stack.
  local attempt
  for attempt in 1 2 3; do
    run -0 timeout -s KILL 60 gp-record -F 999 -o "$OUT/rec.gpa" -- "$FIX/shortlived_nofp" 30
    run -0 folded "$OUT/rec.gpa"
    printf '%s\n' "$output" | grep -E '^shortlived_nofp;.*short_lived_work [0-9]+$' >"$OUT/work" || true
    run -0 bash -c "grep -vE '^shortlived_nofp;(_start;__libc_start_main[^;]*;__libc_start_call_main;main;short_lived_work|\\[truncated\\];)' \"\$0\" || true" "$OUT/work"
    assert_output ''
    grep -qE '^shortlived_nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;short_lived_work [0-9]+$' "$OUT/work" &&
      return 0
  done
  fail "no whole stack of short_lived_work in 3 runs: $(cat "$OUT/work")"
}

@test "a command gets no unwind tables of gp-record's own binaries while it waits for its exec" {
  # bats test_tags=root,bpf
  require_root_bpf
  # The command is forked from gp-record and held until the sampler is attached: a sample
  # before its exec shows gp-record's image (forty-odd binaries), whose tables the command's
  # own would wait behind. Without a cache every table is built: the command's three binaries
  # (the program, libc, ld.so) and no more. A sample lands before the exec in a third to a half
  # of the runs: six runs.
  local attempt built
  for attempt in 1 2 3 4 5 6; do
    run -0 timeout -s KILL 60 gp-record -v -F 999 --unwind-cache none -o "$OUT/rec.gpa" -- \
      "$FIX/shortlived_nofp" 30
    built=$(printf '%s\n' "$output" | sed -n 's/.*session counters:.* unwind\.tables\.built=\([0-9]*\).*/\1/p')
    [ -n "$built" ] || fail "no unwind.tables.built counter: $output"
    [ "$built" -le 3 ] || fail "run $attempt built $built tables for a program of 3 binaries"
  done
}

@test "the processes a command forks and execs are recorded, and nothing outside it" {
  # bats test_tags=root,bpf
  require_root_bpf
  # A busy process that is not the command's (killed by teardown; none of bats' descriptors).
  sha256sum /dev/zero >/dev/null 2>&1 3>&- &
  WORKLOADS+=($!)
  # Every run: both children (forked, then exec'd by sh) are recorded, and nothing outside the
  # command. Their stacks are whole once gp-record has the unwind tables of their new image: on a
  # host loaded 10 times over, once in 5 runs not before the 500-ms child was done, so up to
  # three runs for whole stacks of both.
  local attempt
  for attempt in 1 2 3; do
    run -0 timeout -s KILL 60 gp-record -F 499 -o "$OUT/rec.gpa" -- \
      sh -c "$FIX/chain_nofp 0.5 & $FIX/shortlived_nofp 500; wait"
    run -0 folded "$OUT/rec.gpa"
    assert_line --regexp '^chain_nofp;.*;spin [0-9]+$'
    assert_line --regexp '^shortlived_nofp;.*;short_lived_work [0-9]+$'
    refute_line --regexp '^sha256sum;'
    grep -qE '^chain_nofp;_start;.*;main;a;b;spin [0-9]+$' <<<"$output" &&
      grep -qE '^shortlived_nofp;_start;.*;main;short_lived_work [0-9]+$' <<<"$output" && return 0
  done
  fail "no whole stacks of both children in 3 runs: $output"
}

@test "SIGINT to gp-record reaches the command, and the archive is complete" {
  # bats test_tags=root,bpf
  require_root_bpf
  # The command says when its trap is set; it runs until SIGINT, then exits 42. (--foreground:
  # timeout passes a signal to gp-record alone, not a second time to its whole process group,
  # which gp-record would take as a second Ctrl-C.)
  timeout --foreground -s KILL 60 gp-record -F 99 -o "$OUT/rec.gpa" -- \
    bash -c 'trap "exit 42" INT; : >"$0"; while :; do :; done' "$OUT/ready" 2>"$OUT/rec.err" 3>&- &
  local recorder=$! i status=0
  for i in $(seq 300); do
    [ -e "$OUT/ready" ] && break
    sleep 0.1
  done
  [ -e "$OUT/ready" ] || fail "the command did not start: $(cat "$OUT/rec.err")"
  sleep 0.5
  kill -INT "$recorder"
  wait "$recorder" || status=$?
  [ "$status" -eq 42 ] || fail "gp-record exited $status, not the command's 42: $(cat "$OUT/rec.err")"
  # Read whole: no warning of a cut archive or session.
  run -0 --separate-stderr gp-symbolize "$OUT/rec.gpa" -o "$OUT/named.gpa"
  [[ "$stderr" != *warning* && "$stderr" != *error* ]] || fail "$stderr"
  run -0 gp-fold -f folded "$OUT/named.gpa"
  assert_line --regexp '^bash;'
}

@test "a command that does not exist is a one-line error, and no archive is written" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -127 --separate-stderr timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -- no-such-command-gp --x
  assert_equal "$stderr" "gp-record: error: cannot run 'no-such-command-gp': not found on PATH"
  run -127 --separate-stderr timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -- "$OUT/missing"
  assert_equal "$stderr" "gp-record: error: cannot run '$OUT/missing': No such file or directory"
  [ ! -e "$OUT/rec.gpa" ] || fail "an archive was written"
}

@test "a command cannot be combined with -p or with the archive on standard output" {
  run -2 --separate-stderr gp-record -p 1 -o "$OUT/rec.gpa" -- true
  assert_equal "$stderr" "gp-record: error: a command cannot be combined with -p, -t, --cgroup or -c"
  run -2 --separate-stderr gp-record -o - -- true
  assert_equal "$(head -n 1 <<<"$stderr")" "gp-record: error: with a command the archive cannot go to standard output: it is the command's"
}

@test "on a terminal the progress line and the hottest functions are shown, in a pipe never" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command script
  cd "$OUT"
  # script(1) gives gp-record a pseudo-terminal; the archive goes to gp.gpa by default.
  run -0 timeout -s KILL 90 script -qec "gp-record -F 199 -- $FIX/chain_nofp 2" /dev/null
  [[ "$output" =~ gp-record:\ [0-9]+s,\ [0-9]+\ samples ]] || fail "no progress line: $output"
  [[ "$output" == *"hottest functions"* ]] || fail "no summary: $output"
  [[ "$output" =~ [0-9]+\.[0-9]%\ +[0-9]+\ +[0-9]+\.[0-9]%\ +spin ]] || fail "spin is not in the table: $output"
  [ -s "$OUT/gp.gpa" ] || fail "no gp.gpa"
  run -0 bash -c "timeout -s KILL 90 gp-record -F 199 -o '$OUT/pipe.gpa' -- '$FIX/chain_nofp' 2 2>&1 | cat"
  [[ "$output" != *"hottest functions"* ]] || fail "a summary in a pipe: $output"
  [[ ! "$output" =~ [0-9]+s,\ [0-9]+\ samples ]] || fail "a progress line in a pipe: $output"
}
