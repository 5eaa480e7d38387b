#!/usr/bin/env bats
# gp-flame: inputs, outputs, exit statuses and messages; the page itself is exercised in
# headless Chromium by tests/browser/flame.test.mjs (last test).

bats_require_minimum_version 1.5.0
load helpers

setup() {
  cd "$BATS_TEST_TMPDIR"
  printf 'app;main;compute;hash 40\napp;main;compute;sort 20\napp;main;io;read_[k] 10\napp;main;parse 25\nother;run 5\n' > profile.folded
  printf 'app;main;compute;hash 10\napp;main;compute;sort 50\napp;main;parse 40\n' > base.folded
}

# The JSON array `key` of the page's data, e.g. names.
page_array() {
  grep -o "\"$2\":\[[^]]*\]" "$1"
}

@test "folded text becomes one HTML page on stdout" {
  run --separate-stderr gp-flame profile.folded
  assert_success
  assert_equal "$stderr" ""
  [[ "$output" == "<!DOCTYPE html>"* ]]
  assert_output --partial '"names":["root","app","main","compute","hash","sort","io","read","parse","other","run"]'
  assert_output --partial '"self":[0,0,0,0,40,20,0,10,25,0,5]'
}

@test "an archive that was never symbolized is said so once, with the command to run" {
  printf 'app 7/7 1.000001: 1000 cpu-clock: \n\t1100 [unknown] (/nonexistent/app)\n\n' | gp-import -o raw.gpa
  run -0 --separate-stderr gp-flame raw.gpa -o flame.html
  assert_equal "$stderr" "gp-flame: warning: most frames of 'raw.gpa' have no names: it was never symbolized
gp-flame: hint: name them first: 'gp-symbolize raw.gpa -o named.gpa', then use named.gpa"
}

@test "the page is self-contained: no URL, no external script or style" {
  gp-flame profile.folded -o page.html
  run grep -cE 'https?://|<link|<script[^>]+src=|@import' page.html
  assert_output 0
}

@test "standard input works as '-' and by default" {
  gp-flame --deterministic - < profile.folded > a.html
  gp-flame --deterministic < profile.folded > b.html
  gp-flame --deterministic profile.folded > c.html
  run grep -c '<canvas' a.html
  assert_output 1
  cmp a.html b.html
  # Only the footer's source name differs.
  run diff a.html c.html
  assert_equal "${#lines[@]}" 4
  assert_line --partial '"source":"\u003cstdin\u003e"'
  assert_line --partial '"source":"profile.folded"'
}

@test "--deterministic pages are byte-identical across runs" {
  gp-flame --deterministic profile.folded -o one.html
  gp-flame --deterministic profile.folded -o two.html
  cmp one.html two.html
}

@test "without --deterministic the colour seed and the generation time vary" {
  gp-flame profile.folded -o one.html
  run grep -oE '"seed":[0-9]+,"generated":"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC"' one.html
  assert_success
  gp-flame --deterministic profile.folded -o two.html
  run grep -o '"seed":0,"generated":""' two.html
  assert_success
}

@test "title, subtitle and layout options reach the page, escaped" {
  gp-flame profile.folded --title 'a <b> & "c"' --subtitle 'sub</script>' --inverted -o page.html
  run grep -c '<title>a &lt;b&gt; &amp; &quot;c&quot;</title>' page.html
  assert_output 1
  run grep -o '"subtitle":"sub\\u003c/script\\u003e","inverted":true' page.html
  assert_success
}

@test "a gProfiler .col is read with its header, container and app-metadata frames stripped" {
  printf '%s\n' '# {"containers": [], "container_names_enabled": true, "metadata": {"hostname": "h"}, "metrics": {}, "application_metadata": [null], "application_metadata_enabled": true, "profiling_mode": "cpu"}' \
    '0;;java;Main.main([Ljava/lang/String|)V_[j];do_syscall_64_[k] 7' > p.col
  gp-flame p.col -o page.html
  run page_array page.html names
  assert_output '"names":["root","java","Main.main([Ljava/lang/String;)V","do_syscall_64"]'
  # kinds: pseudo comm, java, kernel
  run page_array page.html kinds
  assert_output '"kinds":[12,12,3,2]'
}

@test "a gp archive is read" {
  gp-flame "$GP_SOURCE_DIR/tests/fixtures/archives/format-1.0.gpa" -o page.html
  run page_array page.html names
  assert_output --partial '"root","python3"'
}

