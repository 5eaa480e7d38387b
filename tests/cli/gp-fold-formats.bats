#!/usr/bin/env bats
# gp-fold --format pprof and --format speedscope, checked by their real consumers:
#  - pprof: Go's github.com/google/pprof/profile parser (Parse + CheckValid) and the `pprof`
#    CLI itself, both built offline from Debian's golang-github-google-pprof-dev
#    (tests/pprof/validate.sh);
#  - speedscope: speedscope's own published JSON schema via ajv (tests/speedscope/validate.sh,
#    npm ci from the checked-in lock file);
# and in each case the totals and stacks must equal what gp-fold prints as folded text.
# Input: a real `perf record -a -g` recording (tests/fixtures/perf/system-a-g.txt) imported with
# gp-import, and a live perf recording when perf may record here.

bats_require_minimum_version 1.5.0
load helpers

PERF="$GP_SOURCE_DIR/tests/fixtures/perf"
export GP_PPROF_TOOLS_DIR="$GP_BUILD_DIR/pprof-tools"
export GP_SPEEDSCOPE_TOOLS_DIR="$GP_BUILD_DIR/speedscope-tools"

setup() {
  cd "$BATS_TEST_TMPDIR"
  gp-import "$PERF/system-a-g.txt" -o system.gpa
}

pprof_check() { "$GP_SOURCE_DIR/tests/pprof/validate.sh" check "$1"; }
pprof_top() { "$GP_SOURCE_DIR/tests/pprof/validate.sh" top "$1"; }
speedscope_check() { "$GP_SOURCE_DIR/tests/speedscope/validate.sh" "$1"; }

# Sum of the counts of folded text on stdin.
folded_total() { awk '{ n += $NF } END { print n + 0 }'; }

@test "pprof of a perf recording parses with Go's pprof and keeps every sample" {
  require_command go
  gp-fold -f pprof system.gpa > out.pb.gz
  total=$(gp-fold -f folded --include-idle system.gpa | folded_total)
  [ "$total" -gt 100 ]
  run -0 pprof_check out.pb.gz
  assert_line "type samples/count"
  assert_line "total samples/count $total"
  assert_line "type cpu/nanoseconds"
  assert_line --regexp '^total cpu/nanoseconds [1-9][0-9]+$'
  assert_line --regexp '^period cpu/nanoseconds [1-9][0-9]+$'
}

