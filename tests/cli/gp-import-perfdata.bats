#!/usr/bin/env bats
# gp-import reading perf.data itself: recordings made in the test by the real `perf record` fold,
# after gp-symbolize, to what perf's own decoding (perf script | gp-import) gives; a recording
# carried elsewhere symbolizes from a build-id store; bad files get clear messages.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
  [ "$(id -u)" -eq 0 ] || return 0
  command -v perf >/dev/null && command -v cc >/dev/null || return 0
  local src="$GP_SOURCE_DIR/tests/fixtures/src" f
  for f in chain execchain pagefaults; do
    cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline \
      -o "$BATS_FILE_TMPDIR/$f" "$src/$f.c"
  done
  # Without frame pointers: only a --call-graph dwarf recording unwinds them.
  for f in chain execchain; do
    cc -O1 -g -fomit-frame-pointer -fno-optimize-sibling-calls -fno-inline \
      -o "$BATS_FILE_TMPDIR/${f}_nofp" "$src/$f.c"
  done
  # One -g recording of chain, shared by the tests that only read it.
  (cd "$BATS_FILE_TMPDIR" &&
    timeout 60 perf record -q -F 999 -g -o chain.data -- ./chain 1 2>/dev/null)
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root for perf record"
  require_command perf
  require_command cc
  cd "$BATS_TEST_TMPDIR"
  cp "$BATS_FILE_TMPDIR"/{chain,execchain,pagefaults,chain.data,chain_nofp,execchain_nofp} .
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

# Folded profiles of $1 both ways: native.folded (gp-import → gp-symbolize → gp-fold) and
# text.folded (perf script → gp-import → gp-fold). Extra arguments go to both gp-imports.
fold_both() {
  local data=$1
  shift
  gp-import "$@" "$data" 2>native.err | gp-symbolize 2>/dev/null |
    gp-fold -f folded --include-idle > native.folded
  perf script -i "$data" -F +pid 2>/dev/null | gp-import "$@" 2>text.err |
    gp-fold -f folded --include-idle > text.folded
}

total() { awk '{ n += $NF } END { print n + 0 }' "$1"; }

# Samples per stack when only the frames named in $2 (a regex of whole names) are kept, with
# the process name: the two symbolizers name libc and ld.so frames differently (inline chains,
# local symbols), never the fixture's own functions or the kernel's (kallsyms on both sides).
keep_frames() {
  awk -v keep="^($2)$" '{ n = $NF; $NF = ""; sub(/ $/, ""); split($0, f, ";"); s = f[1];
    for (i = 2; i in f; i++) if (f[i] ~ keep) s = s ";" f[i]; c[s] += n }
    END { for (s in c) print s, c[s] }' "$1" | sort
}

# Both ways imported the same number of samples, some.
same_total() {
  local nt
  nt=$(total native.folded)
  [ "$nt" -gt 0 ] || fail "no samples imported: $(cat native.err)"
  assert_equal "$nt" "$(total text.folded)"
}

# Both ways agree: same total, same samples per fixture stack.
same_profile() {
  same_total
  diff -u <(keep_frames text.folded "$1") <(keep_frames native.folded "$1") ||
    fail "the fixture's stacks differ (- perf script, + native)"
}

# Both unwinders agree (--call-graph dwarf: perf's and gp's walks may part at a sample or two,
# in a prologue or where perf's maps are stale): same total, and every stack of the fixture's
# frames that perf gives 5% of the samples has as many in gp's, within 2% of the total.
similar_profile() {
  same_total
  awk -v total="$(total text.folded)" 'NR == FNR { n = $NF; $NF = ""; p[$0] = n; next }
    { n = $NF; $NF = ""; g[$0] = n }
    END { for (s in p) if (p[s] * 20 >= total) { d = p[s] - g[s]; if (d < 0) d = -d
            if (d * 50 > total) { print "stack " s ": perf " p[s] ", gp " g[s] + 0; bad = 1 } }
          exit bad }' <(keep_frames text.folded "$1") <(keep_frames native.folded "$1") ||
    fail "the fixture's stacks differ: $(diff <(keep_frames text.folded "$1") <(keep_frames native.folded "$1"))"
}