@test "a truncated stack is drawn under a [truncated] frame below its process frame" {
  local archive="$GP_SOURCE_DIR/tests/fixtures/archives/stack-ends.gpa"
  run --separate-stderr gp-flame --deterministic -v "$archive"
  assert_success
  # Names 3, 4, 5 (root, app, [truncated], a pseudo frame) are the first nodes: the marker hangs
  # right under the process frame.
  assert_output --partial '"names":["spin","(/opt/app/bin/app)","deep","root","app","[truncated]","read","main","loop"],"kinds":[1,1,1,12,12,12,2,1,1],"label":[3,4,5,'
  [[ "$stderr" == *"6 of 13 samples have a truncated stack (under a '[truncated]' frame)"* ]]
  run --separate-stderr gp-flame --deterministic --no-truncated-marker "$archive"
  assert_success
  assert_output --partial '"names":["spin","(/opt/app/bin/app)","deep","root","app","read","main","loop"]'
  refute_output --partial '[truncated]'
}

@test "--diff adds the base's counts in the new profile's shape" {
  run gp-flame profile.folded --diff base.folded -o diff.html
  assert_success
  run grep -o '"differential":true' diff.html
  assert_success
  run page_array diff.html bself
  # root, app, main, compute, hash, sort, io, read, parse, other, run
  assert_output '"bself":[0,0,0,0,10,50,0,0,40,0,0]'
}

@test "--min-width leaves out narrow frames" {
  gp-flame profile.folded --min-width 100 -o pruned.html
  run page_array pruned.html names
  assert_output '"names":["root","app","main","compute","hash","sort","io","read","parse"]'
  run gp-flame profile.folded --min-width -1
  assert_failure 2
}

@test "a missing input fails with status 1 and names the file" {
  run --separate-stderr gp-flame missing.col -o page.html
  assert_failure 1
  assert_equal "$stderr" "gp-flame: error: cannot open 'missing.col': No such file or directory"
  [ ! -e page.html ]
}

@test "input that is not a profile fails with status 1" {
  printf '\001\002 binary junk\n' > junk.bin
  run --separate-stderr gp-flame junk.bin
  assert_failure 1
  assert_equal "$stderr" "gp-flame: error: 'junk.bin' is not a profile (gp archive, .col or folded text)"
  assert_output ""
}

@test "a missing --diff base fails with status 1" {
  run --separate-stderr gp-flame profile.folded --diff nobase.folded
  assert_failure 1
  assert_equal "$stderr" "gp-flame: error: cannot open 'nobase.folded': No such file or directory"
}

@test "profile and base cannot both be standard input" {
  run --separate-stderr gp-flame - --diff - < profile.folded
  assert_failure 2
  assert_equal "$stderr" "gp-flame: error: the profile and the --diff base cannot both be standard input"
}

@test "an unwritable output fails with status 1" {
  run --separate-stderr gp-flame profile.folded -o no/such/dir/page.html
  assert_failure 1
  assert_equal "$stderr" "gp-flame: error: cannot create 'no/such/dir/page.html': No such file or directory"
}

@test "a truncated archive still gives a page, a warning and status 3" {
  local fixture="$GP_SOURCE_DIR/tests/fixtures/archives/format-1.0.gpa"
  head -c $(($(stat -c %s "$fixture") - 20)) "$fixture" > cut.gpa
  run --separate-stderr gp-flame cut.gpa -o page.html
  assert_failure 3
  [[ "$stderr" == "gp-flame: warning: archive 'cut.gpa' is truncated"* ]]
  grep -q '</html>' page.html
}

@test "malformed folded lines are skipped with a warning and status 3" {
  printf 'a;b 3\nbroken line\n' > bad.folded
  run --separate-stderr gp-flame bad.folded -o page.html
  assert_failure 3
  assert_equal "$stderr" "gp-flame: warning: profile 'bad.folded' has 1 malformed line, skipped (first: line 2: count 'line' is not a number)"
  run page_array page.html names
  assert_output '"names":["root","a","b"]'
}

@test "a closed pipe is not an error" {
  run bash -c 'gp-flame profile.folded | head -c 10 >/dev/null; echo "${PIPESTATUS[0]}"'
  assert_output 0
}

@test "the page works in headless Chromium: render, search, zoom, reset, tooltip, diff, 100k stacks" {
  local dir
  dir=$(browser_tests_dir)
  GP_FLAME="$GP_BUILD_DIR/bin/gp-flame" GP_ARTIFACTS_DIR="$GP_BUILD_DIR/artifacts" GP_CHROMIUM="$(command -v chromium)" \
    run node --test "$dir/flame.test.mjs"
  echo "$output" | grep -E '^# (100k|tests|pass|fail)' >&3 || true
  assert_success
  assert_line '# fail 0'
  [ -s "$GP_BUILD_DIR/artifacts/flame-basic.png" ]
  [ -s "$GP_BUILD_DIR/artifacts/flame-diff.png" ]
}
