#!/usr/bin/env bats
# gp-merge: options, exit statuses and messages, and real merges of archives that gp-import
# made from perf script fixtures, checked through gp-fold's totals.

bats_require_minimum_version 1.5.0
load helpers

FIXTURES="$GP_SOURCE_DIR/tests/fixtures/perf"

setup() {
  cd "$BATS_TEST_TMPDIR"
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

# Sum of the counts of a .col/folded stream (header lines skipped).
total() {
  gp-fold --format folded "$1" | awk '{ s += $NF } END { print s + 0 }'
}

imports() {
  gp-import "$FIXTURES/workload-g.txt" -o a.gpa
  gp-import "$FIXTURES/system-a-g.txt" -o b.gpa
}

@test "--help exits 0 and shows examples" {
  run --separate-stderr gp-merge --help
  assert_success
  assert_output --partial 'gp-merge system.gpa runtime.gpa > merged.gpa'
  assert_output --partial '--aggregate'
  assert_output --partial '--smart'
}

@test "--version names the tool" {
  run gp-merge --version
  assert_success
  assert_output --regexp '^gp-merge \(gp\) [0-9]+\.[0-9]+'
}

@test "unknown option is a usage error (2)" {
  run --separate-stderr gp-merge --bogus
  [ "$status" -eq 2 ]
  stderr_has "gp-merge: error: unknown option '--bogus'"
}

@test "stdin given twice is a usage error (2)" {
  run --separate-stderr gp-merge - - -o out.gpa
  [ "$status" -eq 2 ]
  stderr_has "standard input ('-') can be given only once"
}

@test "missing file fails (1) and names it" {
  run --separate-stderr gp-merge nope.gpa -o out.gpa
  [ "$status" -eq 1 ]
  stderr_has "gp-merge: error: cannot open 'nope.gpa'"
  [ ! -e out.gpa ]
}

@test "garbage input fails (1)" {
  head -c 4096 /dev/urandom > garbage.gpa
  run --separate-stderr gp-merge garbage.gpa -o out.gpa
  [ "$status" -eq 1 ]
  stderr_has "gp-merge: error:"
  stderr_has "garbage.gpa"
}

@test "a .col or perf.data input is named, with the tool that reads it (1)" {
  imports
  printf '# {"metadata": {}}\napp;main 3\n' > run.col
  run -1 --separate-stderr gp-merge a.gpa run.col -o out.gpa
  assert_equal "$stderr" "gp-merge: error: 'run.col' is a gProfiler .col file, not a gp archive: gp-fold and gp-flame read it"
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > perf.data
  run -1 --separate-stderr gp-merge perf.data -o out.gpa
  assert_equal "$stderr" "gp-merge: error: 'perf.data' is a perf.data file, not a gp archive: convert it with 'gp-import perf.data' first"
  [ ! -e out.gpa ]
}

@test "truncated input: warning, partial output, exit 3" {
  imports
  size=$(stat -c %s b.gpa)
  head -c $((size - 40)) b.gpa > cut.gpa
  run --separate-stderr gp-merge a.gpa cut.gpa -o out.gpa
  [ "$status" -eq 3 ]
  stderr_has "gp-merge: warning:"
  stderr_has "cut.gpa"
  [ "$(total out.gpa)" -ge "$(total a.gpa)" ]
}

@test "two imported archives: sessions kept, totals summed" {
  imports
  a=$(total a.gpa)
  b=$(total b.gpa)
  [ "$a" -gt 0 ] && [ "$b" -gt 0 ]
  run gp-merge a.gpa b.gpa -o out.gpa
  assert_success
  [ "$(total out.gpa)" -eq $((a + b)) ]
  # Standard input works as one of the inputs, and the default output is standard output.
  gp-merge a.gpa - < b.gpa > piped.gpa
  [ "$(total piped.gpa)" -eq $((a + b)) ]
}

@test "--aggregate: one session, same stacks whatever the input order" {
  imports
  gp-merge --aggregate a.gpa b.gpa -o ab.gpa
  gp-merge --aggregate b.gpa a.gpa -o ba.gpa
  [ "$(total ab.gpa)" -eq $(( $(total a.gpa) + $(total b.gpa) )) ]
  diff <(gp-fold --format folded ab.gpa) <(gp-fold --format folded ba.gpa)
  cmp ab.gpa ba.gpa
}

@test "--aggregate --no-compress output is still an archive gp-fold reads" {
  imports
  gp-merge --aggregate --no-compress a.gpa b.gpa -o raw.gpa
  gp-merge --aggregate a.gpa b.gpa -o lz4.gpa
  [ "$(stat -c %s raw.gpa)" -gt "$(stat -c %s lz4.gpa)" ]
  [ "$(total raw.gpa)" -eq "$(total lz4.gpa)" ]
}

@test "--smart without an fp/dwarf pair fails (1)" {
  imports
  run --separate-stderr gp-merge --smart a.gpa -o out.gpa
  [ "$status" -eq 1 ]
  stderr_has "--smart needs exactly one fp and one dwarf session"
}

@test "-v reports what the merge did" {
  imports
  run --separate-stderr gp-merge -v a.gpa b.gpa -o out.gpa
  assert_success
  stderr_has "runtime pids: 0 replaced"
}

@test "merged archives keep which stacks were truncated" {
  local archive="$GP_SOURCE_DIR/tests/fixtures/archives/stack-ends.gpa"
  gp-fold -f folded "$archive" > expected.folded
  gp-merge "$archive" -o merged.gpa
  gp-fold -f folded merged.gpa | diff -u expected.folded -
  gp-merge --aggregate "$archive" "$archive" -o twice.gpa
  run gp-fold -f folded twice.gpa
  assert_line 'app;[truncated];deep;deep;spin 6'
  assert_line 'app;main;loop;spin 14'
}

@test "archives of different format versions merge and keep the newer fields" {
  # format-1.0/1.1/1.2.gpa: 1.1 added stack ends, 1.2 the comm at sample time and Python
  # packages. The merge folds as the three inputs fold together, in both modes.
  local dir="$GP_SOURCE_DIR/tests/fixtures/archives"
  local inputs=("$dir/format-1.0.gpa" "$dir/format-1.1.gpa" "$dir/format-1.2.gpa")
  gp-fold -f folded "${inputs[@]}" > expected.folded
  grep -q '^gunicorn;\[truncated\];main;main;inlined_helper 14$' expected.folded
  grep -q '(/srv/app.py:12 \[flask==3.0.0\]) 10$' expected.folded
  gp-merge "${inputs[@]}" -o merged.gpa
  gp-fold -f folded merged.gpa | diff -u expected.folded -
  gp-merge --aggregate "${inputs[@]}" -o aggregated.gpa
  gp-fold -f folded aggregated.gpa | diff -u expected.folded -
}