@test "a -g recording folds as perf script's text does, after symbolization" {
  fold_both chain.data
  same_profile 'main|a|b|spin'
  grep -q '^chain;.*main;a;b;spin [0-9]*$' native.folded || fail "$(cat native.folded)"
}

@test "a page-faults recording keeps each sample's period" {
  timeout 60 perf record -q -e page-faults -c 50 -g -o pf.data -- ./pagefaults 32 2000 2>/dev/null
  fold_both pf.data
  same_profile 'main|trickle|burst|work|fresh'
  # -c 50: every sample stands for 50 faults (pprof carries the summed periods).
  run -0 bash -c "gp-import pf.data | gp-symbolize 2>/dev/null | gp-fold --top 5 --weight samples"
  gp-import pf.data | gp-symbolize 2>/dev/null | gp-fold -f pprof -o pf.pb.gz
  zcat pf.pb.gz | grep -qa 'page-faults'
}

@test "two events at once: the first is imported with a warning, --event picks the other" {
  timeout 60 perf record -q -e cpu-clock,page-faults -g -o two.data -- ./chain 0.5 2>/dev/null
  run --separate-stderr gp-import two.data -o first.gpa
  assert_success
  stderr_has "gp-import: warning: 'two.data' mixes events: imported '"
  stderr_has "'cpu-clock"
  stderr_has "'page-faults"
  fold_both two.data --event page-faults
  same_profile 'main|a|b|spin'
  fold_both two.data --event cpu-clock
  same_profile 'main|a|b|spin'
  run -1 --separate-stderr gp-import --event cycles two.data -o none.gpa
  stderr_has "gp-import: error: no samples of event 'cycles' in 'two.data' (it has"
}

@test "a pipe-mode recording (perf record -o -) is read from standard input" {
  timeout 60 perf record -q -F 999 -g -o - -- ./chain 0.5 2>/dev/null > pipe.data
  gp-import < pipe.data 2>native.err | gp-symbolize 2>/dev/null |
    gp-fold -f folded --include-idle > native.folded
  perf script -i - -F +pid < pipe.data 2>/dev/null | gp-import 2>text.err |
    gp-fold -f folded --include-idle > text.folded
  same_profile 'main|a|b|spin'
  grep -q '^chain;.*main;a;b;spin [0-9]*$' native.folded || fail "$(cat native.folded)"
}

@test "a kernel-only recording folds to the same kernel stacks" {
  timeout 60 perf record -q -e cpu-clock:k -F 999 -g -o k.data -- ./pagefaults 64 4000 2>/dev/null
  fold_both k.data
  local nt
  nt=$(total native.folded)
  [ "$nt" -gt 0 ] || fail "no samples: $(cat native.err)"
  assert_equal "$nt" "$(total text.folded)"
  # Every sample's leaf is a kernel frame, named from kallsyms on both sides (user callers
  # still come with -g; the two symbolizers name libc's differently). Names that kallsyms gives
  # one address are one function, and perf and gp may pick either (__x86_indirect_thunk_rax
  # and __pi___x86_indirect_thunk_rax): each is read as the address's first name.
  awk '{ if (!($1 in first)) first[$1] = $3; print $3, first[$1] }' /proc/kallsyms > aliases
  leaves() { awk 'NR == FNR { alias[$1 "_[k]"] = $2 "_[k]"; next }
    { n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, f, ";"); l = f[k]
      if (l in alias) l = alias[l]; c[l] += n }
    END { for (l in c) print l, c[l] }' aliases "$1" | sort; }
  diff -u <(leaves text.folded) <(leaves native.folded)
}

