#!/usr/bin/env bats
# Trust. A local user against root: files and links an unprivileged user (nobody) plants where
# root's gp tools write or read -- a sticky world-writable directory, gp-upload's spool, the
# sidecar symbol store next to an archive -- are refused with a message, and nothing of theirs
# is used (these run as root, to give files to another user; recording tests also need BPF).
# Hostile text: untrusted bytes in diagnostics are escaped, counts that would overflow and
# malformed .col headers are refused, and a failed -o leaves no partial file.

bats_require_minimum_version 1.5.0
load helpers

FIXTURES="$GP_BUILD_DIR/tests/fixtures/symbolize"
SERVERS="$GP_SOURCE_DIR/tests/servers"
TOKEN="s3cret-token-XYZ"

require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root to give files to another user"; }

setup() {
  cd "$BATS_TEST_TMPDIR"
  mkdir pub
  chmod 1777 pub  # like /tmp
  echo precious > victim
  PIDS=()
}

teardown() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}

# plant NAME: a symlink pub/NAME -> victim, owned by nobody.
plant() {
  require_root
  ln -s "$BATS_TEST_TMPDIR/victim" "pub/$1"
  chown -h nobody "pub/$1"
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || { echo "stderr lacks '$1':"; echo "$stderr"; return 1; }
}

@test "gp-record -o refuses a link another user planted in a sticky world-writable directory" {
  # bats test_tags=root,bpf
  require_root_bpf
  plant run.gpa
  run -1 --separate-stderr timeout -s KILL 60 gp-record -d 0.5 -o pub/run.gpa
  stderr_has "gp-record: error: refused 'pub/run.gpa': a symbolic link owned by uid 65534"
  assert_equal "$(cat victim)" precious
}

@test "gp-record -o: a second recorder of the same file is refused with the pid of the first" {
  # bats test_tags=root,bpf
  require_root_bpf
  gp-record -d 8 -o run.gpa 2>first.err &
  local first=$!
  PIDS+=("$first")
  local i
  # The first holds the lock once its header is written (generous: CI machines are busy).
  for i in $(seq 600); do [ -s run.gpa ] && break; sleep 0.1; done
  [ -s run.gpa ] || fail "the first recorder wrote nothing in 60 s: $(cat first.err)"
  run -1 --separate-stderr timeout -s KILL 60 gp-record -d 0.5 -o run.gpa
  stderr_has "gp-record: error: cannot write 'run.gpa': process $first is writing it"
  wait "$first"
  run -0 --separate-stderr gp-fold run.gpa
}

@test "gp-profile --log-file refuses a link another user planted in a sticky world-writable directory" {
  # bats test_tags=root
  require_command unshare
  plant gp.log
  # Its own network namespace: gp-profile's single-instance lock is an abstract socket.
  run -1 --separate-stderr timeout -s KILL 60 unshare -n gp-profile -d 1 -o out --log-file pub/gp.log
  stderr_has "refused 'pub/gp.log': a symbolic link owned by uid 65534"
  assert_equal "$(cat victim)" precious
}

start_studio() {
  require_command python3
  rm -f studio.port
  python3 "$SERVERS/studio.py" --port-file studio.port --log studio.log --store store --token "$TOKEN" 2>studio.err &
  PIDS+=($!)
  local i
  for i in $(seq 100); do [ -s studio.port ] && break; sleep 0.1; done
  studio="http://127.0.0.1:$(cat studio.port)"
}

posts() { grep -c '"method": *"POST"' studio.log || true; }

a_col() { printf 'python;main;work 7\n' > a.col; }

@test "gp-upload --spool sends neither a planted symlink nor a file of another user's" {
  require_root
  start_studio
  a_col
  mkdir -m 700 sp
  printf 'root;only;secret 1\n' > secret.col
  chmod 600 secret.col
  ln -s "$BATS_TEST_TMPDIR/secret.col" sp/00000000000000000001-link.col
  printf 'theirs;stack 1\n' > sp/00000000000000000002-theirs.col
  chown nobody sp/00000000000000000002-theirs.col
  run -0 --separate-stderr gp-upload --token "$TOKEN" --service-name web --server-host "$studio" --spool sp a.col
  stderr_has "gp-upload: warning: skipped spool entry 'sp/00000000000000000001-link.col': not a regular file"
  stderr_has "skipped spool entry 'sp/00000000000000000002-theirs.col': owned by uid 65534"
  assert_equal "$(posts)" 1
  run grep -r -l -e secret -e theirs store
  assert_failure
}

@test "gp-upload --spool refuses a spool directory other users can write" {
  a_col
  mkdir sp
  chmod 777 sp
  run -1 --separate-stderr gp-upload --token "$TOKEN" --service-name web --server-host http://127.0.0.1:9 --spool sp a.col
  stderr_has "gp-upload: error: refused spool directory 'sp': other users can write it"
}

# Records ./app (sym_fp) with the perf sampler and exports its symbols to rec.gpa.symbols.
record_with_sidecar() {
  require_root
  cp "$FIXTURES/sym_fp" app
  ./app 3 &
  local pid=$!
  sleep 0.2
  gp-record --sampler perf -F 499 -U -p "$pid" -d 1.5 -o rec.gpa 2>/dev/null
  wait "$pid" || true
  gp-symbolize -q --export-symbols rec.gpa.symbols rec.gpa
  rm app
}

