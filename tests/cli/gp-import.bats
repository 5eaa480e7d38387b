#!/usr/bin/env bats
# gp-import: inputs (stdin, text file, perf.data), outputs, exit statuses and messages, and a
# real perf recording taken through the pipeline.

bats_require_minimum_version 1.5.0
load helpers

FIXTURES="$GP_SOURCE_DIR/tests/fixtures/perf"

setup() {
  cd "$BATS_TEST_TMPDIR"
}

# bats-assert in Debian 12 has no assert_stderr: the same checks on $stderr.
stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}
stderr_matches() {
  [[ "$stderr" =~ $1 ]] || fail "stderr does not match '$1'; it was: $stderr"
}

# Records `sleep 1` system-wide with call graphs into perf.data (root only).
record_system() {
  [ "$(id -u)" -eq 0 ] || skip "needs root for 'perf record -a'"
  require_command perf
  timeout 60 perf record -q -F 499 -a -g -o perf.data -- sleep 1 2>/dev/null
}

@test "--help exits 0 and shows the pipeline" {
  run --separate-stderr gp-import --help
  assert_success
  assert_output --partial 'perf script | gp-import | gp-fold > out.col'
  assert_output --partial '--event'
}

@test "--version names the tool" {
  run gp-import --version
  assert_success
  assert_output --regexp '^gp-import \(gp\) [0-9]+\.[0-9]+'
}

@test "an unknown option is a usage error with a Try line" {
  run -2 --separate-stderr gp-import --bogus
  assert_equal "${stderr_lines[0]}" "gp-import: error: unknown option '--bogus'"
  assert_equal "${stderr_lines[1]}" "Try 'gp-import --help' for more information."
}

@test "a missing input file fails with status 1 and names it" {
  run -1 --separate-stderr gp-import no-such-file.txt -o out.gpa
  assert_equal "$stderr" "gp-import: error: cannot open 'no-such-file.txt': No such file or directory"
  [ ! -e out.gpa ]
}

@test "garbage input fails with status 1 and leaves no output file" {
  printf 'hello\nthis is not perf\n' > garbage.txt
  run -1 --separate-stderr gp-import garbage.txt -o out.gpa
  assert_equal "$stderr" "gp-import: error: cannot import 'garbage.txt': not perf script output (line 1 is not understood)"
  [ ! -e out.gpa ]
}

@test "binary garbage on stdin fails with status 1" {
  head -c 100000 /dev/urandom > random.bin
  run -1 --separate-stderr gp-import -o out.gpa < random.bin
  assert_output ""
  assert_equal "$stderr" "gp-import: error: cannot import '<stdin>': it is binary data, not perf script output"
  [ ! -e out.gpa ]
}

@test "a gp archive is refused as input" {
  gp-import "$FIXTURES/workload-g.txt" -o a.gpa
  run -1 --separate-stderr gp-import a.gpa -o b.gpa
  stderr_has "it is a gp archive already"
}

@test "perf script text on stdin becomes an archive on stdout" {
  run --separate-stderr bash -c "gp-import < '$FIXTURES/workload-g.txt' > out.gpa"
  assert_success
  assert_equal "$stderr" ""
  # LZ4 frame magic (04 22 4d 18): compressed by default.
  run bash -c "head -c 4 out.gpa | od -An -tx1 | tr -d ' '"
  assert_output "04224d18"
}

@test "an archive written down a pipe is left uncompressed, and the next tool reads it" {
  # The next tool reads it at once: LZ4 would cost both sides more than the bytes it saves.
  run bash -c "gp-import '$FIXTURES/workload-g.txt' | head -c 4 | od -An -tx1 | tr -d ' '"
  refute_output "04224d18"
  gp-import "$FIXTURES/workload-g.txt" | gp-fold -f folded > piped.folded
  gp-import "$FIXTURES/workload-g.txt" -o file.gpa
  gp-fold -f folded file.gpa > file.folded
  [ -s piped.folded ]
  cmp piped.folded file.folded
  gp-import "$FIXTURES/workload-g.txt" | gp-symbolize | cat > sym.gpa
  run bash -c "head -c 4 sym.gpa | od -An -tx1 | tr -d ' '"
  refute_output "04224d18"
  gp-fold -f folded sym.gpa > /dev/null
}

@test "--no-compress writes a plain capnp stream that is larger" {
  gp-import "$FIXTURES/workload-g.txt" -o small.gpa
  gp-import --no-compress "$FIXTURES/workload-g.txt" -o big.gpa
  run bash -c "head -c 4 big.gpa | od -An -tx1 | tr -d ' '"
  refute_output "04224d18"
  [ "$(stat -c %s big.gpa)" -gt "$(stat -c %s small.gpa)" ]
}