@test "a recording carried elsewhere without its binaries symbolizes from a build-id store" {
  mkdir -p app store/.build-id moved
  cp chain app/chain
  (cd app && timeout 60 perf record -q -F 999 -g -o ../moved/perf.data -- ./chain 0.5 2>/dev/null)
  local id
  id=$(readelf -n app/chain | sed -n 's/.*Build ID: //p')
  mkdir -p "store/.build-id/${id:0:2}"
  mv app/chain "store/.build-id/${id:0:2}/${id:2}.debug"
  rm -rf app ~/.debug/.build-id/"${id:0:2}"/"${id:2}" 2>/dev/null || true
  gp-import moved/perf.data -o moved/run.gpa
  run --separate-stderr bash -c "gp-symbolize --debug-dir store moved/run.gpa | gp-fold -f folded"
  assert_success
  assert_line --regexp '^chain;.*main;a;b;spin [0-9]+$'
}

# Per mille of the samples of folded text $1 whose stack reaches the outermost frame.
whole_permille() {
  awk '{ n = $NF; total += n; split($1, f, ";")
         if (f[2] == "_start" || f[2] ~ /^__libc_start_main/ || f[2] == "start_thread" || f[2] ~ /^clone3?$/) whole += n }
       END { print total ? int(1000 * whole / total) : 0 }' "$1"
}

@test "a --call-graph dwarf recording of a program without frame pointers folds as perf unwinds it" {
  timeout 60 perf record -q -F 999 --call-graph dwarf -o nofp.data -- ./chain_nofp 1 2>/dev/null
  fold_both nofp.data
  similar_profile 'main|a|b|spin'
  grep -q '^chain_nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;a;b;spin [0-9]*$' native.folded ||
    fail "$(cat native.folded)"
  # Carried elsewhere without the program: what can be had is kept, the rest is marked and told.
  local id
  id=$(readelf -n chain_nofp | sed -n 's/.*Build ID: //p')
  rm -rf chain_nofp ~/.debug/.build-id/"${id:0:2}"/"${id:2}"
  run -0 --separate-stderr bash -c "gp-import nofp.data | gp-symbolize 2>/dev/null | gp-fold -f folded"
  stderr_has "gp-import: warning: "
  stderr_has "met binaries with no unwind table: '"
  stderr_has "/chain_nofp' (not found)"
  assert_line --regexp '^chain_nofp;\[truncated\];'
}

@test "a --call-graph dwarf recording of Debian's python3 is whole in 99% of its samples" {
  [ -x /usr/bin/python3 ] || skip "needs Debian's /usr/bin/python3"
  # 2 s of CPU time (on a loaded host as many samples as on an idle one): perf's 8 KiB copies of
  # the interpreter's start-up, a few samples, may be too short for a whole stack (perf's own
  # unwinding stops there too).
  timeout 60 perf record -q -F 999 --call-graph dwarf -o py.data -- /usr/bin/python3 -c '
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.process_time() + 2
while time.process_time() < end: fib(18)' 2>/dev/null
  gp-import py.data 2>py.err | gp-symbolize 2>/dev/null | gp-fold -f folded --include-idle > py.folded
  [ "$(total py.folded)" -gt 0 ] || fail "no samples: $(cat py.err)"
  local whole
  whole=$(whole_permille py.folded)
  [ "$whole" -ge 990 ] || fail "only $whole per mille of the stacks reach _start: $(sort -t' ' -k2 -nr py.folded | head -5)"
}

@test "perf record -p of a process that execs: each image's samples are unwound with its own tables" {
  # The pid waits until perf records it (perf starts disabled and acknowledges 'enable' on its
  # control fifo: the exec's records come after), then execs execchain_nofp, which execs
  # chain_nofp.
  mkfifo go ctl ack
  sh -c 'read x < go; exec ./execchain_nofp 0.8 ./chain_nofp 0.8' &
  local pid=$! perf i
  perf record -q -D -1 --control fifo:ctl,ack -F 999 --call-graph dwarf -p "$pid" \
    -o exec.data 2>/dev/null &
  perf=$!
  # Opened read-write, the fifos never block: a perf that fails to start fails the read.
  exec 5<>ctl 6<>ack
  echo enable >&5
  read -r -t 30 -u 6 i || fail "perf did not acknowledge 'enable'"
  exec 5>&- 6>&-
  echo > go
  wait "$pid"
  # perf ends with the process it follows (within 30 s, or it is stopped).
  for ((i = 0; i < 300; i++)); do
    kill -0 "$perf" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$perf" 2>/dev/null || true
  wait "$perf" || true
  fold_both exec.data
  similar_profile 'main|a|b|spin|before_exec'
  grep -q '^execchain_nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;before_exec [0-9]*$' native.folded ||
    fail "$(cat native.folded)"
  grep -q '^chain_nofp;_start;__libc_start_main[^;]*;__libc_start_call_main;main;a;b;spin [0-9]*$' native.folded ||
    fail "$(cat native.folded)"
}