@test "gp-symbolize skips a sidecar store that another user owns" {
  record_with_sidecar
  run -0 --separate-stderr gp-symbolize --stores-only rec.gpa -o named.gpa
  run -0 gp-fold -f folded -U named.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
  chown -R nobody rec.gpa.symbols
  run -0 --separate-stderr gp-symbolize --stores-only rec.gpa -o forged.gpa
  stderr_has "gp-symbolize: warning: skipped the sidecar store 'rec.gpa.symbols': 'rec.gpa.symbols' is owned by uid 65534"
  run -0 gp-fold -f folded -U forged.gpa
  refute_output --partial fp_leaf
}

@test "gp-symbolize skips a sidecar store with a file every user can write" {
  record_with_sidecar
  chmod o+w "$(find rec.gpa.symbols -type f | head -1)"
  run -0 --separate-stderr gp-symbolize --stores-only rec.gpa -o forged.gpa
  stderr_has "skipped the sidecar store 'rec.gpa.symbols': "
  stderr_has "can be written by every user"
  run -0 gp-fold -f folded -U forged.gpa
  refute_output --partial fp_leaf
}

@test "untrusted text in a diagnostic is escaped: no forged line, no terminal escape" {
  local name=$'run\ngp-fold: error: forged\e[2J.gpa'
  run -1 --separate-stderr gp-fold "$name"
  assert_equal "${#stderr_lines[@]}" 1
  stderr_has "gp-fold: error: "
  stderr_has 'run\ngp-fold: error: forged\e[2J.gpa'
  [[ "$stderr" != *$'\e'* ]] || fail "a raw escape reached stderr"
}

@test "gp-fold refuses a .col whose header is malformed instead of reading its columns as frames" {
  printf '# {"application_metadata": [null, {"a": 1}, "metadata": {}}\n1;web;python;main 7\n' > bad.col
  run -1 --separate-stderr gp-fold -f folded bad.col
  stderr_has "gp-fold: error: 'bad.col' is not a collapsed profile: malformed .col header on line 1"
}

@test "gp-fold: counts whose sum overflows 64 bits are refused with a warning, not wrapped" {
  printf 'a;b 18446744073709551610\nc;d 18446744073709551610\ne;f 5\n' > big.folded
  run -3 --separate-stderr gp-fold -f folded big.folded
  stderr_has "gp-fold: warning: profile 'big.folded' has 1 malformed line, skipped (first: line 2: count 18446744073709551610 makes the profile's total overflow 64 bits)"
  assert_line "a;b 18446744073709551610"
  assert_line "e;f 5"
  refute_line --partial "c;d"
}

@test "gp-fold: a line with more frames than any stack may have is refused" {
  python3 -c 'print(";".join(["f"] * 9000) + " 1"); print("ok;line 2")' > deep.folded
  run -3 --separate-stderr gp-fold -f folded deep.folded
  stderr_has "line 1: more than 8192 frames"
  assert_output "ok;line 2"
}

@test "gp-fold: a 1 GB line is refused after 16 MiB, with bounded memory and no -o file" {
  # Two frames with huge names streamed from a pipe: 1 GiB of line 2 is never read whole.
  run -1 --separate-stderr bash -c '{ echo "ok;line 1"; printf "a;"; head -c 1G /dev/zero | tr "\0" x; echo " 1"; } |
    /usr/bin/time -f "%M" -o rss gp-fold -f folded -o out.folded -'
  assert_equal "$stderr" "gp-fold: error: cannot read '-': line 2 is longer than 16 MiB: not a profile line"
  [ ! -e out.folded ] || fail "an out.folded was left: $(wc -c < out.folded) bytes"
  local kib; kib=$(tail -1 rss)
  [ "$kib" -lt 262144 ] || fail "gp-fold peaked at $kib KiB for a refused line"
  # A regular file with the same kind of line, and a line just within the bound, read as before.
  { printf "a;"; head -c 17M /dev/zero | tr "\0" y; echo " 1"; } > long.folded
  run -1 --separate-stderr gp-fold -f folded long.folded
  assert_equal "$stderr" "gp-fold: error: cannot read 'long.folded': line 1 is longer than 16 MiB: not a profile line"
  { printf "a;"; head -c 15M /dev/zero | tr "\0" y; echo " 1"; } > within.folded
  run -0 --separate-stderr gp-fold -f folded -o within.out within.folded
  [ "$(wc -c < within.out)" -gt 15000000 ] || fail "the 15 MiB line was not folded"
}

@test "gp-fold -o leaves no partial file when writing fails" {
  python3 -c 'import sys; [print(f"main;work{i} {i+1}") for i in range(20000)]' > many.folded
  echo old > kept.folded
  # A 4 KiB file size limit makes the write fail half-way (EFBIG, with SIGXFSZ ignored).
  run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 4; exec gp-fold -f folded many.folded -o out.folded'
  stderr_has "gp-fold: error: cannot write 'out.folded'"
  [ ! -e out.folded ] || fail "a partial out.folded was left: $(wc -c < out.folded) bytes"
  run -1 --separate-stderr bash -c 'trap "" XFSZ; ulimit -f 4; exec gp-fold -f folded many.folded -o kept.folded'
  assert_equal "$(cat kept.folded)" old
  [ -z "$(ls -A | grep '\.tmp\.')" ] || fail "temporary files left: $(ls -A)"
}
