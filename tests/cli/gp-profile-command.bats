#!/usr/bin/env bats
# gp-profile -- COMMAND: one session that profiles a command and what it starts, from its first
# instruction until it exits, into the usual .col and flame graph; gp-profile exits with the
# command's status. Recording tests need root with BPF and BTF (tagged root,bpf); every run is
# under `timeout`.
# bats file_tags=gp-profile

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
  mkdir -p "$OUT/tmp"
  export TMPDIR="$OUT/tmp"
}

@test "gp-profile exits with the command's status, writes its .col and flame graph, and in a pipe no table" {
  # bats test_tags=root,bpf
  require_root_bpf
  # A command that forks: the shell, then chain_nofp (0.3 s on the CPU), then exit 3.
  run -3 bash -c "set -o pipefail; timeout -s KILL 120 gp-profile -f 199 -o '$OUT/p' -- sh -c '\"\$0\" 0.3; exit 3' '$FIX/chain_nofp' 2>&1 | cat"
  [ -s "$OUT/p/last_profile.col" ] || fail "no .col: $output"
  [ -s "$OUT/p/last_flamegraph.html" ] || fail "no flame graph: $output"
  [[ "$output" != *"hottest functions"* ]] || fail "a summary in a pipe: $output"
  [[ "$output" != *"recording the command"* ]] || fail "a progress line in a pipe: $output"
  # Its child's whole stacks; and only the command's processes (gp-profile is the held command
  # before its exec).
  grep -qE '^[^;]*;[^;]*;chain_nofp;_start;.*;main;a;b;spin [0-9]+$' "$OUT/p/last_profile.col" ||
    fail "no whole stack of chain_nofp: $(cat "$OUT/p/last_profile.col")"
  run -0 bash -c "tail -n +2 '$OUT/p/last_profile.col' | cut -d';' -f3 | sort -u | grep -vxE 'chain_nofp|sh|gp-profile' || true"
  assert_output ''
}

@test "a command that lives 30 ms without frame pointers has whole stacks in the .col" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Its samples in short_lived_work: each whole from _start or under [truncated], never a frame of
  # the program as a root. On a loaded host a 30-ms process gets few samples: up to three runs
  # for one whole stack.
  local attempt col whole='^[^;]*;[^;]*;shortlived_nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;short_lived_work [0-9]+$'
  for attempt in 1 2 3; do
    rm -rf "$OUT/p"
    run -0 --separate-stderr timeout -s KILL 120 gp-profile -f 999 -o "$OUT/p" -- "$FIX/shortlived_nofp" 30
    col="$OUT/p/last_profile.col"
    grep -E ';shortlived_nofp;.*short_lived_work [0-9]+$' "$col" >"$OUT/work" || true
    run -0 bash -c "grep -vE '^[^;]*;[^;]*;shortlived_nofp;(_start;__libc_start_main[^;]*;__libc_start_call_main;main;short_lived_work|\\[truncated\\];)' \"\$0\" || true" "$OUT/work"
    assert_output ''
    grep -qE "$whole" "$OUT/work" && return 0
  done
  fail "no whole stack of short_lived_work in 3 runs: $(cat "$OUT/work")"
}

@test "a command that does not exist is a one-line error and status 127" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -127 --separate-stderr timeout -s KILL 120 gp-profile -o "$OUT/p" -- no-such-command-gp --x
  assert_equal "$stderr" "gp-profile: error: cannot run 'no-such-command-gp': not found on PATH"
  run -127 --separate-stderr timeout -s KILL 120 gp-profile -o "$OUT/p" -- "$OUT/missing"
  assert_equal "$stderr" "gp-profile: error: cannot run '$OUT/missing': No such file or directory"
  [ ! -e "$OUT/p/last_profile.col" ] || fail "a profile was written"
}

@test "a command cannot be combined with --continuous or --pids" {
  run -2 --separate-stderr gp-profile -c -o "$OUT/p" -- true
  [[ "$stderr" == *"a command cannot be combined with --continuous, --pids or --perf-use-cgroups"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --pids 1 -o "$OUT/p" -- true
  [[ "$stderr" == *"a command cannot be combined with --continuous, --pids or --perf-use-cgroups"* ]] || fail "$stderr"
}

@test "on a terminal the progress line and the hottest functions are shown" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command script
  # script(1) gives gp-profile a pseudo-terminal.
  run -0 timeout -s KILL 120 script -qec "gp-profile -f 199 -o '$OUT/tty' -- '$FIX/chain_nofp' 1" /dev/null
  [[ "$output" =~ session\ 1:\ recording\ the\ command,\ [0-9]+\ s ]] || fail "no progress line: $output"
  [[ "$output" == *"hottest functions"* ]] || fail "no summary: $output"
  [[ "$output" =~ [0-9]+\.[0-9]%\ +[0-9]+\ +[0-9]+\.[0-9]%\ +spin ]] || fail "spin is not in the table: $output"
}
