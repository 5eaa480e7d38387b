#!/usr/bin/env bats
# gp-record: records real workloads built here (tests/fixtures/src) and checks what a user would
# see after `gp-symbolize | gp-fold`. Recording tests need root with BPF and BTF (tagged
# root,bpf); every recorder runs under `timeout`.
# bats file_tags=gp-record

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
  # Fixtures live in a world-readable directory: the rootless test runs them as nobody.
  FIXTURES=$(mktemp -d /tmp/gp-record-fixtures.XXXXXX)
  export FIXTURES
  local src="$GP_SOURCE_DIR/tests/fixtures/src" bin="$FIXTURES"
  local cflags=(-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-inline)
  cc "${cflags[@]}" -o "$bin/chain" "$src/chain.c"
  cc "${cflags[@]}" -o "$bin/shortlived" "$src/shortlived.c"
  cc "${cflags[@]}" -fPIC -shared -o "$bin/libdlwork.so" "$src/libdlwork.c"
  cc "${cflags[@]}" -o "$bin/dlopen" "$src/dlopen.c" -ldl
  cc "${cflags[@]}" -o "$bin/execchain" "$src/execchain.c"
  cc "${cflags[@]}" -o "$bin/vdsoloop" "$src/vdsoloop.c"
  cc "${cflags[@]}" -o "$bin/recurse" "$src/recurse.c"
  cc "${cflags[@]}" -o "$bin/threadwaves" "$src/threadwaves.c" -pthread
  chmod 755 "$bin" "$bin"/*
}

teardown_file() {
  rm -rf "$FIXTURES"
}

setup() {
  FIX="$FIXTURES"
  OUT="$BATS_TEST_TMPDIR"
  WORKLOADS=()
}

teardown() {
  kill_workloads
}

# Fails unless the stderr of the last `run --separate-stderr` contains $1.
stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

# Waits for background job $1 and fails unless it exited with status $2.
wait_status() {
  local st=0
  wait "$1" || st=$?
  [ "$st" -eq "$2" ] || fail "job $1 exited $st, expected $2"
}

# Waits until process $1 runs $3 (its comm) in state $2 (S asleep, T stopped...), 1000 looks at most.
wait_state() {
  local _ stat
  for _ in $(seq 1000); do
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    [[ "$(cat "/proc/$1/comm" 2>/dev/null)" == "$3" && "${stat##*) }" == "$2 "* ]] && return 0
    sleep 0.1
  done
  return 1
}

# Waits until file $1 has a line containing $2, while process $3 runs (2 minutes at most).
wait_for_line() {
  local end=$((SECONDS + 120))
  while [ "$SECONDS" -lt "$end" ] && kill -0 "$3" 2>/dev/null; do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  grep -qF -- "$2" "$1" 2>/dev/null
}

# Kills background recorder $1 after 40 s if it is still running (the test's timeout); only a
# gp-record: by then the pid may be another process's (pid_max can be 32768).
watchdog() {
  (sleep 40; [ "$(cat "/proc/$1/comm" 2>/dev/null)" = gp-record ] && kill -KILL "$1" 2>/dev/null) \
    >/dev/null 2>&1 &
}

# Folded stacks (comm;frames count) of an archive, symbolized, kernel frames marked _[k].
fold() {
  require_command gp-symbolize
  require_command gp-fold
  gp-symbolize "$1" 2>"$BATS_TEST_TMPDIR/symbolize.err" | gp-fold -f folded --annotate "${@:2}"
}

# Records for $1 seconds with the remaining gp-record options into $OUT/rec.gpa.
record() {
  local seconds=$1
  shift
  timeout -s KILL $((${seconds%.*} + 30)) gp-record -d "$seconds" -o "$OUT/rec.gpa" "$@"
}

# The recurse fixture's samples in $OUT/rec.gpa number one per 4 ms of the CPU time that
# bash's `times` wrote to $OUT/times (its children's user and system time: "0m1.984s 0m0.004s").
one_sample_per_4ms_of_cpu() {
  local cpu samples expected
  cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%d", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$OUT/times")
  samples=$(fold "$OUT/rec.gpa" | awk '$1 ~ /^recurse;/ { s += $NF } END { print s + 0 }')
  expected=$((cpu / 4))
  [ "$expected" -ge 50 ] || fail "the workload ran only $cpu ms"
  [ "$samples" -ge $((expected * 8 / 10)) ] && [ "$samples" -le $((expected * 11 / 10 + 5)) ] ||
    fail "$samples samples for $cpu ms of CPU (expected about $expected)"
}

# --- usage and environment errors (no privileges needed) ---------------------------------

@test "--help lists the sampling options and examples" {
  run -0 gp-record --help
  assert_output --partial '--frequency'
  assert_output --partial '--stack-storage-size'
  assert_output --partial 'EXAMPLES'
}

@test "an unknown option is a usage error" {
  run -2 --separate-stderr gp-record --bogus
  stderr_has "gp-record: error: unknown option '--bogus'"
  stderr_has "Try 'gp-record --help'"
}

@test "a malformed cpu list is a usage error" {
  run -2 --separate-stderr gp-record -C 3-1 -d 1 -o "$OUT/x.gpa"
  stderr_has "gp-record: error: invalid CPU list '3-1'"
}

@test "a cpu that does not exist is a usage error" {
  run -2 --separate-stderr gp-record -C 4096 -d 1 -o "$OUT/x.gpa"
  stderr_has "gp-record: error: invalid CPU list '4096'"
}

@test "a pid or tid that does not exist fails with no such process, writing nothing" {
  run -1 --separate-stderr gp-record -p 999999 -d 1 -o "$OUT/x.gpa"
  assert_equal "$stderr" "gp-record: error: process 999999: no such process"
  run -1 --separate-stderr gp-record -t 999999 -d 1 -o "$OUT/x.gpa"
  assert_equal "$stderr" "gp-record: error: thread 999999: no such thread"
  [ ! -e "$OUT/x.gpa" ] || fail "an archive was written"
}

@test "a cgroup that does not exist is named, before any sampler is tried" {
  run -1 --separate-stderr gp-record --cgroup /nope -d 1 -o "$OUT/x.gpa"
  assert_equal "$(head -n 1 <<<"$stderr")" "gp-record: error: no such cgroup '/nope': No such file or directory"
  [[ "$stderr" != *sampler* ]] || fail "a sampler was mentioned: $stderr"
  [ ! -e "$OUT/x.gpa" ] || fail "an archive was written"
}

@test "a run whose sampler cannot start leaves no output file, nor truncates an old one" {
  local limit
  limit=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
  run -1 --separate-stderr gp-record -F $((limit + 1)) -d 1 -o "$OUT/x.gpa" --sampler perf -p $$
  [ ! -e "$OUT/x.gpa" ] || fail "an empty archive was left behind"
  echo keep > "$OUT/old.gpa"
  run -1 --separate-stderr gp-record -F $((limit + 1)) -d 1 -o "$OUT/old.gpa" --sampler perf -p $$
  assert_equal "$(cat "$OUT/old.gpa")" keep
}

@test "a duration with a unit is refused with a readable message" {
  run -2 --separate-stderr gp-record -d 1s -o "$OUT/x.gpa"
  [[ "$stderr" != *[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]* ]] || fail "a huge number: $stderr"
  [[ "$stderr" == *"--duration"*"'1s' is not a number greater than 0 (give a plain number, without a unit)"* ]] ||
    fail "unclear message: $stderr"
  [ ! -e "$OUT/x.gpa" ] || fail "an archive was written"
}

@test "an unknown stack walker is a usage error that lists the walkers" {
  run -2 --separate-stderr gp-record --stack-walker fast -d 1 -o "$OUT/x.gpa"
  stderr_has "gp-record: error: --stack-walker: fast not in {auto,gp,kernel}"
  [ ! -e "$OUT/x.gpa" ] || fail "an archive was written"
}

@test "user-only and kernel-only exclude each other" {
  run -2 --separate-stderr gp-record -U -K -d 1 -o "$OUT/x.gpa"
  stderr_has "gp-record: error: --user-only excludes --kernel-only"
  [ ! -e "$OUT/x.gpa" ] || fail "an archive was written"
}

@test "--output-dir needs --continuous" {
  run -2 --separate-stderr gp-record --output-dir "$OUT/d" -d 1
  stderr_has "gp-record: error: --output-dir requires --continuous"
  [ ! -e "$OUT/d" ] || fail "the output directory was created"
}

@test "an archive is never written to a terminal" {
  require_command script
  run -2 script -qec "gp-record --color never -d 1" /dev/null
  assert_output --partial "gp-record: error: refusing to write a binary archive to a terminal"
  assert_output --partial "gp-record: hint: use -o FILE"
}

@test "a frequency above the kernel's limit is refused with its name" {
  local limit
  limit=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
  run -1 --separate-stderr gp-record -F $((limit + 1)) -d 1 -o "$OUT/x.gpa" --sampler perf -p $$
  stderr_has "is above kernel.perf_event_max_sample_rate"
}

@test "--period and --frequency exclude each other" {
  run -2 --separate-stderr gp-record --period 1000000 -F 99 -d 1 -o "$OUT/x.gpa"
  stderr_has "excludes"
  [ ! -e "$OUT/x.gpa" ]
}

@test "without privileges, system-wide recording fails with a paranoid hint" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody"
  [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ] || skip "perf_event_paranoid < 1 allows it"
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    timeout 20 "$GP_BUILD_DIR/bin/gp-record" -d 1 -o /dev/null
  stderr_has "gp-record: error: cannot open perf event 'cpu-clock' on cpu 0: Permission denied"
  stderr_has "kernel.perf_event_paranoid"
}

@test "without privileges, --sampler bpf says what is missing" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody"
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    timeout 20 "$GP_BUILD_DIR/bin/gp-record" --sampler bpf -d 1 -o /dev/null
  stderr_has "gp-record: error: cannot load the BPF sampler: Operation not permitted"
  stderr_has "gp-record: hint: run as root (or with CAP_BPF and CAP_PERFMON)"
}

@test "an unwritable output file fails before sampling" {
  run -1 --separate-stderr gp-record -d 1 -o /nonexistent/dir/x.gpa --sampler perf -p $$
  stderr_has "gp-record: error:"
  stderr_has "/nonexistent/dir/x.gpa"
}

# --- recordings (root, BPF) ---------------------------------------------------------------

@test "a known call chain is recorded as main;a;b;spin" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 &
  WORKLOADS+=($!)
  record 2 -F 499
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^chain;.*;main;a;b;spin [0-9]+$'
}

# Sets delivered (samples in the archive, from the recorder's summary) and counted (samples the
# BPF program counted, from -v's session counters) from a recording's $output.
delivered_and_counted() {
  delivered=$(grep -oE 'recorded [0-9]+ samples' <<<"$output" | awk '{ print $2 }')
  counted=$(grep -oE ' samples\.kernel=[0-9]+' <<<"$output" | cut -d= -f2)
}

@test "short flush intervals neither lose nor double-count samples" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 &
  local pid=$!
  WORKLOADS+=("$pid")
  # 40 drains with stacks kept in the kernel's maps across them.
  run -0 record 2 -F 999 --flush-interval 0.05 -p "$pid" -v
  local delivered counted
  delivered_and_counted
  [ "$delivered" -gt 200 ]
  assert_equal "$delivered" "$counted"
  # The archive holds them all, less any sample whose stack walks both failed (no frames).
  run -0 fold "$OUT/rec.gpa"
  local folded
  folded=$(awk '{ s += $NF } END { print s }' <<<"$output")
  [ "$folded" -le "$counted" ] && [ "$folded" -ge $((counted * 99 / 100)) ]
}

@test "many processes at once, each its own sample key, lose no sample" {
  # bats test_tags=root,bpf
  require_root_bpf
  # 100 busy processes per CPU (at most 512), whose keys crowd each CPU's tally.
  local pids=() i n=$((100 * $(nproc)))
  ((n <= 512)) || n=512
  # At nice 19: this shell starts them one by one, and at nice 0 those already started starved
  # it (the loop took 13 s on 2 CPUs, longer than the first ones then lived). They end with
  # the test.
  for ((i = 0; i < n; i++)); do nice -n 19 "$FIX/recurse" $((i % 7 + 1)) 60 & pids+=($!); done
  WORKLOADS=("${pids[@]}")
  # Frame pointers: the unwind tables of the recorder's start (every process's) would be work
  # of its own on the busy CPUs, and this test counts the samples of its workload.
  # Only the workload's processes (-p): other load on the machine cannot crowd them out.
  # 4 s: at nice 19 they get little CPU beside other load (about a third of the CPUs at load 4),
  # and the tally must see over 1000 samples.
  run -0 record 4 -F 999 --flush-interval 0.1 -v --unwind fp -p "$(IFS=,; echo "${pids[*]}")"
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  local delivered counted
  delivered_and_counted
  [ "$delivered" -gt 1000 ]
  assert_equal "$delivered" "$counted"
  # Most samples are of the busy processes, each its own thread and so its own key.
  run -0 fold "$OUT/rec.gpa"
  local busy
  busy=$(awk '$1 ~ /^recurse;/ { s += $NF } END { print s + 0 }' <<<"$output")
  [ "$busy" -ge $((delivered * 3 / 4)) ]
}

@test "more keys in an interval than a CPU's tally holds go to the shared map, and none is lost" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Thousands of 2-ms threads in 4 s, a key each; one 4-s interval at 999 Hz gives a CPU's tally
  # 1024 entries, fewer than the keys a busy CPU sees.
  "$FIX/threadwaves" 6 &
  local pid=$!
  run -0 record 4 -F 999 --flush-interval 4 -v --unwind fp -p "$pid"
  wait "$pid"
  local delivered counted
  delivered_and_counted
  assert_equal "$delivered" "$counted"
  local shared
  shared=$(grep -oE ' samples\.shared_map=[0-9]+' <<<"$output" | cut -d= -f2)
  [ "${shared:-0}" -gt 0 ] || fail "no sample went to the shared map: the test did not fill a tally"
  [ "$delivered" -gt "$shared" ]
  run -0 fold "$OUT/rec.gpa"
  local folded
  folded=$(awk '{ s += $NF } END { print s }' <<<"$output")
  # All of them, less any sample whose stack walks both failed (no frames).
  [ "$folded" -le "$delivered" ] && [ "$folded" -ge $((delivered * 99 / 100)) ]
}

@test "--period samples every N events: task-clock every 4 ms gives one sample per 4 ms of CPU, and the .col says so" {
  # bats test_tags=root,bpf
  require_root_bpf
  # The workload runs as the recorded command, so all of its CPU time is inside the recording;
  # bash's `times` gives that CPU time (its children's user and system time) exactly.
  run -0 --separate-stderr timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -e task-clock \
    --period 4000000 -v -- bash -c '"$0" 5 4; times >"$1"' "$FIX/recurse" "$OUT/times"
  stderr_has "every 4000000 task-clock events"
  one_sample_per_4ms_of_cpu
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -o "$OUT/rec.col"
  head -1 "$OUT/rec.col" | grep -q '"sampling_event": "task-clock", "sampling_mode": "period", "sampling_period": 4000000'
}

# The frames of the most sampled stack of `recurse DEPTH` recorded with --stack-walker $2 and
# frame pointers only (the kernel's walker knows nothing else).
top_recurse_stack() {
  "$FIX/recurse" "$1" 60 &
  local pid=$!
  sleep 0.2
  record 2 -F 499 -p "$pid" --stack-walker "$2" --unwind fp
  kill "$pid"
  wait "$pid" || true
  fold "$OUT/rec.gpa" | sort -t' ' -k2 -nr | head -1 | cut -d' ' -f1
}

@test "gp's stack walk gives the kernel walker's frames, across stack pages and up to 127 frames" {
  # bats test_tags=root,bpf
  require_root_bpf
  local depth gp kernel
  for depth in 60 150; do
    gp=$(top_recurse_stack "$depth" gp)
    kernel=$(top_recurse_stack "$depth" kernel)
    assert_equal "$gp" "$kernel"
    if [ "$depth" = 60 ]; then
      # The whole chain, ending at the outermost frame: 60 levels of about 32 bytes cross stack
      # pages and the walk's 1 KiB windows.
      [[ "$gp" =~ ^recurse\;__libc_start_call_main\;main(\;recurse){60}\;spin$ ]] || fail "not the whole chain: $gp"
    else
      # Cut at 127 frames from the leaf, as the kernel cuts.
      [[ "$gp" =~ ^recurse(\;recurse){126}\;spin$ ]] || fail "not the 127 innermost frames: $gp"
    fi
  done
}

@test "--stack-walker picks who walks user stacks and says so with -v" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -0 --separate-stderr record 0.5 --stack-walker gp -v
  stderr_has "user stacks: walked by gp's BPF program"
  run -0 --separate-stderr record 0.5 --stack-walker kernel -v
  stderr_has "user stacks: walked by the kernel"
}

@test "-v names the flush interval: 10 s at 99 Hz, 4 s at 999, 1 s at 4999, shorter when the sample map could fill, a given one kept" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -0 --separate-stderr record 0.3 -F 99 -v
  stderr_has "sampler at 99 Hz, flushing every 10 s"
  run -0 --separate-stderr record 0.3 -F 999 -C 0 -v
  stderr_has "flushing every 4 s"
  run -0 --separate-stderr record 0.3 -F 4999 -v
  stderr_has "flushing every 1 s"
  # One CPU at 99 Hz takes 512 samples in 5.17 s: a 512-entry map is drained before then.
  run -0 --separate-stderr record 0.3 -F 99 -C 0 --stack-storage-size 512 -v
  stderr_has "flushing every 5.17 s"
  run -0 --separate-stderr record 0.3 -F 99 --flush-interval 0.25 -v
  stderr_has "flushing every 0.25 s"
}

@test "on a terminal the progress line moves every second, between flushes too" {
  # bats test_tags=root,bpf
  require_root_bpf
  # The recorder flushes at 1 s, then every 10 s (a given interval: no early flush for a new
  # process either): only the ticks show 2 s and 3 s.
  run -0 script -qec "gp-record --color never --flush-interval 10 -d 3.5 -o '$OUT/tty.gpa'" /dev/null
  for s in 1 2 3; do
    [[ "$output" == *"gp-record: ${s}s of 3.5s, "*" samples, "*" processes"* ]] || fail "no progress at ${s}s: $output"
  done
  [ -s "$OUT/tty.gpa" ]
}

@test "a full stack map drops stacks with a warning and a counter" {
  # bats test_tags=root,bpf
  require_root_bpf
  # A new process every 20 ms: each has its own addresses (ASLR), so its own stacks; 64 entries
  # per slot are full long before the one flush at the end, even on a loaded machine.
  (for _ in $(seq 100); do "$FIX/shortlived" 20; done) &
  run -0 --separate-stderr record 2 -F 999 --stack-storage-size 64 --flush-interval 3 -v
  wait
  stderr_has "stacks lost (stack map full): raise --stack-storage-size"
  [[ "$stderr" =~ stacks\.errors=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] || fail "no stacks.errors: $stderr"
  # The samples without a stack are counted, the others folded as usual.
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^shortlived;.*;main;short_lived_work [0-9]+$'
}

@test "the perf sampler records the same chain" {
  # bats test_tags=root
  "$FIX/chain" 60 &
  WORKLOADS+=($!)
  record 2 -F 499 --sampler perf
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^chain;.*;main;a;b;spin [0-9]+$'
}

@test "rootless: --pid of your own process works with the perf sampler" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to nobody"
  [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ] || skip "perf_event_paranoid > 2 forbids it"
  local dir
  dir=$(mktemp -d /tmp/gp-record-rootless.XXXXXX)
  chmod 777 "$dir"
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$FIX/chain" 60 &
  local pid=$!
  WORKLOADS+=("$pid")
  sleep 0.2
  run -0 setpriv --reuid=nobody --regid=nogroup --clear-groups \
    timeout 30 "$GP_BUILD_DIR/bin/gp-record" -F 499 -d 2 -p "$pid" -o "$dir/rec.gpa"
  cp "$dir/rec.gpa" "$OUT/rec.gpa"
  rm -rf "$dir"
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^chain;.*;main;a;b;spin [0-9]+$'
}

@test "a process that lived 50 ms is still symbolized" {
  # bats test_tags=root,bpf
  require_root_bpf
  # As the command, so the three runs fall inside the recording however slowly it starts.
  timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -F 999 -- \
    bash -c 'for i in 1 2 3; do "$0" 50; done' "$FIX/shortlived"
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^shortlived;.*;main;short_lived_work [0-9]+$'
}

@test "exited processes are forgotten during the session, their samples stay symbolized" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Recorded as gp-record's command, so all of it falls inside the recording however slowly the
  # recorder starts on a loaded host: chain spinning, and 20 processes of 100 ms one after another.
  run -0 --separate-stderr timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -F 999 --flush-interval 0.2 \
    -v -- bash -c '"$0" 3 & for i in $(seq 20); do "$1" 100; done; wait' "$FIX/chain" "$FIX/shortlived"
  # Each short process was announced by its first sample and forgotten two drains after its
  # exit; a few may have been too quick to be sampled at all.
  [[ "$stderr" =~ processes\.forgotten=([0-9]+) ]] || fail "no processes.forgotten counter: $stderr"
  [ "${BASH_REMATCH[1]}" -ge 15 ] || fail "only ${BASH_REMATCH[1]} of 20 exited processes forgotten"
  run -0 fold "$OUT/rec.gpa" --with-pid
  local short_pids
  short_pids=$(grep -cE '^shortlived-[0-9]+;.*;main;short_lived_work [0-9]+$' <<<"$output")
  [ "$short_pids" -ge 15 ] || fail "only $short_pids short-lived processes symbolized: $output"
  assert_line --regexp "^chain-[0-9]+;.*;main;a;b;spin [0-9]+\$"
  # Whole chains: libc was mapped after the first sample (ld.so start-up), and is still known.
  # (Through a file: the whole system's folded stacks can exceed the 128 KiB of one argument.)
  printf '%s\n' "$output" >"$OUT/folded"
  run -0 bash -c "grep -E '^shortlived-[0-9]+;.*short_lived_work' \"\$0\" | grep -vE '^shortlived-[0-9]+;(_start;__libc_start_main[^;]*;|\\[truncated\\];)?__libc_start_call_main;main;short_lived_work' || true" "$OUT/folded"
  assert_output ''
}

@test "a process is read from /proc once: the samples of its exit do not announce it again" {
  # bats test_tags=root,bpf
  require_root_bpf
  # 512 MiB of 4 KiB pages, freed in do_exit: ~40 ms of samples taken in its exit here. Once its
  # exit is announced, a sample there found it unannounced and gp-record read /proc again.
  # The target stops itself before its work until gp-record samples: all its samples come from
  # one image, read once. A sleeping keeper, never on a CPU while recorded, keeps the recording
  # going after the target's exit: processes.snapshots then counts the target's reads alone.
  # No deadline ends it: on a loaded machine the target's second of CPU can take a minute.
  "$FIX/shortlived" 300 512 stop &
  local pid=$!
  sleep 1000 &
  local keeper=$!
  WORKLOADS+=("$pid" "$keeper")
  wait_state "$pid" T shortlived || fail "the target did not stop itself"
  wait_state "$keeper" S sleep || fail "the keeper is not asleep"
  # --foreground: timeout passes the SIGINT below to gp-record alone, once (its process group
  # would get it too, and a second SIGINT kills gp-record).
  timeout --foreground -s KILL 600 gp-record -d 540 -F 999 --flush-interval 0.2 -p "$pid" \
    -p "$keeper" -v -o "$OUT/rec.gpa" 2>"$OUT/rec.err" &
  local recorder=$!
  wait_for_line "$OUT/rec.err" 'sampling with' "$recorder" || fail "gp-record did not start: $(cat "$OUT/rec.err")"
  kill -CONT "$pid"
  wait_status "$pid" 0
  sleep 1  # the samples of its exit drain (every 0.2 s) while the recording goes on
  kill -INT "$recorder"
  wait_status "$recorder" 0
  local counters
  counters=$(cat "$OUT/rec.err")
  run -0 fold "$OUT/rec.gpa"
  local exiting
  exiting=$(grep -E '^shortlived;.*do_exit' <<<"$output" | awk '{ n += $NF } END { print n + 0 }')
  [ "$exiting" -ge 5 ] || fail "only $exiting samples of the exit: the test cannot tell"
  # The count is the target's alone: the keeper was never sampled, so never read.
  refute_line --regexp '^sleep;'
  [[ "$counters" =~ processes\.snapshots=1( |$) ]] || fail "snapshotted again in its exit: $counters"
}

@test "a process sampled before an exec and not after it is forgotten once it exits" {
  # bats test_tags=root,bpf
  require_root_bpf
  # As a shell's fork that execs a short command: sampled while it spins, then it execs sleep
  # (asleep: not sampled) and exits. Its exit must still be announced, or gp-record keeps it.
  # It spins 4 to 5 s: time for gp-record to start on a loaded machine.
  bash -c 'end=$((SECONDS + 5)); while [ $SECONDS -lt $end ]; do :; done; exec sleep 1' &
  local pid=$!
  # -p $$ too (this test's shell, waiting): the recording then goes on after the target's exit.
  run -0 --separate-stderr record 8 -F 19 -p "$pid" -p $$ --flush-interval 0.2 -v
  wait "$pid"
  [[ "$stderr" =~ processes\.forgotten=1( |$) ]] || fail "the exec'd process was not forgotten after its exit: $stderr"
  run -0 fold "$OUT/rec.gpa"
  # Its samples before the exec stay, in bash's code (stripped: named by its path).
  assert_output --partial '(/usr/bin/bash)'
}

@test "a JIT process that exits mid-session keeps its JS function names, also from a private /tmp" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command node
  require_command unshare
  # chain.js runs 4 s in a mount namespace of its own whose /tmp is a tmpfs: its perf map is
  # there only, and both go when it exits. gp-record flushes at 1 s (its first chunk), then
  # every 2 s (--flush-interval): the flush after the exit copies what the map gained through
  # the /tmp pinned while node lived, and node is forgotten two flushes after its exit is read
  # (the 10 s leave one flush to spare; 4 s of node leave a recorder slow to start on a loaded
  # machine time to see it run).
  # The script is copied into the new /tmp from stdin (opened before the mount): the source tree
  # itself may be under /tmp, hidden by the mount. From $OUT: node 20 with --perf-basic-prof
  # also writes isolate-*-v8.log into its working directory.
  (cd "$OUT" && exec unshare -m --propagation private sh -c 'mount -t tmpfs gp-test-tmp /tmp &&
    cat >/tmp/chain.js && exec node --perf-basic-prof --no-turbo-inlining /tmp/chain.js 4' \
    <"$GP_SOURCE_DIR/tests/fixtures/runtime/node/chain.js" >"$OUT/node.out" 2>&1) &
  local node=$!
  # -p $$ too (this test's shell, waiting): the recording then goes on after node's exit.
  run -0 --separate-stderr record 10 -F 999 --flush-interval 2 -p "$node" -p $$ -v
  wait "$node" || fail "node in its namespace failed: $(cat "$OUT/node.out")"
  [ ! -e "/tmp/perf-$node.map" ] || fail "the perf map was visible outside node's namespace"
  [[ "$stderr" =~ processes\.forgotten=1( |$) ]] || fail "node was not forgotten after its exit: $stderr"
  run -0 bash -c 'gp-symbolize "$0" 2>/dev/null | gp-fold -f folded' "$OUT/rec.gpa"
  assert_output --regexp 'JS:[*^~]?work [^;]*chain\.js:[0-9]+:[0-9]+;JS:[*^~]?spin [^;]*chain\.js'
}

@test "--pid keeps only that process" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Both live until the recording is done, however long it takes to start; then ended.
  "$FIX/chain" 60 &
  local pid=$!
  "$FIX/shortlived" 60000 &
  local other=$!
  sleep 0.2
  record 2 -F 499 -p "$pid"
  kill "$pid" "$other"
  wait "$pid" "$other" || true
  run -0 fold "$OUT/rec.gpa" --with-pid
  assert_line --regexp "^chain-$pid;.*;main;a;b;spin [0-9]+\$"
  refute_line --regexp "^shortlived"
  run -0 bash -c "grep -v '^chain-$pid;' <<<\"\$0\" || true" "$output"
  assert_output ''
}

@test "-p: the recording ends once the process has exited, as perf record -p does" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 4 &
  local pid=$!
  local began=$SECONDS
  run -0 --separate-stderr record 60 -F 499 -p "$pid"
  wait "$pid"
  # Well before the 60 s asked for: the 4-s process and gp-record's start-up.
  [ $((SECONDS - began)) -lt 30 ] || fail "gp-record ran $((SECONDS - began)) s after its target exited"
  assert_equal "$(grep -c 'every process and thread given with -p/-t has exited' <<<"$stderr")" 1
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "-t: the recording ends once the thread has exited, while its process lives on" {
  # bats test_tags=root,bpf
  require_root_bpf
  python3 -c 'import threading, time
t = threading.Thread(target=lambda: time.sleep(3)); t.start()
print(t.native_id, flush=True); t.join(); time.sleep(120)' >"$OUT/tid" &
  local pid=$!
  for _ in $(seq 50); do [ -s "$OUT/tid" ] && break; sleep 0.1; done
  local began=$SECONDS
  run -0 --separate-stderr record 60 -F 499 -t "$(cat "$OUT/tid")"
  local took=$((SECONDS - began))
  kill -0 "$pid" || fail "the process did not live on"
  kill "$pid"
  [ "$took" -lt 30 ] || fail "gp-record ran $took s after its target thread exited"
  assert_equal "$(grep -c 'every process and thread given with -p/-t has exited' <<<"$stderr")" 1
}

@test "-p with -c goes on after the process has exited (its controller decides)" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 1 &
  local pid=$!
  mkdir "$OUT/sessions"
  # Not under timeout(1): it passes a signal on twice (to the child and to its group), and a
  # second SIGINT makes the recorder die by it.
  gp-record -c -d 2 -F 499 -p "$pid" --output-dir "$OUT/sessions" 2>"$OUT/err" &
  local rec=$!
  watchdog "$rec"
  wait "$pid"
  sleep 5
  kill -0 "$rec" || fail "gp-record -c ended with its target: $(cat "$OUT/err")"
  kill -INT "$rec"
  wait "$rec"
  if grep -q 'has exited: recording ended' "$OUT/err"; then fail "$(cat "$OUT/err")"; fi
}

@test "--cpu samples only the given CPU" {
  # bats test_tags=root,bpf
  require_root_bpf
  [ "$(nproc)" -ge 2 ] || skip "needs two CPUs"
  # Long enough for both recordings, each of which may take seconds to start on a loaded
  # machine (a 5-s chain had exited before the second one started); ended once they are done.
  taskset -c 1 "$FIX/chain" 60 &
  local pid=$!
  sleep 0.2
  record 1.5 -F 499 -C 0 -p "$pid"
  cp "$OUT/rec.gpa" "$OUT/cpu0.gpa"
  record 1.5 -F 499 -C 1 -p "$pid"
  kill "$pid"
  wait "$pid" || true
  # CPU 0 saw no sample of the pinned process (gp-fold may refuse an archive without samples).
  run fold "$OUT/cpu0.gpa"
  refute_output --partial ';spin '
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "--user-only records no kernel frames" {
  # bats test_tags=root,bpf
  require_root_bpf
  sh -c 'while :; do cat /proc/self/status >/dev/null; done' 3>&- &
  WORKLOADS+=($!)
  record 2 -F 499 -U
  run -0 fold "$OUT/rec.gpa"
  assert_output --regexp '[0-9]'
  refute_output --partial '_[k]'
}

@test "--kernel-only records only kernel frames of samples taken in the kernel" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 3>&- &
  WORKLOADS+=($!)
  sh -c 'while :; do cat /proc/self/status >/dev/null; done' 3>&- &
  WORKLOADS+=($!)
  record 2 -F 499 -K
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '_\[k\] [0-9]+$'
  refute_output --partial ';spin'
  refute_output --partial ';main;'
}

@test "the idle task is left out unless --include-idle" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Two recorders at once see the same idle time. The one without -I counts the idle samples it
  # drops (samples.filtered: no other filter is set); the one with -I must keep them. Idle time
  # alone is no evidence: on this VM an idle CPU other than cpu 0 takes no cpu-clock sample at
  # all (perf record -a shows the same), so while cpu 0 is busy there is no idle sample to keep.
  # The recorder with -I starts first and ends last, so the idle time the other one sees is in
  # its window too (each spends a moment of CPU loading its program).
  timeout -s KILL 30 gp-record -d 3 -F 499 -I --unwind fp -o "$OUT/rec.gpa" 2>/dev/null &
  local with_idle=$!
  sleep 0.8
  timeout -s KILL 30 gp-record -d 1.2 -F 499 -v --unwind fp -o "$OUT/plain.gpa" 2>"$OUT/plain.err"
  wait "$with_idle"
  run -0 fold "$OUT/plain.gpa" --include-idle --with-pid
  # grep, not refute_line: on a quiet machine every sample may be an idle one, and the output
  # then has no line at all.
  ! grep -q '^swapper-0;' <<<"$output" || fail "idle samples kept without --include-idle: $output"
  [[ "$(cat "$OUT/plain.err")" =~ samples\.filtered=([0-9]+) ]] || fail "no samples.filtered counter"
  local dropped=${BASH_REMATCH[1]}
  run -0 fold "$OUT/rec.gpa" --include-idle --with-pid
  if [ "$dropped" -lt 20 ]; then
    ! grep -q '^swapper-0;' <<<"$output" || return 0
    skip "no idle samples to keep: the recorder without -I dropped only $dropped"
  fi
  assert_line --regexp '^swapper-0;.*_\[k\] [0-9]+$'
}

@test "a library loaded with dlopen after the first sample is symbolized" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/dlopen" "$FIX/libdlwork.so" 0.5 3 &
  local pid=$!
  record 3 -F 499 --flush-interval 0.2
  wait "$pid"
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^dlopen;.*;main;dl_spin;dl_inner [0-9]+$'
}

@test "a process that execs another program is symbolized before and after the exec" {
  # bats test_tags=root,bpf
  require_root_bpf
  # Started by gp-record itself: a pid started beside it could exec before a recorder slow to
  # start on a loaded machine is sampling (seen once in CI: only the image after the exec).
  timeout -s KILL 60 gp-record -F 499 --flush-interval 0.2 -o "$OUT/rec.gpa" -- \
    "$FIX/execchain" 1.2 "$FIX/chain" 1.2
  run -0 fold "$OUT/rec.gpa"
  # Both images under the one pid, each named by the comm it was sampled under.
  assert_line --regexp '^execchain;.*main;before_exec [0-9]+$'
  assert_line --regexp '^chain;.*main;a;b;spin [0-9]+$'
  refute_line --regexp '^chain;.*before_exec [0-9]+$'
  # Samples taken before the exec but drained after it still resolve in the old image (unmapped,
  # every frame would be [unknown]; one frame-less libc leaf during start-up may lose its caller).
  refute_line --regexp '^chain(;\[unknown\])+ [0-9]+$'
}

@test "vDSO frames are named as perf names them, also off-host from an exported store" {
  # bats test_tags=root,bpf
  require_root_bpf
  # It outlives the recording, however long gp-record takes to start on a loaded host.
  "$FIX/vdsoloop" 60 &
  local pid=$!
  WORKLOADS+=("$pid")
  record 1.5 -F 499 -p "$pid"
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^vdsoloop;.*main;.*clock_gettime.*;__vdso_clock_gettime [0-9]+$'
  # --stores-only ignores this machine's vDSO: the exported store alone must name the frames.
  gp-symbolize -q --export-symbols "$OUT/store" "$OUT/rec.gpa"
  run -0 bash -c "gp-symbolize -q --stores-only '$OUT/rec.gpa' | gp-fold -f folded"
  refute_output --partial '__vdso_clock_gettime'
  run -0 bash -c "gp-symbolize -q --stores-only --debug-dir '$OUT/store' '$OUT/rec.gpa' | gp-fold -f folded"
  assert_output --partial ';__vdso_clock_gettime '
}

@test "continuous mode writes one valid session file per interval" {
  # bats test_tags=root,bpf
  require_root_bpf
  gp-record -c -d 1 -F 99 --output-dir "$OUT/sessions" &
  local rec=$!
  watchdog "$rec"
  # From its first session file: a loaded host may take seconds to start the sampler.
  wait_for 30 compgen -G "$OUT/sessions/gp-*.gpa"
  sleep 3.2
  kill -INT "$rec"
  wait_status "$rec" 0
  local files=("$OUT"/sessions/gp-*.gpa)
  [ "${#files[@]}" -ge 3 ] || fail "expected at least 3 session files, got ${#files[@]}: ${files[*]}"
  [ "${#files[@]}" -le 5 ] || fail "expected at most 5 session files, got ${#files[@]}"
  for f in "${files[@]}"; do
    run -0 gp-fold -f folded "$f"
  done
  [ -L "$OUT/sessions/last_profile.gpa" ]
}

@test "--rotating-output keeps only the newest session file" {
  # bats test_tags=root,bpf
  require_root_bpf
  gp-record -c -d 0.7 -F 99 --output-dir "$OUT/rot" --rotating-output &
  local rec=$!
  watchdog "$rec"
  sleep 2.5
  kill -TERM "$rec"
  wait_status "$rec" 0
  local files=("$OUT"/rot/gp-*.gpa)
  [ "${#files[@]}" -eq 1 ] || fail "expected one file, got: ${files[*]}"
  run -0 gp-fold -f folded "$OUT/rot/last_profile.gpa"
}

@test "with -c, SIGUSR2 ends the session at once and the same recorder goes on into the next" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 8 &
  local spin=$! i
  gp-record -c -d 600 -F 499 --output-dir "$OUT/sw" &
  local rec=$!
  watchdog "$rec"
  # As soon as gp-record catches SIGUSR2 (SigCgt bit 12), most likely while it still loads its
  # BPF program: a switch asked for before the first session began ends that session.
  for i in $(seq 100); do
    (( 0x$(awk '/^SigCgt:/ { print $2 }' "/proc/$rec/status") & 0x800 )) && break
    sleep 0.05
  done
  kill -USR2 "$rec"
  # The first session's file is closed (last_profile.gpa names it) long before -d's 600 s, and
  # the recorder runs on into the next session.
  for i in $(seq 50); do [ -L "$OUT/sw/last_profile.gpa" ] && break; sleep 0.2; done
  [ -L "$OUT/sw/last_profile.gpa" ] || fail "no session closed 10 s after SIGUSR2"
  kill -0 "$rec" || fail "gp-record ended at SIGUSR2"
  local first
  first=$(readlink "$OUT/sw/last_profile.gpa")
  sleep 1.5
  kill -INT "$rec"
  wait_status "$rec" 0
  kill "$spin" 2>/dev/null || true
  local files=("$OUT"/sw/gp-*.gpa)
  [ "${#files[@]}" -eq 2 ] || fail "expected two session files, got: ${files[*]}"
  [ "$(readlink "$OUT/sw/last_profile.gpa")" != "$first" ] || fail "the second session was not closed"
  # The first session, ended as it began, is a complete archive (it may hold no sample); the
  # second has the chain's stacks.
  run -0 gp-fold -f folded "$OUT/sw/$first"
  run -0 fold "$OUT/sw/last_profile.gpa"
  assert_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "SIGINT ends the recording normally with a complete archive" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 &
  WORKLOADS+=($!)
  gp-record -v -F 499 -o "$OUT/int.gpa" 2>"$OUT/rec.err" &
  local rec=$!
  watchdog "$rec"
  wait_for 30 grep -q 'sampling with the' "$OUT/rec.err"
  sleep 1.5
  kill -INT "$rec"
  wait_status "$rec" 0
  run -0 fold "$OUT/int.gpa"
  assert_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "SIGKILL mid-run leaves a readable prefix (gp-fold exits 3)" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 &
  WORKLOADS+=($!)
  gp-record -v -F 499 --flush-interval 0.2 -o "$OUT/killed.gpa" 2>"$OUT/rec.err" &
  local rec=$!
  watchdog "$rec"
  wait_for 30 grep -q 'sampling with the' "$OUT/rec.err"
  sleep 1.5
  kill -KILL "$rec"
  wait "$rec" || true
  run -3 --separate-stderr gp-fold -f folded "$OUT/killed.gpa"
  stderr_has "gp-fold: warning:"
  # The chunks written before the kill hold the chain's samples, and they symbolize.
  run -0 bash -c 'gp-symbolize "$0" 2>/dev/null | gp-fold -f folded 2>/dev/null; [ "${PIPESTATUS[*]}" = "3 3" ]' "$OUT/killed.gpa"
  assert_line --regexp '^chain;.*main;a;b;spin [0-9]+$'
}

@test "a full disk fails loudly" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -1 --separate-stderr timeout -s KILL 30 gp-record -d 1 -F 99 -o /dev/full
  stderr_has "gp-record: error: cannot write '/dev/full': No space left on device"
}

@test "stdout archives stream through a pipe" {
  # bats test_tags=root,bpf
  require_root_bpf
  "$FIX/chain" 60 &
  WORKLOADS+=($!)
  run -0 bash -c "timeout -s KILL 30 gp-record -d 1.5 -F 499 --no-compress | gp-symbolize | gp-fold -f folded"
  assert_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "the archive keeps the kernel symbols that cover sampled kernel addresses" {
  # bats test_tags=root,bpf
  require_root_bpf
  sh -c 'while :; do cat /proc/self/status >/dev/null; done' 3>&- &
  WORKLOADS+=($!)
  record 2 -F 499 -K
  run -0 fold "$OUT/rec.gpa"
  assert_line --regexp '^cat;.*_\[k\] [0-9]+$'
  refute_output --partial '[unknown]'
}

@test "-e PMU/config=N/ samples that PMU's event: software/config=1/ (task-clock) every 4 ms of CPU" {
  # bats test_tags=root,bpf
  require_root_bpf
  # perf's PMU syntax, with the PMU's type from /sys/bus/event_source/devices/software/type.
  run -0 --separate-stderr timeout -s KILL 60 gp-record -o "$OUT/rec.gpa" -e software/config=1/ \
    --period 4000000 -- bash -c '"$0" 5 2; times >"$1"' "$FIX/recurse" "$OUT/times"
  one_sample_per_4ms_of_cpu
}

@test "-e refuses an event it cannot read: unknown PMU, unknown term, malformed raw event, unknown modifier" {
  for event in nopmu/config=1/ software/nosuchterm=1/ rxyz cpu-clock:q; do
    run -2 --separate-stderr gp-record -e "$event" -o "$OUT/rec.gpa" -- true
    [[ "$stderr" == "gp-record: error: --event: '$event': "* ]] || fail "$event: $stderr"
  done
}

@test "-e rHEX on a host whose CPU has no PMU fails with what to use instead" {
  # bats test_tags=root,bpf
  require_root_bpf
  [ ! -e /sys/bus/event_source/devices/cpu ] || skip "this host has a CPU PMU: r01b7 may open"
  run -1 --separate-stderr timeout -s KILL 30 gp-record -e r01b7 -d 1 -o "$OUT/rec.gpa"
  stderr_has "cannot open perf event 'r01b7'"
  stderr_has "use --event cpu-clock"
  # Recording a command (followed by its cgroup, which only the BPF sampler does) says the same,
  # not that the perf sampler cannot follow a cgroup.
  run -1 --separate-stderr timeout -s KILL 30 gp-record -e r01b7 -o "$OUT/rec.gpa" -- true
  stderr_has "gp-record: error: cannot open perf event 'r01b7'"
  stderr_has "use --event cpu-clock"
  [[ "$stderr" != *"--cgroup"* ]] || fail "the perf sampler's cgroup error: $stderr"
}