@test "refuses to write the archive to a terminal" {
  require_command script
  NO_COLOR=1 run script -qec "gp-import '$FIXTURES/workload-g.txt'" /dev/null
  assert_failure 2
  assert_output --partial "gp-import: error: refusing to write a binary archive to a terminal"
  assert_output --partial "gp-import: hint:"
}

@test "mixed events: keeps the first, warns naming the others" {
  run --separate-stderr gp-import "$FIXTURES/multi-event.txt" -o out.gpa
  assert_success
  assert_equal "${stderr_lines[0]}" "gp-import: warning: '$FIXTURES/multi-event.txt' mixes events: imported 'cpu-clock' (60 samples), skipped 'task-clock' (60 samples)"
  assert_equal "${stderr_lines[1]}" "gp-import: hint: choose one with --event NAME"
}

@test "--event selects one event quietly" {
  run --separate-stderr gp-import --event task-clock "$FIXTURES/multi-event.txt" -o out.gpa
  assert_success
  assert_equal "$stderr" ""
}

@test "--event naming an absent event fails with status 1" {
  run -1 --separate-stderr gp-import --event cycles "$FIXTURES/multi-event.txt" -o out.gpa
  stderr_has "gp-import: error: no samples of event 'cycles'"
  stderr_has "'cpu-clock' (60 samples)"
}

@test "lines that are not perf script are skipped with a warning and status 3" {
  { head -n 40 "$FIXTURES/workload-g-default.txt"; echo "### junk"; echo "junk line"; \
    cat "$FIXTURES/workload-g-default.txt"; } > mixed.txt
  run -3 --separate-stderr gp-import mixed.txt -o out.gpa
  assert_equal "$stderr" "gp-import: warning: skipped 1 line(s) of 'mixed.txt' that are not perf script output (first: line 42)"
  [ -s out.gpa ]
}

@test "frame lines indented with spaces, spaces and a tab, or nothing are imported like tab-indented ones" {
  gp-import "$FIXTURES/workload-g.txt" -o tabs.gpa
  gp-fold -f folded tabs.gpa > tabs.folded
  grep -q ';main' tabs.folded
  for indent in '    ' '        ' '   \t' ''; do
    sed "s/^\t */$(printf "$indent")/" "$FIXTURES/workload-g.txt" > reindented.txt
    ! grep -q "$(printf '^\t')" reindented.txt
    run -0 --separate-stderr gp-import reindented.txt -o reindented.gpa
    assert_equal "$stderr" ""
    assert_equal "$(gp-fold -f folded reindented.gpa)" "$(cat tabs.folded)"
  done
}

@test "a .col or folded file is refused, naming what it is" {
  printf '# {"metadata": {}}\napp;main 3\n' > run.col
  run -1 --separate-stderr gp-import run.col -o out.gpa
  assert_equal "$stderr" "gp-import: error: cannot import 'run.col': it is a gProfiler .col file, not perf script output
gp-import: hint: gp-fold and gp-flame read it as it is"
  [ ! -e out.gpa ]
  printf 'app;main;work 3\napp;main 1\n' > run.folded
  run -1 --separate-stderr gp-import run.folded -o out.gpa
  [[ "$stderr" == "gp-import: error: cannot import 'run.folded': it is folded text, not perf script output"* ]]
  [ ! -e out.gpa ]
}

@test "empty input gives an empty archive and a warning" {
  run --separate-stderr gp-import -o out.gpa < /dev/null
  assert_success
  assert_equal "$stderr" "gp-import: warning: no samples in '<stdin>'"
  [ -s out.gpa ]
}

@test "an unwritable output fails with status 1" {
  run -1 --separate-stderr gp-import "$FIXTURES/workload-g.txt" -o /nonexistent/dir/out.gpa
  stderr_has "gp-import: error: cannot create '/nonexistent/dir/out.gpa'"
}

@test "a closed pipe downstream is not an error" {
  run bash -c "gp-import '$FIXTURES/system-a-g.txt' | head -c 10 > /dev/null; echo \${PIPESTATUS[0]}"
  assert_output 0
}

