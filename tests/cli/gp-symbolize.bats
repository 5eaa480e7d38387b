#!/usr/bin/env bats
# gp-symbolize: real recordings (gp-record's perf sampler on a fixture program) symbolized on the
# same host, off-host from an exported .build-id store after the binary is gone, and through a
# real debuginfod server on 127.0.0.1; --strict, idempotence, -j determinism, and each failure
# class with its exit status and message.

bats_require_minimum_version 1.5.0
load helpers

FIXTURES="$GP_BUILD_DIR/tests/fixtures/symbolize"

setup() {
  cd "$BATS_TEST_TMPDIR"
}

# Records `prog ARGS...` for about a second with gp-record's perf sampler into $2.
record_program() {
  local out=$1
  shift
  [ "$(id -u)" -eq 0 ] || skip "recording another process needs root (or perf_event_paranoid <= 1)"
  "$@" &
  local pid=$!
  sleep 0.2
  gp-record --sampler perf -F 499 -U -p "$pid" -d 1.5 -o "$out" 2>/dev/null
  local rc=$?
  wait "$pid" || true
  return $rc
}

# bats-assert 2.1 has no assert_stderr: these check `run --separate-stderr`'s $stderr.
stderr_has() {
  [[ "$stderr" == *"$1"* ]] || { echo "stderr lacks '$1':"; echo "$stderr"; return 1; }
}
stderr_matches() {
  [[ "$stderr" =~ $1 ]] || { echo "stderr does not match '$1':"; echo "$stderr"; return 1; }
}

# Folded user stacks of an archive, one "frames count" line each.
folded() {
  gp-fold -f folded -U "$1"
}

@test "--help exits 0 and shows the lookup options and examples" {
  run --separate-stderr gp-symbolize --help
  assert_success
  assert_output --partial 'gp-record -d 10 | gp-symbolize | gp-fold > out.col'
  assert_output --partial '--debug-dir'
  assert_output --partial '--export-symbols'
}

@test "--version names the tool" {
  run gp-symbolize --version
  assert_success
  assert_output --regexp '^gp-symbolize \(gp\) [0-9]+\.[0-9]+'
}

@test "an unknown option is a usage error with a Try line" {
  run -2 --separate-stderr gp-symbolize --bogus
  assert_equal "${stderr_lines[0]}" "gp-symbolize: error: unknown option '--bogus'"
  assert_equal "${stderr_lines[1]}" "Try 'gp-symbolize --help' for more information."
}

@test "an unknown demangle style is a usage error" {
  run -2 --separate-stderr gp-symbolize --demangle fancy -o out.gpa in.gpa
  stderr_has "Try 'gp-symbolize --help'"
}

@test "a missing input fails with status 1 and names the file" {
  run -1 --separate-stderr gp-symbolize missing.gpa -o out.gpa
  stderr_has "gp-symbolize: error: cannot open 'missing.gpa': No such file or directory"
}

@test "input that is not an archive fails with status 1" {
  head -c 4096 /dev/urandom > garbage.gpa
  run -1 --separate-stderr gp-symbolize garbage.gpa -o out.gpa
  stderr_has "gp-symbolize: error: 'garbage.gpa' is not a gp archive"
}

@test "folded text, a .col and a perf.data are named, with the tool that reads them" {
  echo "main;foo 1" > text.folded
  run -1 --separate-stderr gp-symbolize text.folded -o out.gpa
  assert_equal "$stderr" "gp-symbolize: error: 'text.folded' is folded text, not a gp archive: gp-fold and gp-flame read it"
  printf '# {"metadata": {}}\napp;main 3\n' > run.col
  run -1 --separate-stderr gp-symbolize run.col -o out.gpa
  assert_equal "$stderr" "gp-symbolize: error: 'run.col' is a gProfiler .col file, not a gp archive: gp-fold and gp-flame read it"
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > perf.data
  run -1 --separate-stderr gp-symbolize perf.data -o out.gpa
  assert_equal "$stderr" "gp-symbolize: error: 'perf.data' is a perf.data file, not a gp archive: convert it with 'gp-import perf.data' first"
  [ ! -e out.gpa ]
}

@test "one missing binary is counted in the singular" {
  printf 'app 7/7 1.000001: 1000 cpu-clock: \n\t1100 [unknown] (/nonexistent/app)\n\n' | gp-import -o raw.gpa
  run -0 --separate-stderr gp-symbolize raw.gpa -o named.gpa
  stderr_has "gp-symbolize: hint: 1 binary was not found (first: '/nonexistent/app')"
}