@test "a perf.data cut at every record boundary and inside records is salvaged, never a crash" {
  local size cut status
  # Cuts inside the data section (after it come the header sections: the samples are whole).
  size=$(( $(od -An -t u8 -j 40 -N 8 chain.data) + $(od -An -t u8 -j 48 -N 8 chain.data) ))
  for cut in $(seq 120 $((size / 15 + 7)) $((size - 1))); do
    head -c "$cut" chain.data > cut.data
    run --separate-stderr gp-import cut.data -o cut.gpa
    # Every cut is truncated data: kept with a warning (3), or nothing to keep (1).
    [ "$status" -eq 3 ] || [ "$status" -eq 1 ] || fail "cut at $cut: status $status: $stderr"
    [[ "$stderr" == gp-import:\ * ]] || fail "cut at $cut: $stderr"
  done
  head -c $((size / 2)) chain.data > half.data
  run -3 --separate-stderr gp-import half.data -o half.gpa
  stderr_has "gp-import: warning: 'half.data' is truncated at offset"
  [ -s half.gpa ]
}

@test "a wrong magic, a header outside the file and compressed records are refused in one line" {
  printf 'PERFILE2\x68\0\0\0\0\0\0\0' > short.data
  head -c 200 /dev/zero >> short.data
  run -1 --separate-stderr gp-import short.data -o out.gpa
  [ "${#stderr_lines[@]}" -eq 1 ] || fail "$stderr"
  stderr_has "gp-import: error: cannot import 'short.data': perf.data"
  [ ! -e out.gpa ]
  # A huge declared attribute section.
  cp chain.data huge.data
  printf '\xff\xff\xff\xff\xff\xff\xff\x0f' | dd of=huge.data bs=1 seek=32 conv=notrunc 2>/dev/null
  run -1 --separate-stderr gp-import huge.data -o out.gpa
  assert_equal "$stderr" "gp-import: error: cannot import 'huge.data': perf.data attribute section lies outside the file"
}

@test "a sample_type gp does not know is named" {
  cp chain.data odd.data
  # The first attr's sample_type (attrs at offset 104 in a file header; sample_type at +24):
  # set bit 40.
  local attrs
  attrs=$(od -An -t u8 -j 24 -N 8 chain.data | tr -d ' ')
  printf '\x01' | dd of=odd.data bs=1 seek=$((attrs + 24 + 5)) conv=notrunc 2>/dev/null
  run -1 --separate-stderr gp-import odd.data -o out.gpa
  stderr_has "gp-import: error: cannot import 'odd.data': record at offset"
  stderr_has "has fields gp-import does not know"
}

@test "on a terminal the bytes read are shown and erased at the end; never in a pipe or with -q" {
  timeout 60 perf record -q -F 4999 -a -g -o many.data -- sleep 1 2>/dev/null
  run -0 script -qec "gp-import many.data -o tty.gpa" /dev/null
  local drawn=$'\r'"gp-import: [0-9.]+ of [0-9.]+ MiB read"
  [[ "$output" =~ $drawn ]] || fail "no progress: $(printf %q "$output")"
  # The last thing on the terminal erases the line: the shell prompt starts clean.
  [[ "$output" == *$'\r\e[K' ]] || fail "the progress line is left behind: $(printf %q "$output")"
  run -0 script -qec "gp-import -q many.data -o quiet.gpa" /dev/null
  refute_output --partial 'MiB read'
  run -0 --separate-stderr gp-import many.data -o pipe.gpa
  [[ "$stderr" != *"MiB read"* ]] || fail "progress in a pipe: $stderr"
  cmp tty.gpa pipe.gpa
}
