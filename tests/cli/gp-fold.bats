#!/usr/bin/env bats
# gp-fold: every format and switch on the checked-in fixture archive (tests/unit/fold_fixture.h),
# goldens, the independent .col checker (tests/tools/check_col.py), filters, --top, round trips,
# and each failure class with its exit status and message.
#
# Regenerate goldens (deliberately, then review the diff): GP_UPDATE_GOLDEN=1 bats gp-fold.bats

bats_require_minimum_version 1.5.0
load helpers

ARCHIVE="$GP_SOURCE_DIR/tests/fixtures/archives/fold-basic.gpa"
GOLDEN="$GP_SOURCE_DIR/tests/fixtures/golden"
CHECK_COL="$GP_SOURCE_DIR/tests/tools/check_col.py"
PERF="$GP_SOURCE_DIR/tests/fixtures/perf"

setup() {
  cd "$BATS_TEST_TMPDIR"
}

# Compares a produced file with its golden (or rewrites the golden with GP_UPDATE_GOLDEN=1).
assert_golden() {
  local produced=$1 name=$2
  if [ "${GP_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$produced" "$GOLDEN/$name"
  fi
  diff -u "$GOLDEN/$name" "$produced"
}

@test "--help exits 0 and shows formats and examples" {
  run --separate-stderr gp-fold --help
  assert_success
  assert_output --partial 'perf script | gp-import | gp-fold > out.col'
  assert_output --partial '--format'
  assert_output --partial '--profile-api-version'
}

@test "--version names the tool" {
  run gp-fold --version
  assert_success
  assert_output --regexp '^gp-fold \(gp\) [0-9]+\.[0-9]+'
}

@test "an unknown option is a usage error with a Try line" {
  run -2 --separate-stderr gp-fold --bogus
  assert_equal "${stderr_lines[0]}" "gp-fold: error: unknown option '--bogus'"
  assert_equal "${stderr_lines[1]}" "Try 'gp-fold --help' for more information."
}

@test "an unknown format is a usage error" {
  run -2 --separate-stderr gp-fold -f svg "$ARCHIVE"
  assert_equal "${stderr_lines[1]}" "Try 'gp-fold --help' for more information."
}

@test "a folded-only switch with --format col is a usage error" {
  run -2 --separate-stderr gp-fold --kernel-delimiter "$ARCHIVE"
  assert_equal "${stderr_lines[0]}" "gp-fold: error: option --kernel-delimiter applies to --format folded only, not --format col"
  assert_output ""
}

@test "--user-only and --kernel-only exclude each other" {
  run -2 --separate-stderr gp-fold -f folded -U -K "$ARCHIVE"
  [[ "${stderr_lines[0]}" == "gp-fold: error: "* ]]
}

@test "a missing input fails with status 1 and names it" {
  run -1 --separate-stderr gp-fold no-such.gpa
  assert_equal "$stderr" "gp-fold: error: cannot open 'no-such.gpa': No such file or directory"
  assert_output ""
}

@test "garbage text fails with status 1" {
  printf 'hello world\nnot a profile\n' > garbage.txt
  run -1 --separate-stderr gp-fold garbage.txt
  assert_equal "$stderr" "gp-fold: error: 'garbage.txt' is not a profile (gp archive, .col or folded text)"
  assert_output ""
}

@test "binary garbage on stdin fails with status 1" {
  head -c 65536 /dev/urandom > random.bin
  run -1 --separate-stderr gp-fold - < random.bin
  [[ "$stderr" == "gp-fold: error: "* ]]
}

@test "an empty input fails with status 1" {
  : > empty
  run -1 --separate-stderr gp-fold empty
  assert_equal "$stderr" "gp-fold: error: 'empty' is empty: not a profile"
}

@test "a truncated archive still gives output, a warning and status 3" {
  # cut inside the last message (the second session's trailer)
  head -c $(( $(stat -c %s "$ARCHIVE") - 30 )) "$ARCHIVE" > cut.gpa
  run -3 --separate-stderr gp-fold -f folded cut.gpa
  [[ "$stderr" == "gp-fold: warning: archive 'cut.gpa' is truncated"* ]]
  assert_output --partial 'server;main;serve'
}

@test "an archive on a pipe folds as the file does, and a truncated one still gives status 3" {
  cat "$ARCHIVE" | gp-fold -f folded - > piped.folded
  gp-fold -f folded "$ARCHIVE" | cmp - piped.folded
  head -c $(( $(stat -c %s "$ARCHIVE") - 30 )) "$ARCHIVE" > cut.gpa
  gp-fold -f folded cut.gpa > cut.folded 2>/dev/null || true
  run -3 --separate-stderr bash -c 'cat cut.gpa | gp-fold -f folded -'
  [[ "$stderr" == "gp-fold: warning: archive '-' is truncated"* ]]
  assert_output "$(cat cut.folded)"
}

@test "gp-import, gp-symbolize and gp-fold work under an address-space limit" {
  # They reserve a large heap for huge pages unless a limit is set; under one they keep
  # glibc's usual heap and give the same output.
  gp-import "$PERF/system-a-g.txt" | gp-symbolize 2>/dev/null | gp-fold > free.col
  run -0 bash -c "ulimit -v 1000000 && gp-import '$PERF/system-a-g.txt' | gp-symbolize 2>/dev/null | gp-fold > limited.col"
  cmp free.col limited.col
}

@test "malformed folded lines are skipped with a warning naming the first, status 3" {
  printf 'app;main 3\napp;broken\napp;main;work 2\n' > bad.folded
  run -3 --separate-stderr gp-fold -f folded bad.folded
  assert_equal "$stderr" "gp-fold: warning: profile 'bad.folded' has 1 malformed line, skipped (first: line 2: no count after the last space)"
  assert_output $'app;main 3\napp;main;work 2'
}

@test "col output of the fixture archive equals the golden" {
  gp-fold "$ARCHIVE" > out.col
  assert_golden out.col fold-basic.col
}

@test "col output passes the independent gProfiler-format checker" {
  require_command python3
  gp-fold "$ARCHIVE" -o out.col
  run python3 "$CHECK_COL" --sorted --studio-fields-known out.col
  assert_success
  assert_output "ok: 6 lines, 70 samples"
}

@test "col from perf script text passes the checker with the same sample total" {
  require_command python3
  gp-fold "$PERF/system-a-g.txt" > perf.col
  run python3 "$CHECK_COL" --sorted perf.col
  assert_success
  total=$(gp-fold -f folded --include-idle "$PERF/system-a-g.txt" | awk '{ s += $NF } END { print s }')
  assert_output --regexp "^ok: [0-9]+ lines, $total samples$"
}

@test "col round trip: gp-fold's .col folded again is byte-identical" {
  gp-fold "$ARCHIVE" > first.col
  gp-fold first.col > second.col
  cmp first.col second.col
  gp-fold - < first.col | cmp - first.col
}

@test "--profile-api-version v1 writes lines without index and container frames" {
  require_command python3
  gp-fold --profile-api-version v1 "$ARCHIVE" > v1.col
  python3 "$CHECK_COL" --sorted v1.col
  run tail -n +2 v1.col
  assert_line --index 0 'java;[Profiling skipped: profiled-oom];Fib.main([Ljava/lang/String|)V_[j] 2'
  # v1 lines carry no container frame, so only the stack lines survive a re-fold unchanged
  gp-fold --profile-api-version v1 v1.col > again.col
  diff <(tail -n +2 v1.col) <(tail -n +2 again.col)
}

@test "folded output of the fixture equals the golden (idle excluded by default)" {
  gp-fold -f folded "$ARCHIVE" > out.folded
  assert_golden out.folded fold-basic.folded
}

@test "--insert-dso-name names symbolized native frames 'function (dso)' as gProfiler" {
  # gProfiler's collapse_stack (gprofiler/utils/perf.py) with insert_dso_name: a symbolized user
  # frame gets " (dso)" appended; an unsymbolized one stays "(dso)", kernel frames take none,
  # and frames that are not perf's (Python, Java) are not touched.
  run -0 --separate-stderr gp-fold -f folded --insert-dso-name "$ARCHIVE"
  assert_equal "$output" "$(cat <<'EOF'
java;[Profiling skipped: profiled-oom];Fib.main([Ljava/lang/String|)V 2
python3;main (/srv/app.py:10) 4
python3;main (/srv/app.py:10);Worker.run|step (/srv/app.py:20) 12
server;main (/usr/bin/server);serve (/usr/bin/server);(/usr/bin/server) 5
server;main (/usr/bin/server);serve (/usr/bin/server);(/usr/bin/server);ksys_read;[unknown] 7
EOF
)"
}

@test "-o with a .folded extension picks the folded format" {
  gp-fold "$ARCHIVE" -o picked.folded
  gp-fold -f folded "$ARCHIVE" | cmp - picked.folded
}

@test "folded switches: --with-tid, --annotate, --kernel-delimiter, --include-idle" {
  run gp-fold -f folded --with-tid --annotate --kernel-delimiter --include-idle "$ARCHIVE"
  assert_success
  assert_line 'python3-200/201;main (/srv/app.py:10)_[p] 3'
  assert_line 'server-300/300;main;serve_[i];(/usr/bin/server);-;ksys_read_[k];[unknown]_[k] 7'
  assert_line 'swapper/0-0/0;do_idle_[k] 40'
}

@test "folded --with-pid uses comm-PID frames" {
  run gp-fold -f folded --with-pid "$ARCHIVE"
  assert_line 'server-300;main;serve;(/usr/bin/server) 5'
}

@test "folded --user-only and --kernel-only keep one side of each stack" {
  run gp-fold -f folded -U "$ARCHIVE"
  assert_line 'server;main;serve;(/usr/bin/server) 12'
  run gp-fold -f folded -K --annotate "$ARCHIVE"
  assert_output 'server;ksys_read_[k];[unknown]_[k] 7'
}

@test "filters by pid, comm and container apply to every format" {
  run gp-fold -f folded --pid 300,400 --comm server "$ARCHIVE"
  assert_output $'server;main;serve;(/usr/bin/server) 5\nserver;main;serve;(/usr/bin/server);ksys_read;[unknown] 7'
  gp-fold --container web "$ARCHIVE" > web.col
  run tail -n +2 web.col
  assert_output $'1;web;python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p] 4\n1;web;python3;appid: python: app.py (/srv/app.py);main (/srv/app.py:10)_[p];Worker.run|step (/srv/app.py:20)_[p] 12'
  grep -q '"containers": \["web"\]' web.col
}

@test "a filter matching nothing warns and exits 0" {
  run --separate-stderr gp-fold -f folded --comm nobody "$ARCHIVE"
  assert_success
  assert_equal "$stderr" "gp-fold: warning: no samples match the filters (70 samples read)"
  assert_output ""
}

@test "--top prints the frames with the most self samples" {
  run gp-fold --top 2 "$ARCHIVE"
  assert_success
  assert_line --index 0 --regexp '^ +SELF +SELF% +TOTAL +TOTAL% +FRAME$'
  assert_line --index 1 --regexp '^ +12 +40\.0% +12 +40\.0%  Worker\.run;step \(/srv/app\.py:20\)_\[p\]$'
  assert_line --index 2 --regexp '^ +7 +23\.3% +7 +23\.3%  \[unknown\]_\[k\]$'
  [ "${#lines[@]}" -eq 3 ]
}

@test "--top with --format is a usage error" {
  run -2 --separate-stderr gp-fold --top 3 -f folded "$ARCHIVE"
  [[ "${stderr_lines[0]}" == "gp-fold: error: "* ]]
}

@test "several inputs (archive and .col) aggregate into one profile" {
  gp-fold -f folded "$ARCHIVE" > one.folded
  gp-fold "$ARCHIVE" > one.col
  run gp-fold -f folded "$ARCHIVE" one.col
  assert_line 'server;main;serve;(/usr/bin/server) 10'
  assert_line 'python3;main (/srv/app.py:10) 8'
}

@test "pprof output, by --format or by the .pb.gz extension, is gzip data" {
  gp-fold -f pprof "$ARCHIVE" > out.pb.gz
  gzip -t out.pb.gz
  gp-fold "$ARCHIVE" -o ext.pb.gz
  gzip -t ext.pb.gz
}

@test "speedscope output is JSON with the speedscope schema" {
  require_command python3
  gp-fold "$ARCHIVE" -o out.speedscope.json
  run python3 -c 'import json,sys; d=json.load(open("out.speedscope.json")); print(d["$schema"])'
  assert_output 'https://www.speedscope.app/file-format-schema.json'
}

@test "writing to a full device fails with status 1" {
  [ -w /dev/full ] || skip "no /dev/full"
  run -1 --separate-stderr gp-fold "$ARCHIVE" -o /dev/full
  [[ "$stderr" == "gp-fold: error: cannot write '/dev/full'"* ]]
}

@test "perf script | gp-import | gp-fold gives a .col the independent checker accepts" {
  require_command python3
  command -v gp-import >/dev/null || fail "gp-import is not built in '$GP_BUILD_DIR/bin'"
  gp-import < "$PERF/system-a-g.txt" | gp-fold > pipeline.col
  run python3 "$CHECK_COL" --sorted pipeline.col
  assert_success
  gp-fold "$PERF/system-a-g.txt" | cmp - pipeline.col
}

@test "perf script text indented with spaces, or not at all, folds as the tab-indented text" {
  gp-fold -f folded "$PERF/workload-g.txt" > tabs.folded
  [ "$(wc -l < tabs.folded)" -gt 3 ]
  for indent in '        ' '   \t' ''; do
    sed "s/^\t */$(printf "$indent")/" "$PERF/workload-g.txt" > reindented.txt
    ! grep -q "$(printf '^\t')" reindented.txt
    run -0 --separate-stderr gp-fold -f folded reindented.txt
    assert_equal "$stderr" ""
    assert_equal "$output" "$(cat tabs.folded)"
  done
}

@test "perf script text with lines it cannot read is folded with a warning and status 3" {
  { head -n 40 "$PERF/workload-g.txt"; echo "junk line"; tail -n +41 "$PERF/workload-g.txt"; } > mixed.txt
  run -3 --separate-stderr gp-fold -f folded mixed.txt
  assert_equal "$stderr" "gp-fold: warning: skipped 1 line(s) of 'mixed.txt' that are not perf script output (first: line 41)"
  [ -n "$output" ]
}

# An archive whose frames were never named: perf printed addresses in DSOs only.
unnamed_archive() {
  printf 'app 7/7 1.000001: 1000 cpu-clock: \n\t1100 [unknown] (/nonexistent/app)\n\t1200 [unknown] (/nonexistent/app)\n\n' |
    gp-import -o "$1"
}

@test "an archive that was never symbolized is said so once, with the command to run" {
  unnamed_archive raw.gpa
  for args in "-f folded raw.gpa" "raw.gpa" "--top 5 raw.gpa" "-f folded raw.gpa raw.gpa"; do
    run -0 --separate-stderr gp-fold $args
    assert_equal "$stderr" "gp-fold: warning: most frames of 'raw.gpa' have no names: it was never symbolized
gp-fold: hint: name them first: 'gp-symbolize raw.gpa -o named.gpa', then use named.gpa"
  done
  gp-symbolize -q raw.gpa -o tried.gpa || true
  run -0 --separate-stderr gp-fold -f folded tried.gpa
  assert_equal "$stderr" ""
  run -0 --separate-stderr gp-fold -f folded "$PERF/workload-g.txt"
  assert_equal "$stderr" ""
}

@test "a perf.data file is refused with a pointer to gp-import" {
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > perf.data
  run -1 --separate-stderr gp-fold perf.data
  assert_equal "$stderr" "gp-fold: error: 'perf.data' is a perf.data file: convert it with 'gp-import perf.data' first"
}

# tests/unit/stack_end_fixture.h: "app" stacks that ended complete, unknown and truncated.
STACK_ENDS="$GP_SOURCE_DIR/tests/fixtures/archives/stack-ends.gpa"

@test "a truncated stack is folded under a [truncated] frame right after its comm" {
  run --separate-stderr gp-fold -f folded "$STACK_ENDS"
  assert_success
  assert_equal "$stderr" ""
  assert_equal "$output" "app;[truncated];(/opt/app/bin/app);(/opt/app/bin/app) 1
app;[truncated];deep;deep;spin 3
app;[truncated];deep;spin;read 2
app;main;loop;spin 7"
}

@test "--no-truncated-marker folds truncated stacks without the frame" {
  run --separate-stderr gp-fold -f folded --no-truncated-marker "$STACK_ENDS"
  assert_success
  assert_equal "$output" "app;(/opt/app/bin/app);(/opt/app/bin/app) 1
app;deep;deep;spin 3
app;deep;spin;read 2
app;main;loop;spin 7"
}

@test ".col lines have [truncated] after the comm and before the outermost frame reached" {
  gp-fold "$STACK_ENDS" -o out.col
  run tail -n +2 out.col
  assert_equal "$output" "0;;app;[truncated];(/opt/app/bin/app);(/opt/app/bin/app) 1
0;;app;[truncated];deep;deep;spin 3
0;;app;[truncated];deep;spin;read_[k] 2
0;;app;main;loop;spin 7"
  gp-fold --no-truncated-marker "$STACK_ENDS" -o hidden.col
  run grep -c '\[truncated\]' hidden.col
  assert_output 0
}

@test "-U keeps the [truncated] frame, -K has none" {
  run gp-fold -f folded -U "$STACK_ENDS"
  assert_line 'app;[truncated];deep;spin 2'
  run gp-fold -f folded -K "$STACK_ENDS"
  assert_equal "$output" "app;read 2"
}

@test "pprof and speedscope outputs carry the [truncated] frame unless hidden" {
  require_command python3
  gp-fold "$STACK_ENDS" -o out.pb.gz
  gzip -dc out.pb.gz | grep -aq '\[truncated\]'
  gp-fold "$STACK_ENDS" --no-truncated-marker -o hidden.pb.gz
  run grep -ac '\[truncated\]' <(gzip -dc hidden.pb.gz)
  assert_output 0
  gp-fold "$STACK_ENDS" -o out.speedscope.json
  run python3 -c '
import json
d = json.load(open("out.speedscope.json"))
names = [f["name"] for f in d["shared"]["frames"]]
p = d["profiles"][0]
for stack, weight in zip(p["samples"], p["weights"]):
    print(";".join(names[i] for i in stack), weight)'
  assert_line 'app;[truncated];deep;deep;spin 3'
  assert_line 'app;main;loop;spin 7'
}

@test "--top ranks the [truncated] frame by the samples under it" {
  run --separate-stderr gp-fold --top 10 "$STACK_ENDS"
  assert_success
  assert_line --regexp '^ +0 +0\.0% +6 +46\.2%  \[truncated\]$'
}

@test "-v says how many samples have a truncated stack" {
  run --separate-stderr gp-fold -v -f folded "$STACK_ENDS"
  assert_success
  [[ "$stderr" == *"6 of 13 samples have a truncated stack (under a '[truncated]' frame)"* ]]
}

@test "gp-fold reads its own [truncated] frames back as truncated stacks" {
  gp-fold "$STACK_ENDS" -o out.col
  gp-fold out.col -o again.col
  cmp out.col again.col
  gp-fold --no-truncated-marker "$STACK_ENDS" -o hidden.col
  gp-fold --no-truncated-marker out.col -o hidden-again.col
  cmp hidden.col hidden-again.col
  gp-fold -f folded "$STACK_ENDS" > out.folded
  run gp-fold -f folded --no-truncated-marker out.folded
  assert_line 'app;deep;deep;spin 3'
}

@test "every committed format version (format-*.gpa) folds with today's gp-fold as it should" {
  # One fixture per format version, written once by that version's writer (see
  # tests/unit/archive_compat_test.cpp); a new version adds its fixture and its lines here.
  # 1.0: no stack ends, comm at sample time nor packages. 1.1: stack ends ([truncated]).
  # 1.2: the name before an exec (gunicorn) and the Python package ([flask==3.0.0]).
  local f seen=0 expected
  for f in "$GP_SOURCE_DIR"/tests/fixtures/archives/format-*.gpa; do
    case "${f##*/}" in
      format-1.0.gpa)
        expected='python3;main;handle (/srv/app.py:12) (/srv/app.py:12) 10
python3;main;main;inlined_helper 14' ;;
      format-1.1.gpa)
        expected='python3;[truncated];main;main;inlined_helper 14