@test "a recording is symbolized on the recording host, with a summary on stderr" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  run --separate-stderr gp-symbolize rec.gpa -o named.gpa
  assert_success
  stderr_matches 'gp-symbolize: [0-9]+ of [0-9]+ frames resolved'
  run folded named.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
}

@test "on a terminal the binaries named so far are shown and erased at the end; never in a pipe" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  run -0 script -qec "gp-symbolize rec.gpa -o tty.gpa" /dev/null
  local drawn=$'\r'"gp-symbolize: [0-9]+ of [0-9]+ binaries named"
  [[ "$output" =~ $drawn ]] || fail "no progress: $(printf %q "$output")"
  # The line is erased before the summary, which starts at the line's beginning.
  local summary=$'\r\e\\[K'"gp-symbolize: [0-9]+ of [0-9]+ frames resolved"
  [[ "$output" =~ $summary ]] || fail "the summary shares the progress line: $(printf %q "$output")"
  run -0 script -qec "gp-symbolize -q rec.gpa -o quiet.gpa" /dev/null
  refute_output --partial 'binaries named'
  run -0 --separate-stderr gp-symbolize rec.gpa -o pipe.gpa
  [[ "$stderr" != *"binaries named"* ]] || fail "progress in a pipe: $stderr"
}

@test "off-host: the binary is gone and only an exported store is used" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  run --separate-stderr gp-symbolize --export-symbols store rec.gpa
  assert_success
  stderr_has "binaries to 'store'"
  [ -n "$(find store/.build-id -type f)" ]
  rm app
  run --separate-stderr gp-symbolize --stores-only rec.gpa -o bare.gpa
  assert_success
  stderr_has 'no-file'
  run --separate-stderr gp-symbolize --stores-only --debug-dir store rec.gpa -o named.gpa
  assert_success
  run folded named.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
}

@test "a second run over a symbolized archive changes nothing" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  gp-symbolize --no-compress rec.gpa -o once.gpa
  gp-symbolize --no-compress once.gpa -o twice.gpa
  cmp once.gpa twice.gpa
}

@test "one job and several jobs write the same archive" {
  cp "$FIXTURES/sym_cpptempl" app
  record_program rec.gpa ./app 3
  gp-symbolize --no-compress -j 1 --lines rec.gpa -o one.gpa
  gp-symbolize --no-compress -j 4 --lines rec.gpa -o four.gpa
  cmp one.gpa four.gpa
}

@test "--demangle picks the C++ name style" {
  cp "$FIXTURES/sym_cpptempl" app
  record_program rec.gpa ./app 3
  gp-symbolize --demangle simplified rec.gpa -o simple.gpa
  gp-symbolize --demangle templates rec.gpa -o templ.gpa
  run folded simple.gpa
  assert_output --partial '(anonymous namespace)::hidden_work;ns::Stack::push'
  run folded templ.gpa
  assert_output --partial '(anonymous namespace)::hidden_work;ns::Stack<int>::push'
}

@test "--strict turns unresolved frames into status 3" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  rm app
  run -3 --separate-stderr gp-symbolize --strict --stores-only rec.gpa -o out.gpa
  stderr_has 'gp-symbolize: warning:'
  stderr_has 'unresolved (--strict)'
  [ -s out.gpa ]
}

@test "a truncated archive is symbolized as far as it goes, with status 3" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  gp-symbolize --no-compress rec.gpa -o full.gpa
  head -c $(( $(stat -c %s full.gpa) - 40 )) full.gpa > cut.gpa
  run -3 --separate-stderr gp-symbolize cut.gpa -o out.gpa
  stderr_has "gp-symbolize: warning: archive 'cut.gpa' is truncated"
  # Said once, as one sentence: not repeated at the end of the stream, not prefixed twice.
  [ "$(grep -c "is truncated" <<<"$stderr")" -eq 1 ] || fail "the cut is reported other than once: $stderr"
  [[ "$stderr" != *"is truncated: archive"* ]] || fail "the warning repeats its prefix: $stderr"
}

@test "garbage after a complete session: the session is kept, a warning, status 3" {
  cp "$FIXTURES/sym_fp" app
  record_program rec.gpa ./app 3
  { cat rec.gpa; printf 'not an archive\n'; } > tail.gpa
  run -3 --separate-stderr gp-symbolize tail.gpa -o out.gpa
  stderr_has "gp-symbolize: warning: archive 'tail.gpa' has trailing garbage"
  run -0 folded out.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
}