@test "a perf.data path is imported through perf script with --via-perf-script" {
  record_system
  run --separate-stderr gp-import --via-perf-script perf.data -o out.gpa
  assert_success
  [ -s out.gpa ]
  # Same sample count as perf's own text through stdin.
  perf script -i perf.data -F +pid 2>/dev/null | gp-import -v -o text.gpa 2> text.log
  run --separate-stderr gp-import -v --via-perf-script perf.data -o data.gpa
  stderr_has "running 'perf script -i perf.data --header -F +pid'"
  local n_text n_data
  n_text=$(sed -n 's/.*imported \([0-9]*\) samples.*/\1/p' text.log)
  n_data=$(sed -n 's/.*imported \([0-9]*\) samples.*/\1/p' <<<"$stderr")
  [ -n "$n_text" ] && [ "$n_text" -gt 0 ]
  assert_equal "$n_data" "$n_text"
}

@test "a real 'perf record -a -g' recording goes through perf script | gp-import | gp-fold" {
  record_system
  [ -x "$GP_BUILD_DIR/bin/gp-fold" ] || skip "gp-fold is not built"
  perf script -i perf.data 2>/dev/null > script.txt
  run --separate-stderr bash -c "gp-import < script.txt | gp-fold --format folded --include-idle > out.folded"
  assert_success
  [ -s out.folded ]
  # Every sample of perf's text is in the folded counts.
  local want got
  want=$(grep -cvE '^(\s|#|$)' script.txt)
  got=$(awk '{ n += $NF } END { print n }' out.folded)
  assert_equal "$got" "$want"
}

# Builds tests/fixtures/src/$1.c into ./$1 (frame pointers, nothing inlined).
build_fixture() {
  require_command cc
  cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline \
    -o "$1" "$GP_SOURCE_DIR/tests/fixtures/src/$1.c"
}

# "PERCENT NAME" lines of perf report's top self (no-children) symbols of perf.data.
perf_report_top() {
  perf report -i perf.data --no-children --sort sym --stdio -q -g none --percent-limit 0 2>/dev/null |
    sed -nE 's/^ *([0-9.]+)%  \[.\] (.*[^ ]) *$/\1 \2/p; s/^ *([0-9.]+)%  \[k\] (.*[^ ]) *$/\1 \2/p' |
    sort -rn | head -n "$1"
}

# SELF% of frame $2 in a `gp-fold --top` table $1 (0 when absent).
top_self_percent() {
  awk -v name="$2" 'NR > 1 { f = $0; sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+%  /, "", f);
    if (f == name) { sub(/%/, "", $2); print $2; found = 1; exit } } END { if (!found) print 0 }' "$1"
}

@test "a page-faults recording in frequency mode folds to perf report's percentages" {
  [ "$(id -u)" -eq 0 ] || skip "needs root for perf record"
  require_command perf
  build_fixture pagefaults
  # The kernel raises the period during the burst: few samples there stand for most faults.
  # gp-fold keeps sample units (a sample weighs 100/N %), so the recording needs a few hundred
  # samples for a 1-point tolerance: most of them come from trickle().
  # How many samples trickle() gets depends on the CPU's speed and the kernel's sample-rate cap
  # (which it lowers under load): run it longer until there are enough (its memory stays 4 MiB).
  # Both halves grow together, so their shares of the faults stay the same.
  local samples=0 scale=1
  while [ "$samples" -lt 200 ] && [ "$scale" -le 16 ]; do
    timeout 120 perf record -q -e page-faults -F 999 -g -o perf.data -- \
      ./pagefaults $((128 * scale)) $((20000 * scale)) 2>/dev/null
    samples=$(perf script -i perf.data -F period 2>/dev/null | grep -c .)
    scale=$((scale * 4))
  done
  [ "$samples" -ge 200 ] || fail "perf recorded only $samples samples"
  perf_report_top 5 > want.txt
  [ "$(wc -l < want.txt)" -ge 2 ] || fail "perf report gave: $(cat want.txt)"
  gp-import perf.data | gp-symbolize -o pf.gpa
  gp-fold --top 50 pf.gpa > top.txt
  gp-fold --top 50 --weight samples pf.gpa > top-samples.txt
  local pct name got by_samples
  while read -r pct name; do
    got=$(top_self_percent top.txt "$name")
    awk -v a="$pct" -v b="$got" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' ||
      fail "$name: perf report says $pct%, gp-fold says $got%: $(cat top.txt)"
  done < want.txt
  # Counting samples instead is far off for the burst: the test tells the two apart.
  read -r pct name < want.txt
  by_samples=$(top_self_percent top-samples.txt "$name")
  awk -v a="$pct" -v b="$by_samples" 'BEGIN { d = a - b; exit !(d > 10 || d < -10) }' ||
    fail "$name: $pct% by period, $by_samples% by samples: the recording does not vary its period"
  # The .col counts samples: weighed by period, its total is still the number of samples.
  assert_equal "$(gp-fold --include-idle pf.gpa | awk '!/^#/ { n += $NF } END { print n + 0 }')" "$samples"
  # pprof carries both values: samples, and the faults summed from the periods.
  gp-fold -f pprof pf.gpa -o pf.pb.gz
  zcat pf.pb.gz | grep -qa 'page-faults'
}