python3;main;handle (/srv/app.py:12) (/srv/app.py:12) 10
python3;main;main;inlined_helper 8' ;;
      format-1.2.gpa)
        expected='gunicorn;[truncated];main;main;inlined_helper 14
python3;[truncated];main;main;inlined_helper 4
python3;main;handle (/srv/app.py:12) (/srv/app.py:12 [flask==3.0.0]) 10
python3;main;main;inlined_helper 8' ;;
      *) fail "no expected output for ${f##*/}: add it to this test" ;;
    esac
    run --separate-stderr gp-fold -f folded "$f"
    assert_success
    assert_equal "$stderr" ""
    assert_output "$expected"
    seen=$((seen + 1))
  done
  [ "$seen" -eq 3 ]
}

@test "--external-metadata: the static part in the header, pid entries in the app metadata" {
  cat >ext.json <<'JSON'
{"static": {"team": "infra", "region": "eu"}, "application": {"300": {"tier": "gold"}}}
JSON
  run -0 --separate-stderr gp-fold --external-metadata ext.json "$ARCHIVE"
  local header
  header=$(head -1 <<<"$output")
  [[ "$header" == *'"external_metadata": {"team": "infra", "region": "eu"}'* ]] || fail "$header"
  [[ "$header" == *'{"tier": "gold"}'* ]] || fail "$header"
  # The native process (pid 300) had no metadata: its lines now carry a non-zero index.
  assert_line --regexp '^[1-9][0-9]*;;server;main;'
  refute_line --regexp '^0;;server;'
}

@test "--external-metadata: a missing or malformed file is named, exit 1, nothing written" {
  run -1 --separate-stderr gp-fold --external-metadata no-such.json -o out.col "$ARCHIVE"
  [[ "$stderr" == "gp-fold: error: cannot read 'no-such.json': No such file or directory" ]] || fail "$stderr"
  echo '{"application": {"web": {}}}' >bad.json
  run -1 --separate-stderr gp-fold --external-metadata bad.json -o out.col "$ARCHIVE"
  [[ "$stderr" == *"gp-fold: error: 'bad.json': \"application\" key \"web\" is not a pid"* ]] || fail "$stderr"
  [ ! -e out.col ]
  # A file past the 16-MiB cap is refused before it is parsed.
  head -c $((17 << 20)) /dev/zero | tr '\0' ' ' >big.json
  run -1 --separate-stderr gp-fold --external-metadata big.json -o out.col "$ARCHIVE"
  [[ "$stderr" == "gp-fold: error: 'big.json' is larger than 16 MiB" ]] || fail "$stderr"
  run -2 --separate-stderr gp-fold --external-metadata bad.json -f folded "$ARCHIVE"
  [[ "$stderr" == *"--external-metadata applies to --format col only"* ]] || fail "$stderr"
}