@test "an archive is never written to a terminal" {
  run -2 --separate-stderr script -qec "gp-symbolize /dev/null" /dev/null
  assert_output --partial 'refusing to write a binary archive to a terminal'
}

@test "debuginfod: names come from a local server indexing the debug files" {
  require_command debuginfod
  require_command curl
  cp "$FIXTURES/sym_fp" app
  objcopy --only-keep-debug app app.debug
  strip --strip-all app
  record_program rec.gpa ./app 3
  mkdir -p served && mv app.debug served/
  local port=$(( 20000 + RANDOM % 20000 ))
  debuginfod -F -p "$port" -d "$BATS_TEST_TMPDIR/db.sqlite" -t 0 -g 0 "$BATS_TEST_TMPDIR/served" \
    > debuginfod.log 2>&1 &
  local server=$!
  local id
  id=$(readelf -n app | sed -n 's/.*Build ID: //p')
  for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/debuginfo" && break
    sleep 0.2
  done
  run --separate-stderr gp-symbolize --stores-only rec.gpa -o without.gpa
  run folded without.gpa
  refute_output --partial 'fp_leaf'
  DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$BATS_TEST_TMPDIR/cache" \
    run --separate-stderr gp-symbolize -v --stores-only --debuginfod rec.gpa -o named.gpa
  kill "$server"
  wait "$server" || true
  assert_success
  stderr_has "from debuginfod '$BATS_TEST_TMPDIR/cache/"
  run folded named.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
}

# Records two programs side by side for about a second into $1 (user stacks only).
record_two() {
  [ "$(id -u)" -eq 0 ] || skip "recording other processes needs root (or perf_event_paranoid <= 1)"
  local out=$1 a b rc=0
  "$2" 3 &
  a=$!
  "$3" 3 &
  b=$!
  sleep 0.2
  gp-record --sampler perf -F 499 -U -p "$a,$b" -d 1.5 -o "$out" 2>/dev/null || rc=$?
  wait "$a" "$b" || true
  return $rc
}

# Moves the store files of one binary's build-id from store $2 into store $3.
move_build_id() {
  local id rel
  id=$(readelf -n "$1" | sed -n 's/.*Build ID: //p')
  rel=.build-id/${id:0:2}/${id:2}
  mkdir -p "$3/.build-id/${id:0:2}"
  mv "$2/$rel"* "$3/.build-id/${id:0:2}/"
}

@test "a second run with another store fills only what the first left, from the sidecar store" {
  cp "$FIXTURES/sym_fp" one
  cp "$FIXTURES/sym_inline" two
  record_two rec.gpa ./one ./two
  gp-symbolize -q --export-symbols all rec.gpa
  move_build_id one all first
  move_build_id two all second
  rm one two
  run --separate-stderr gp-symbolize --stores-only --debug-dir first rec.gpa -o once.gpa
  assert_success
  stderr_matches ' no-file'
  run folded once.gpa
  assert_output --regexp 'fp_outer;fp_middle;fp_leaf [0-9]+'
  refute_output --partial 'inl_'
  local fp_once
  fp_once=$(folded once.gpa | grep fp_leaf)

  mv second once.gpa.symbols  # the sidecar store of once.gpa, used without any option
  run --separate-stderr gp-symbolize -v --stores-only once.gpa -o twice.gpa
  assert_success
  stderr_has "from sidecar 'once.gpa.symbols/.build-id/"
  stderr_matches '\(([1-9][0-9]*) in this run\)'
  [[ "$stderr" != *"/one' ("* ]] || { echo "one was looked up again"; false; }
  [ -n "$(folded twice.gpa | grep inl_)" ]
  [ "$(folded twice.gpa | grep fp_leaf)" = "$fp_once" ]
}

@test "symbolizing keeps which stacks were truncated" {
  local archive="$GP_SOURCE_DIR/tests/fixtures/archives/stack-ends.gpa"
  gp-fold -f folded "$archive" > expected.folded
  run --separate-stderr gp-symbolize "$archive" -o out.gpa
  assert_success
  gp-fold -f folded out.gpa | diff -u expected.folded -
}

@test "symbolizing keeps the comm at sample time and Python packages (format 1.2)" {
  local archive="$GP_SOURCE_DIR/tests/fixtures/archives/format-1.2.gpa"
  gp-fold -f folded "$archive" > expected.folded
  grep -q '^gunicorn;' expected.folded
  grep -q '\[flask==3.0.0\])' expected.folded
  run --separate-stderr gp-symbolize "$archive" -o out.gpa
  assert_success
  gp-fold -f folded out.gpa | diff -u expected.folded -
}
