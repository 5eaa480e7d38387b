#!/usr/bin/env bats
# scripts/main-job.sh, README command 1's last step: a system-wide profile while the bundled demo
# runs. Checks what a new user would look for in gp-out/out.col and in the flame graph page
# (opened in headless Chromium). Needs root with BPF and BTF (tagged root,bpf).
# bats file_tags=main-job

load helpers
bats_require_minimum_version 1.5.0

@test "the main job profiles its demo: whole stacks of FP-less xz, Python and kernel frames, shown by the page" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command xz
  local out="$BATS_TEST_TMPDIR/gp-out"
  run -0 --separate-stderr timeout -s KILL 400 bash "$GP_SOURCE_DIR/scripts/main-job.sh" "$out"
  [[ "$output" =~ wrote\ .*/out\.col\ \(([0-9]+)\ samples\) ]] || fail "no summary line: $output"
  [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "no samples: $output"
  [[ "$output" == *"SELF%"* ]] || fail "no table of hottest functions: $output"
  local col="$out/out.col"
  [[ "$(head -c 3 "$col")" == '# {' ]] || fail "no .col header: $(head -c 200 "$col")"
  # .col lines: appid;container;comm;frames count. xz (Debian's, without frame pointers) unwound to
  # its entry: _start, or __libc_start_main under the stripped executable's "(binary)" frame.
  run -0 awk -F';' '$3 == "xz" && ($4 ~ /^_start/ || ($4 ~ /^\(/ && $5 ~ /^__libc_start_main/)) { n++ }
                    END { print n + 0 }' "$col"
  [ "$output" -gt 0 ] || fail "no whole xz stack: $(grep -m 5 ';xz;' "$col")"
  # The Python demo's call chain: walked by gp-record's BPF program inside the native stack,
  # named as PyPerf names it ("work.gp.scripts.demo.busy.main (/work/gp/scripts/demo/busy.py:25)":
  # the module is the script's path), or named by gp's Python sampler where the walk cannot run
  # ("main (busy.py:24)").
  grep -q -E ';([^;]*\.busy\.)?main \([^;]*busy\.py:[0-9]+\)_\[p\];([^;]*\.busy\.)?build_report \([^;]*busy\.py:[0-9]+\)_\[p\];([^;]*\.busy\.)?count_words \(' "$col" ||
    fail "no Python frames of the demo: $(grep -m 5 '_\[p\]' "$col")"
  grep -q '_\[k\]' "$col" || fail "no kernel frames"
  # The page shows them.
  local dir
  dir=$(browser_tests_dir)
  run -0 env GP_CHROMIUM="$(command -v chromium)" node "$dir/page_shows.mjs" "$out/flame.html" \
    --kind kernel --kind python --search __libc_start_main --search count_words --search xz
}