@test "pprof per-process totals (comm label) equal the folded per-process totals" {
  require_command go
  gp-fold -f pprof system.gpa -o out.pb.gz
  run -0 pprof_check out.pb.gz
  # folded: the root frame is the comm; pprof: the comm is a label, not a frame.
  want=$(gp-fold -f folded --include-idle system.gpa |
         awk '{ n = $NF; sub(/ [0-9]+$/, ""); split($0, f, ";"); t[f[1]] += n }
              END { for (c in t) print "label comm=" c " " t[c] }' | LC_ALL=C sort)
  got=$(grep '^label comm=' <<<"$output" | LC_ALL=C sort)
  assert_equal "$got" "$want"
}

@test "pprof stacks equal the folded stacks without the process frame" {
  require_command go
  gp-fold -f pprof system.gpa -o out.pb.gz
  run -0 pprof_check out.pb.gz
  # Unsymbolized frames differ in spelling (folded names the DSO, pprof shows the address),
  # so only fully named stacks are compared.
  want=$(gp-fold -f folded --include-idle system.gpa | sed 's/^[^;]*;//' |
         grep -v -e '\[unknown\]' -e '(' | awk '{ n = $NF; sub(/ [0-9]+$/, ""); t[$0] += n }
         END { for (s in t) print "stack " s " " t[s] }' | LC_ALL=C sort)
  got=$(grep '^stack ' <<<"$output" | grep -v -e ';0x' -e ' 0x' -e '(' | LC_ALL=C sort)
  [ -n "$want" ]
  assert_equal "$got" "$want"
}

@test "the pprof CLI reads the profile and prints a top table" {
  require_command go
  gp-fold -f pprof system.gpa -o out.pb.gz
  run -0 pprof_top out.pb.gz
  assert_line --partial 'Type: cpu'
  assert_line --regexp '^Showing nodes accounting for .*100% of .* total'
  assert_line --regexp '^ +flat +flat% +sum% +cum +cum%$'
}

@test "-o NAME.pb.gz writes pprof without --format" {
  require_command go
  run -0 --separate-stderr gp-fold system.gpa -o profile.pb.gz
  assert_equal "$(head -c2 profile.pb.gz | od -An -tx1 | tr -d ' ')" "1f8b"
  run -0 pprof_check profile.pb.gz
}

@test "pprof honours --pid: only that process's samples, with pid and tid labels" {
  require_command go
  gp-fold -f pprof system.gpa -o all.pb.gz
  run -0 pprof_check all.pb.gz
  # The busiest non-idle process.
  pid=$(grep '^label pid=' <<<"$output" | sed 's/^label pid=//' | awk '$1 != 0' | sort -k2,2nr | head -1 | cut -d' ' -f1)
  [ -n "$pid" ]
  want=$(gp-fold -f folded system.gpa --pid "$pid" | folded_total)
  gp-fold -f pprof system.gpa --pid "$pid" -o one.pb.gz
  run -0 pprof_check one.pb.gz
  assert_line "total samples/count $want"
  assert_line "label pid=$pid $want"
  [ "$(grep -c '^label pid=' <<<"$output")" -eq 1 ]
  assert_line --regexp '^label tid=[0-9]+ [0-9]+$'
}

@test "folded text input becomes a count-only pprof profile with the same total" {
  require_command go
  gp-fold -f folded system.gpa > in.folded
  total=$(folded_total < in.folded)
  gp-fold -f pprof in.folded -o folded.pb.gz
  run -0 pprof_check folded.pb.gz
  assert_line "type samples/count"
  refute_line "type cpu/nanoseconds"
  assert_line "total samples/count $total"
  # The root frame of a folded line names the process: it becomes the comm label, and text
  # inputs carry no (made-up) pid labels.
  first=$(head -1 in.folded | cut -d';' -f1)
  assert_line --regexp "^label comm=${first//[/\\[} [0-9]+\$"
  refute_line --regexp '^label pid='
}

@test "a truncated archive gives a valid pprof profile of the prefix and exit 3" {
  require_command go
  size=$(stat -c %s system.gpa)
  head -c $((size * 2 / 3)) system.gpa > cut.gpa
  run -3 --separate-stderr gp-fold -f pprof cut.gpa -o cut.pb.gz
  assert_equal "${stderr_lines[0]%%:*}" "gp-fold"
  [[ "$stderr" == *"warning:"* ]]
  run -0 pprof_check cut.pb.gz
  assert_line "type samples/count"
}

@test "pprof as the pprof CLI shows it by default: no frame name is blank or cut" {
  require_command go
  printf '%s\n' 'python3;<module> (/srv/app.py:1)_[p];main (/srv/app.py:10)_[p] 5' \
    'java;java/lang/Thread.run()V_[j];Foo.bar([Ljava/lang/String|)V_[j] 3' > runtimes.folded
  gp-fold -f pprof runtimes.folded -o rt.pb.gz
  run -0 "$GP_SOURCE_DIR/tests/pprof/validate.sh" top-default rt.pb.gz
  assert_line --regexp ' <module> \(/srv/app.py:1\)$'
  assert_line --regexp ' Foo\.bar\(\[Ljava/lang/String\|\)V$'
  assert_line --regexp ' main \(/srv/app.py:10\)$'
}

@test "pprof is not written to a terminal" {
  require_command script
  run -1 script -qec "gp-fold --color=never -f pprof system.gpa" /dev/null
  assert_output --partial "gp-fold: error: refusing to write gzipped pprof data to a terminal"
}

@test "speedscope output follows speedscope's schema with the folded stacks and total" {
  require_command node
  require_command npm
  gp-fold -f speedscope system.gpa > out.json
  run -0 speedscope_check out.json
  total=$(gp-fold -f folded --annotate --include-idle system.gpa | folded_total)
  assert_line --regexp "^profiles 1 frames [0-9]+ samples [0-9]+ total $total\$"
  # Same stacks, frame for frame, as the annotated folded output (kind suffixes included).
  want=$(gp-fold -f folded --annotate --include-idle system.gpa | sed 's/^/stack /' | LC_ALL=C sort)
  got=$(grep '^stack ' <<<"$output" | LC_ALL=C sort)
  assert_equal "$got" "$want"
}

@test "speedscope honours --with-pid and --exclude-idle like folded" {
  require_command node
  require_command npm
  gp-fold -f speedscope --with-pid --exclude-idle system.gpa -o out.speedscope.json
  run -0 speedscope_check out.speedscope.json
  want=$(gp-fold -f folded --annotate --with-pid --exclude-idle system.gpa | sed 's/^/stack /' | LC_ALL=C sort)
  got=$(grep '^stack ' <<<"$output" | LC_ALL=C sort)
  assert_equal "$got" "$want"
  refute_line --regexp '^stack swapper'
}

@test "speedscope names the profile after its input file" {
  gp-fold -f speedscope system.gpa > out.json
  run grep -c '"name":"system.gpa"' out.json
  assert_output 2
}

@test "a live perf recording converts to pprof and speedscope with the same totals" {
  require_command perf
  require_command go
  require_command node
  perf record -q -F 999 -g -o perf.data -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' \
    >/dev/null 2>&1 || skip "perf cannot record here (perf_event_paranoid or no PMU access)"
  gp-import perf.data -o live.gpa
  total=$(gp-fold -f folded --include-idle live.gpa | folded_total)
  [ "$total" -gt 0 ]
  gp-fold -f pprof live.gpa -o live.pb.gz
  run -0 pprof_check live.pb.gz
  assert_line "total samples/count $total"
  assert_line --regexp '^label comm=sh [0-9]+$'
  run -0 pprof_top live.pb.gz
  gp-fold -f speedscope live.gpa -o live.speedscope.json
  run -0 speedscope_check live.speedscope.json
  assert_line --regexp "^profiles 1 frames [0-9]+ samples [0-9]+ total $total\$"
}

@test "pprof of a gp-record recording carries each sample's period: cpu nanoseconds = samples x 1e9/F" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command go
  sh -c 'while :; do :; done' &
  local busy=$!
  timeout -s KILL 60 gp-record -F 200 -d 2 -p "$busy" -o rec.gpa 2>/dev/null || true
  kill "$busy"
  gp-symbolize -q rec.gpa -o named.gpa || true
  gp-fold -f pprof named.gpa -o rec.pb.gz
  local samples
  samples=$(gp-fold -f folded --include-idle named.gpa | folded_total)
  [ "$samples" -gt 100 ] || fail "only $samples samples"
  run -0 pprof_check rec.pb.gz
  assert_line "total samples/count $samples"
  assert_line "total cpu/nanoseconds $((samples * 5000000))"
  assert_line "period cpu/nanoseconds 5000000"
}