@test "samples taken before an exec keep the name they were taken under" {
  [ "$(id -u)" -eq 0 ] || skip "needs root for perf record"
  require_command perf
  build_fixture execchain
  build_fixture chain
  timeout 120 perf record -q -F 499 -g -o perf.data -- ./execchain 0.5 ./chain 0.5 2>/dev/null
  gp-import perf.data | gp-symbolize -o exec.gpa
  run -0 gp-fold -f folded exec.gpa
  assert_line --regexp '^execchain;.*main;before_exec [0-9]+$'
  assert_line --regexp '^chain;.*main;a;b;spin [0-9]+$'
  refute_line --regexp '^chain;.*before_exec [0-9]+$'
  # The same text read directly names them alike.
  perf script -i perf.data 2>/dev/null > exec.txt
  run -0 gp-fold -f folded exec.txt
  assert_line --regexp '^execchain;.*main;before_exec [0-9]+$'
}

@test "a cut perf.data keeps the samples perf printed before failing, with status 3" {
  [ "$(id -u)" -eq 0 ] || skip "needs root for 'perf record -a'"
  require_command perf
  # perf script prints a round of samples only once the round is complete: small ring buffers
  # (-m 8) filled by a busy loop make many rounds, so the first two thirds of the file always
  # hold finished ones. (An idle machine fills them once, at the end: nothing would be printed.)
  timeout 60 perf record -q -m 8 -F 499 -a -g -o perf.data \
    -- sh -c 'timeout 2 sh -c "while :; do :; done"; true' 2>/dev/null
  # Cut two thirds into the data section (its offset and size are the header's u64s at bytes
  # 40 and 48), not the file: on a host with many BPF programs the feature sections after the
  # data (BPF_BTF and the like) can be a third of the file, and perf reads a file cut among
  # them without an error.
  local data_offset data_size
  read -r data_offset data_size < <(od -An -t u8 -j 40 -N 16 perf.data)
  head -c $(( data_offset + data_size * 2 / 3 )) perf.data > cut.data
  run -3 --separate-stderr gp-import --via-perf-script cut.data -o out.gpa
  # perf either exits with an error or dies reading past the cut (SIGBUS on its mmap of the file).
  stderr_matches "gp-import: warning: 'perf script' failed \((exit status|killed by signal) [0-9]+.*\); keeping the samples it printed"
  [ -s out.gpa ]
}

@test "a perf that is missing is a clear error" {
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > fake.data
  GP_PERF=/nonexistent/perf run -1 --separate-stderr gp-import --via-perf-script fake.data -o out.gpa
  stderr_has "gp-import: error: cannot import 'fake.data': cannot run '/nonexistent/perf': No such file or directory"
  stderr_has "gp-import: hint:"
  GP_PERF=gp-no-such-perf run -1 --separate-stderr gp-import --via-perf-script fake.data -o out.gpa
  stderr_has "gp-import: error: cannot import 'fake.data': cannot run 'gp-no-such-perf': not found on PATH"
  echo 'not a program' > notexec && chmod 644 notexec
  GP_PERF=$PWD/notexec run -1 --separate-stderr gp-import --via-perf-script fake.data -o out.gpa
  stderr_has "gp-import: error: cannot import 'fake.data': cannot run '$PWD/notexec': Permission denied"
  [ ! -e out.gpa ]
}

@test "a perf that fails is reported with its status and message" {
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > fake.data
  require_command perf
  run -1 --separate-stderr gp-import --via-perf-script fake.data -o out.gpa
  stderr_matches "^gp-import: error: cannot import 'fake.data': 'perf script' failed \((exit status|killed by signal) [0-9]+"
  [ ! -e out.gpa ]
}

@test "a perf.data stream on stdin with --via-perf-script is refused with a hint" {
  printf 'PERFILE2\0\0\0\0\0\0\0\0' > fake.data
  run -1 --separate-stderr gp-import --via-perf-script -o out.gpa < fake.data
  assert_equal "${stderr_lines[0]}" "gp-import: error: cannot import '<stdin>' with --via-perf-script: perf reads a perf.data file by its path"
  assert_equal "${stderr_lines[1]}" "gp-import: hint: give its path ('gp-import --via-perf-script perf.data')"
}
