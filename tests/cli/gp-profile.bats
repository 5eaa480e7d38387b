#!/usr/bin/env bats
# gp-profile: the gProfiler-compatible driver, run for real (gp-record with BPF, gp-merge,
# gp-symbolize, gp-fold, gp-flame, gp-upload; gp-runtime when it is built) against the
# loopback Performance Studio of tests/servers/studio.py. Recording tests need root with BPF
# and BTF (tagged root,bpf); one-shot runs are under `timeout`, continuous ones are killed by
# teardown if a test fails. Every wait is generous: the CI machine is small and shared.
# bats file_tags=gp-profile

load helpers
bats_require_minimum_version 1.5.0

SERVERS="$GP_SOURCE_DIR/tests/servers"
TOKEN="s3cret-token-XYZ"

setup() {
  profile_test_setup
}

teardown() {
  profile_test_kill
}

# A CPU-bound process to profile (its comm is 'sh'); its pid is $busy.
start_busy() {
  sh -c 'while :; do :; done' &
  busy=$!
  PIDS+=("$busy")
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Profile POSTs the studio answered with 200 (stored files).
stored() { find store -name '*.gz' 2>/dev/null | wc -l; }

at_least() { [ "$("$2")" -ge "$1" ]; }
children_running() { pgrep -f "$BATS_TEST_TMPDIR/tmp/" >/dev/null; }
no_children() { ! pgrep -f "$BATS_TEST_TMPDIR/tmp/" >/dev/null; }
sessions_logged() { grep -c 'session [0-9]*: ' "$1" 2>/dev/null || echo 0; }

# Checks that a .col file has a JSON header and at least one stack line with a count.
check_col() {
  python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().rstrip("\n").split("\n")
assert lines[0].startswith("# "), lines[0][:80]
header = json.loads(lines[0][2:])
assert "metadata" in header, header.keys()
assert len(lines) > 1, "no stacks"
for l in lines[1:]:
    stack, count = l.rsplit(" ", 1)
    assert int(count) > 0 and stack, l
PY
}

# ---------------------------------------------------------------------------------------------
# Usage errors (no root needed): gProfiler's rules and messages, exit 2.

@test "no output at all is a usage error with gProfiler's message" {
  run -2 --separate-stderr gp-profile -d 1
  assert_equal "${lines[*]}" ""
  [[ "$stderr" == *"gp-profile: error: must pass at least one output method (--upload-results / --output-dir)"* ]] || fail "$stderr"
  [[ "$stderr" == *"Try 'gp-profile --help'"* ]] || fail "$stderr"
}

@test "--upload-results needs --token, then --service-name" {
  run -2 --separate-stderr gp-profile -u -o out
  [[ "$stderr" == *"must provide --token when --upload-results is passed"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile -cu --token "$TOKEN"
  [[ "$stderr" == *"must provide --service-name when --upload-results is passed"* ]] || fail "$stderr"
  [[ "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  [ ! -e out ]
}

# A program built without frame pointers (main -> a -> b -> spin), profiled by one session of
# gp-profile with the remaining options; sets $output to the .col's lines.
profile_nofp() {
  cc -O2 -g -fomit-frame-pointer -fno-inline -o "$BATS_TEST_TMPDIR/chain_nofp" "$GP_SOURCE_DIR/tests/fixtures/src/chain.c"
  "$BATS_TEST_TMPDIR/chain_nofp" 6 3>&- &
  local pid=$!
  sleep 0.3
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -o out --pids "$pid" --no-flamegraph "$@"
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  run -0 cat out/last_profile.col
}

@test "--perf-mode smart (the default) and dwarf give whole stacks without frame pointers, above 100 Hz too" {
  # bats test_tags=root,bpf
  require_root_bpf
  profile_nofp -f 199
  assert_line --regexp ';_start;__libc_start_main[^;]*;__libc_start_call_main;main;a;b;spin [0-9]+$'
  rm -rf out
  profile_nofp -f 199 --perf-mode dwarf
  assert_line --regexp ';_start;__libc_start_main[^;]*;__libc_start_call_main;main;a;b;spin [0-9]+$'
}

@test "--perf-event and --perf-event-period: gp-record samples that event every N, without runtime profilers" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  # The shell runs only while gp-record samples: from its perf events' opening to its exit. Its
  # CPU time in that window is what the samples must add up to; a loaded host's slow start-up
  # of gp-profile and gp-record stays outside.
  kill -STOP "$busy"
  gp-profile -d 3 -o out --pids "$busy" --no-flamegraph --perf-event task-clock \
    --perf-event-period 2000000 -vv 2>stderr.txt &
  local profiler=$! recorder="" i before after samples expected
  for ((i = 0; i < 2400; i++)); do
    recorder=$(pgrep -P "$profiler" -x gp-record) &&
      find "/proc/$recorder/fd" -lname '*perf_event*' 2>/dev/null | grep -q . && break
    recorder=""
    sleep 0.05
  done
  [ -n "$recorder" ] || fail "gp-record never opened its perf events: $(cat stderr.txt)"
  before=$(awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$busy/stat")
  kill -CONT "$busy"
  while kill -0 "$recorder" 2>/dev/null; do sleep 0.02; done
  kill -STOP "$busy"
  after=$(awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$busy/stat")
  kill -CONT "$busy"
  wait "$profiler" || fail "gp-profile failed: $(cat stderr.txt)"
  local stderr
  stderr=$(cat stderr.txt)
  [[ "$stderr" == *"3 s sessions every 2000000 task-clock events"* ]] || fail "$stderr"
  [[ "$stderr" == *"gp-record --period 2000000 -e task-clock "* ]] || fail "$stderr"
  [[ "$stderr" != *"gp-runtime"* ]] || fail "a runtime profiler ran: $stderr"
  head -1 out/last_profile.col |
    grep -q '"sampling_event": "task-clock", "sampling_mode": "period", "sampling_period": 2000000' ||
    fail "$(head -c 2000 out/last_profile.col)"
  # One sample per 2 ms of the shell's CPU in that window: at most that many, and at least half.
  samples=$(awk 'NR > 1 && /;sh;/ { s += $NF } END { print s + 0 }' out/last_profile.col)
  expected=$(((after - before) / 2))
  [ "$samples" -ge 100 ] && [ "$samples" -le $((expected + 5)) ] && [ "$samples" -ge $((expected / 2)) ] ||
    fail "$samples samples for $((after - before)) ms of CPU"
}

@test "--external-metadata: static part in the header, the pid's entry in its app metadata; a stale file stops the start" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  printf '{"static": {"team": "infra"}, "application": {"%s": {"tier": "gold"}}}' "$busy" >ext.json
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$busy" \
    --no-flamegraph --external-metadata ext.json
  local header
  header=$(head -1 out/last_profile.col)
  [[ "$header" == *'"external_metadata": {"team": "infra"}'* ]] || fail "$header"
  [[ "$header" == *'"tier": "gold"'* ]] || fail "$header"
  grep -qE '^[1-9][0-9]*;[^;]*;sh;' out/last_profile.col || fail "$(head -c 1500 out/last_profile.col)"
  touch -d '10 minutes ago' ext.json
  run -1 --separate-stderr timeout -s KILL 60 gp-profile -d 2 -o out2 --pids "$busy" --external-metadata ext.json
  [[ "$stderr" == *"gp-profile: error: external metadata file 'ext.json' was last modified "*" s ago, more than 5 minutes"* ]] ||
    fail "$stderr"
  run -2 --separate-stderr gp-profile upload-file --file-path out/last_profile.col --token t \
    --service-name s --external-metadata ext.json
  [[ "$stderr" == *"--external-metadata cannot be used with upload-file"* ]] || fail "$stderr"
}

@test "--disable-metadata-collection and --disable-container-names: the header as gProfiler's" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$busy" \
    --no-flamegraph --disable-metadata-collection --disable-container-names
  run -0 python3 -c '
import json, sys
h = json.loads(open(sys.argv[1]).readline()[2:])
print(sorted(h["metadata"]))
print(h["containers"], h["container_names_enabled"], h["metrics"] is not None)' out/last_profile.col
  assert_line "['hostname', 'profiling_mode', 'sampling_event', 'sampling_frequency', 'sampling_mode']"
  assert_line "[] False True"
  grep -qE '^[0-9]+;;sh;' out/last_profile.col || fail "$(head -c 800 out/last_profile.col)"
}

@test "--skip-system-profilers-above: on a host with more processes, runtime stacks only" {
  # bats test_tags=root,bpf
  require_root_bpf
  /usr/bin/python3 -c 'while True: pass' &
  local py=$!
  PIDS+=("$py")
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 49 -o out --pids "$py" \
    --no-flamegraph --python-mode gp --skip-system-profilers-above 1 -vv
  [[ "$stderr" == *"session 1: "*" processes, more than --skip-system-profilers-above 1: no system profiler this session"* ]] ||
    fail "$stderr"
  [[ "$stderr" != *"gp-record -F"* ]] || fail "gp-record ran: $stderr"
  grep -q '<module> (<string>:1)_\[p\]' out/last_profile.col || fail "$(head -c 1500 out/last_profile.col)"
  # Below the limit the system profiler runs.
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 49 -o out2 --pids "$py" \
    --no-flamegraph --python-mode gp --skip-system-profilers-above 100000 -vv
  [[ "$stderr" == *"gp-record -F 49 "* ]] || fail "gp-record did not run: $stderr"
  [[ "$stderr" != *"more than --skip-system-profilers-above"* ]] || fail "$stderr"
}

@test "--perf-mode fp walks frame pointers only" {
  # bats test_tags=root,bpf
  require_root_bpf
  profile_nofp -f 99 --perf-mode fp
  refute_line --regexp ';main;a;b;spin [0-9]+$'
}

@test "bad values and impossible combinations are usage errors" {
  run -2 --separate-stderr gp-profile --perf-mode lbr -o out
  [[ "$stderr" == *"gp-profile: error: "*"lbr"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --java-mode bogus -o out
  [[ "$stderr" == *"bogus"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --no-perf --nodejs-mode perf -o out
  [[ "$stderr" == *"--nodejs-mode perf or attach-maps requires --perf-mode 'fp' or 'smart'"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile -d 0 -o out
  [[ "$stderr" == *"argument -d/--profiling-duration: invalid positive integer value: 0"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile upload-file --token "$TOKEN" --service-name web
  [[ "$stderr" == *"--file-path"* ]] || fail "$stderr"
}

@test "every profiler disabled is refused like gProfiler's 'All profilers are disabled!'" {
  run -2 --separate-stderr gp-profile --perf-mode none --no-java --no-python --no-ruby -o out
  [[ "$stderr" == *"all profilers are disabled!"* ]] || fail "$stderr"
}

@test "--rootless needs --pids and cannot be used as root" {
  run -2 --separate-stderr gp-profile --rootless -o out
  [[ "$stderr" == *"--rootless requires --pids"* ]] || fail "$stderr"
  if [ "$(id -u)" -eq 0 ]; then
    run -2 --separate-stderr gp-profile --rootless --pids 1 -o out
    [[ "$stderr" == *"--rootless cannot be used when running as root"* ]] || fail "$stderr"
  fi
}

@test "without root and without --rootless it stops at once with exit 1" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
  require_command setpriv
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" -d 1 -o "$BATS_TEST_TMPDIR/out"
  [[ "$stderr" == *"gp-profile: error: Must run gp-profile as root"* ]] || fail "$stderr"
}

@test "--pids with no live process stops at once with exit 1, as gProfiler does" {
  [ "$(id -u)" -eq 0 ] || skip "needs root (the root check comes first)"
  sh -c 'exit 0' &
  dead=$!
  wait "$dead"
  run -1 --separate-stderr gp-profile -d 1 -o out --pids "$dead"
  [[ "$stderr" == *"gp-profile: error: none of the processes given with --pids is running"* ]] || fail "$stderr"
}

# ---------------------------------------------------------------------------------------------
# gProfiler's whole command line (gprofiler/main.py parse_cmd_args and each profiler's
# arguments), its GPROFILER_<OPTION> variables and --config files.

# Every option of gProfiler's parser with a valid value, one invocation per line. Options that
# need a partner option carry it on the same line.
GPROFILER_OPTIONS=$(cat <<'LIST'
--pid-file @/pidfile
-f 11
--profiling-frequency 50
-d 5
--profiling-duration 5
--min-duration 5
--insert-dso-name
--flamegraph
--no-flamegraph
--mode cpu
--mode allocation --alloc-interval 1mb
--rotating-output
--pids 1
--pids 1,2 --pids 3
--max-processes-runtime-profiler 3
--skip-system-profilers-above 100
--rootless --pids 1
--perf-mode fp
--perf-mode smart
--perf-mode disabled
--no-perf
--perf-dwarf-stack-size 4096
--perf-no-memory-restart
--perf-use-cgroups
--perf-max-cgroups 10
--perf-max-docker-containers 2
--java-mode ap
--no-java
--java-no-version-check
--java-async-profiler-mode itimer
--java-async-profiler-safemode 63
--java-async-profiler-features probesp,comptask
--java-async-profiler-args interval=1ms
--java-safemode
--java-safemode hserr
--java-jattach-timeout 10
--java-async-profiler-mcache 255
--java-collect-spark-app-name-as-appid
--java-async-profiler-no-report-meminfo
--java-collect-jvm-flags all
--java-full-hserr
--java-include-method-modifiers
--java-line-numbers line-of-function
--java-collect-thread-names
--python-mode pyspy
--python-mode py-spy
--python-mode pyperf
--no-python
--no-python-versions
--pyperf-user-stacks-pages 0
--python-pyperf-verbose
--python-pyspy-process 1
--python-skip-pyperf-profiler-above 5
--ruby-mode rbspy
--no-ruby
--php-mode phpspy
--no-php
--php-proc-filter php
--dotnet-mode dotnet-trace
--no-dotnet
--nodejs-mode attach-maps
--nodejs-mode perf
--no-nodejs
--perf-event cpu-clock
--perf-event cycles --perf-event-period 10000
--perf-event cycles --hw-events-file @/events.json
--spark-sample-period 60
--collect-spark-metrics
--log-usage
-u --token T --service-name S
--upload-results --token T --service-name S --server-upload-timeout 30
--dont-disable-core-files
--server-host https://studio.example
--api-server https://api.example
--glogger-server https://api.example
--curlify-requests
--no-verify
-v
--verbose
--log-file @/gp.log
--log-rotate-max-size 1000
--log-rotate-backup-count 2
--dont-send-logs
--disable-container-names
-c
--continuous
--profile-api-version v1
--disable-pidns-check
--disable-metrics-collection
--disable-metadata-collection
--disable-application-identifiers
--app-id-args-filter .*jar
--disable-application-metadata
--controller-pid 1
--external-metadata @/meta.json
--databricks-job-name-as-service-name
--profile-spawned-processes
--diagnostics
--heartbeat-file @/heartbeat
-u --token T --service-name S --enable-heartbeat-server --heartbeat-interval 10
--enable-hw-metrics-collection --perfspect-path /usr/bin/perfspect --perfspect-duration 30
LIST
)

@test "every option of gProfiler's parser is accepted with a valid value (none exits 2)" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
  require_command setpriv
  local line args
  while IFS= read -r line; do
    read -ra args <<<"${line//@/$BATS_TEST_TMPDIR}"
    # As an unprivileged user an accepted command line stops at a precondition (exit 1): the
    # root check, or for --rootless a file it may not write.
    run --separate-stderr timeout -s KILL 60 setpriv --reuid=nobody --regid=nogroup \
      --clear-groups "$GP_BUILD_DIR/bin/gp-profile" -d 1 -o "$BATS_TEST_TMPDIR/out" "${args[@]}"
    [ "$status" -eq 1 ] || fail "'$line': status $status: $stderr"
    [[ "$stderr" != *"--help"* ]] || fail "'$line': $stderr"
  done <<<"$GPROFILER_OPTIONS"
  run -0 --separate-stderr gp-profile --version
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" upload-file --file-path /etc/hostname --token T \
    --service-name S --server-host http://127.0.0.1:1
  run -0 --separate-stderr gp-profile extract-resources --resources-dest "$BATS_TEST_TMPDIR/res"
  [[ "$stderr" == *"warning: extract-resources"* ]] || fail "$stderr"
}

@test "options that have no effect in gp-profile are named once at start, with the reason" {
  [ "$(id -u)" -eq 0 ] || skip "needs root to switch to an unprivileged user"
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" -o out --perf-use-cgroups --java-async-profiler-mcache 8 \
    --min-duration 3 --java-async-profiler-mcache 9 --mode allocation --no-python-versions \
    --profile-spawned-processes
  [ "$(grep -c 'warning' <<<"$stderr")" -eq 1 ] || fail "$stderr"
  warning=$(grep 'warning' <<<"$stderr")
  # gProfiler's async-profiler build's options: what is missing here, and where to get it.
  if command -v asprof >/dev/null || command -v profiler.sh >/dev/null; then
    [[ "$warning" == "gp-profile: warning: --java-async-profiler-mcache has no effect: only gProfiler's build of async-profiler has this setting, not the stock asprof gp-runtime runs, nor JFR" ]] ||
      fail "$warning"
  else
    [[ "$warning" == "gp-profile: warning: --java-async-profiler-mcache has no effect: it needs async-profiler, and async-profiler is not installed (no asprof or profiler.sh on PATH); get it from https://github.com/async-profiler/async-profiler/releases (only gProfiler's build of it has this setting; JFR has none)" ]] ||
      fail "$warning"
  fi
  # One line each; their --help says the same.
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" -o out --java-async-profiler-no-report-meminfo \
    --java-async-profiler-safemode 8
  [ "$(grep -c 'warning' <<<"$stderr")" -eq 2 ] || fail "$stderr"
  grep -q '^gp-profile: warning: --java-async-profiler-no-report-meminfo has no effect: ' <<<"$stderr" ||
    fail "$stderr"
  grep -q '^gp-profile: warning: --java-async-profiler-safemode has no effect: ' <<<"$stderr" ||
    fail "$stderr"
  run -0 gp-profile --help
  [[ "$output" != *"not implemented"* ]] || fail "$(grep 'not implemented' <<<"$output")"
  [[ "$(grep -c "(no effect in gp-profile: needs async-profiler: an option of gProfiler's own build of it" <<<"$output")" -eq 3 ]] ||
    fail "$output"
  # Without such options there is no warning at all.
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-profile" -o out --mode cpu -f 99 --profile-api-version v1
  [[ "$stderr" != *"warning"* ]] || fail "$stderr"
}

@test "--perfspect-path naming no file ends gp-profile at start, with gProfiler's message" {
  [ "$(id -u)" -eq 0 ] || skip "needs root (gp-profile's first precondition)"
  run -1 --separate-stderr timeout -s KILL 60 gp-profile -d 1 -o "$BATS_TEST_TMPDIR/out" \
    --enable-hw-metrics-collection --perfspect-path "$BATS_TEST_TMPDIR/no-perfspect"
  [[ "$stderr" == *"error: PerfSpect tool $BATS_TEST_TMPDIR/no-perfspect does not exist!"* ]] ||
    fail "$stderr"
  [ ! -e "$BATS_TEST_TMPDIR/out/last_profile.col" ] || fail "it profiled"
}

@test "gProfiler's refusals: its messages, one line, exit 2, naming the option" {
  local cases=(
    "--mode cpu2|argument --mode: invalid choice: 'cpu2' (choose from 'cpu', 'allocation', 'none')"
    "-f abc|argument -f/--profiling-frequency: invalid positive_integer value: 'abc'"
    "--min-duration 0|argument --min-duration: invalid positive integer value: 0"
    "--java-async-profiler-safemode 64|argument --java-async-profiler-safemode: invalid integer value 64 (out of range 0-64)"
    "--java-async-profiler-features probesp,x|argument --java-async-profiler-features: invalid value 'x' (allowed values: ['probesp', 'vtable', 'comptask'])"
    "--pids 1,x|argument --pids: Integer list should be a single integer, or comma separated list of integers f.e. 13,452,2388"
    "--profile-api-version v2|argument --profile-api-version: invalid choice: 'v2' (choose from 'v1')"
    "--java-mode bogus|argument --java-mode: invalid choice: 'bogus'"
    "--pyperf-user-stacks-pages -1|argument --pyperf-user-stacks-pages: invalid non-negative integer value: -1"
    "--alloc-interval 1mb|--alloc-interval is only allowed in allocation profiling (--mode=allocation)"
    "--mode allocation -f 10|-f|--frequency is only allowed in cpu profiling (--mode=cpu)"
    "--perf-event x --perf-event-period 5 -f 10|--perf-event-period and -f/--frequency are mutually exclusive"
    "--perf-event-period 5|--perf-event-period requires --perf-event to be specified"
    "--perf-event page-faults|--perf-event 'page-faults' is not an event gp-record can sample (cpu-clock, task-clock, cycles, instructions, cache-misses, branch-misses)"
    "--perf-event task-clock --perf-event-period -3|--perf-event-period must not be negative"
    "--app-id-args-filter (x|argument --app-id-args-filter: invalid regex '(x'"
    "--hw-events-file f|--hw-events-file requires --perf-event to be specified"
    "--perf-event x --mode allocation|--perf-event is only supported in cpu profiling mode (--mode=cpu)"
    "--perf-dwarf-stack-size 65529|--perf-dwarf-stack-size maximum size is 65528"
    "--profile-spawned-processes --pids 1|--pids is not allowed when profiling spawned processes"
    "--enable-heartbeat-server|--enable-heartbeat-server requires --upload-results to be enabled"
    "--no-such-option|unknown option '--no-such-option'"
  )
  local c
  for c in "${cases[@]}"; do
    read -ra args <<<"${c%%|*}"
    run --separate-stderr gp-profile -o out "${args[@]}"
    [ "$status" -eq 2 ] || fail "'${c%%|*}': status $status: $stderr"
    [ "$(grep -c 'error' <<<"$stderr")" -eq 1 ] || fail "$stderr"
    [[ "$stderr" == *"gp-profile: error: "*"${c#*|}"* ]] || fail "'${c%%|*}': $stderr"
  done
  [ ! -e out ]
}

@test "GPROFILER_<OPTION> variables and --config: command line > environment > config file" {
  printf '# gProfiler settings\n[gprofiler]\nprofiling-duration = abc\noutput-dir: %s\n' \
    "$BATS_TEST_TMPDIR/out" >gp.ini
  # Each value is refused in turn, so the message shows which source won.
  run -2 --separate-stderr env GPROFILER_PROFILING_DURATION=xyz gp-profile --config gp.ini -d 0
  [[ "$stderr" == *"argument -d/--profiling-duration: invalid positive integer value: 0"* ]] || fail "$stderr"
  run -2 --separate-stderr env GPROFILER_PROFILING_DURATION=xyz gp-profile --config gp.ini
  [[ "$stderr" == *"invalid positive_integer value: 'xyz'"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --config gp.ini
  [[ "$stderr" == *"invalid positive_integer value: 'abc'"* ]] || fail "$stderr"
  # The token and the service from the environment satisfy -u, as in gProfiler's DaemonSet.
  run -2 --separate-stderr env GPROFILER_TOKEN=t gp-profile -u
  [[ "$stderr" == *"must provide --service-name when --upload-results is passed"* ]] || fail "$stderr"
  run -2 --separate-stderr env GPROFILER_TOKEN=t GPROFILER_SERVICE_NAME=web gp-profile -u --mode x
  [[ "$stderr" == *"invalid choice: 'x'"* ]] || fail "$stderr"
  [[ "$stderr" != *"must provide"* ]] || fail "$stderr"
}

@test "bad environment values and malformed config files: one line, exit 2, naming the option" {
  run -2 --separate-stderr env GPROFILER_CONTINUOUS=maybe gp-profile -o out
  [[ "$stderr" == "gp-profile: error: unexpected value for GPROFILER_CONTINUOUS: 'maybe'. Expecting 'true', 'false', 'yes', 'no', '1' or '0'"* ]] || fail "$stderr"
  run -2 --separate-stderr env GPROFILER_SERVER_UPLOAD_TIMEOUT=soon gp-profile -o out
  [[ "$stderr" == *"argument --server-upload-timeout: invalid positive_integer value: 'soon'"* ]] || fail "$stderr"
  printf 'output-dir = out\n= broken\n' >bad.ini
  run -2 --separate-stderr gp-profile --config bad.ini
  [[ "$stderr" == *"gp-profile: error: unexpected line 2 in bad.ini: = broken"* ]] || fail "$stderr"
  printf 'output-dir = out\nno-such-option = 1\n' >unknown.ini
  run -2 --separate-stderr gp-profile --config unknown.ini
  [[ "$stderr" == *"config file 'unknown.ini' line 2: 'no-such-option': unknown option"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile --config missing.ini -o out
  [[ "$stderr" == *"config file not found: 'missing.ini'"* ]] || fail "$stderr"
  [ "$(grep -c . <<<"$stderr")" -eq 2 ] || fail "$stderr"  # the error and the 'Try' line
  [ ! -e out ]
}

# ---------------------------------------------------------------------------------------------
# upload-file (gprofiler.md §8.5): no root, delegates to gp-upload.

@test "upload-file sends an existing .col to the Studio, stacks unchanged" {
  start_studio
  now=$(date -u +%Y-%m-%dT%H:%M:%S)
  printf '# {"metadata": {"hostname": "h1", "agent_version": "1.57.1", "current_time": "%s", "spawn_time": "%s"}}\n0;;python;main;work 7\n1;web;java;Main.run 3\n' "$now" "$now" > a.col
  run -0 --separate-stderr gp-profile upload-file --file-path a.col --token "$TOKEN" \
    --service-name web --server-host "$studio"
  [[ "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  assert_equal "$(stored)" 1
  python3 - <<'PY'
import json
posts = [e for e in map(json.loads, open("studio.log")) if e["method"] == "POST"]
assert len(posts) == 1
b, h = posts[0]["body"], posts[0]["headers"]
assert h["content-encoding"] == "gzip" and h["gprofiler-service-name"] == "web", h
assert b["profile"].split("\n", 1)[1].rstrip("\n") == "0;;python;main;work 7\n1;web;java;Main.run 3", b["profile"]
PY
}

@test "upload-file reports the Studio's refusal with gp-upload's status" {
  start_studio
  printf '# {"metadata": {"hostname": "h1"}}\nmain 1\n' > a.col
  run -1 --separate-stderr gp-profile --token wrong --service-name web --server-host "$studio" \
    upload-file --file-path a.col
  [[ "$stderr" == *"Invalid API key"* ]] || fail "$stderr"
  assert_equal "$(stored)" 0
}

# ---------------------------------------------------------------------------------------------
# Real profiling sessions (root, BPF).

@test "one session: -d 2 -o DIR writes profile_<time>.col and .html and the last_* links" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$busy"
  [[ "$stderr" == *"session 1: "*" samples, wrote '"* ]] || fail "$stderr"
  run ls out
  assert_line --regexp '^profile_[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.col$'
  assert_line --regexp '^profile_[0-9T:-]+\.html$'
  col=$(cd out && ls profile_*.col)
  assert_equal "$(readlink out/last_profile.col)" "$col"
  assert_equal "$(readlink out/last_flamegraph.html)" "${col%.col}.html"
  check_col out/last_profile.col
  grep -q ';sh;' out/last_profile.col || fail "the busy shell is missing: $(head -c 600 out/last_profile.col)"
  grep -q '<html' out/last_flamegraph.html
  [ -z "$(ls tmp)" ] || fail "temporary files left: $(ls -R tmp)"
}

@test "a Ruby workload after the merge: gp's Ruby sampler's _[rb] frames under its appid, ruby_version metadata" {
  # bats test_tags=root,bpf
  require_root_bpf
  local busy_rb="$GP_SOURCE_DIR/tests/fixtures/runtime/ruby/busy.rb"
  /usr/bin/ruby "$busy_rb" "$BATS_TEST_TMPDIR/rb-ready" &
  local rb=$!
  PIDS+=("$rb")
  for _ in $(seq 600); do [ -e "$BATS_TEST_TMPDIR/rb-ready" ] && break; sleep 0.1; done
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 3 -f 99 -o out --pids "$rb" \
    --ruby-mode gp --no-flamegraph
  check_col out/last_profile.col
  # The system profile's stacks of the ruby process became its Ruby stacks (gProfiler's merge).
  local chain="ruby;appid: ruby: $busy_rb ($busy_rb);block (2 levels) in <main> - $busy_rb:15_[rb];outer - $busy_rb:12_[rb];inner - $busy_rb:7_[rb];times [c function] - (unknown):0_[rb]"
  grep -q -F ";$chain" out/last_profile.col || fail "no merged Ruby stack: $(tail -n 5 out/last_profile.col)"
  grep -q -F '"ruby_version": "ruby 3.' out/last_profile.col || fail "no ruby_version app metadata"
}

@test "a PHP workload after the merge: gp's PHP sampler's _[php] frames under the root php, php_version metadata" {
  # bats test_tags=root,bpf
  require_root_bpf
  local script="$GP_SOURCE_DIR/tests/fixtures/runtime/php/target.php"
  /usr/bin/php8.2 -n "$script" "$BATS_TEST_TMPDIR/php-trace" >/dev/null &
  local php=$!
  PIDS+=("$php")
  for _ in $(seq 600); do [ -e "$BATS_TEST_TMPDIR/php-trace" ] && break; sleep 0.1; done
  # gProfiler's default filter (php-fpm) would leave this CLI process alone.
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 3 -f 99 -o out --pids "$php" \
    --php-mode gp --php-proc-filter php --no-flamegraph
  check_col out/last_profile.col
  # The system profile's stacks of the php process became its PHP stacks (gProfiler's merge),
  # rooted at the literal 'php' and without an appid, as gProfiler writes phpspy's.
  local chain="php;<main> $script:39_[php];Shop::checkout $script:13_[php];array_map <internal>:-1_[php];Shop::{closure} $script:13_[php];Shop::price $script:17_[php];sort_prices $script:22_[php];usort <internal>:-1_[php];{closure} $script:22_[php];compare $script:27_[php];<main> ${script%/*}/spin.php:3_[php];record_and_spin $script:36_[php]"
  grep -q -F ";$chain" out/last_profile.col || fail "no merged PHP stack: $(tail -n 5 out/last_profile.col)"
  grep -q -F '"php_version": "PHP 8.2.' out/last_profile.col || fail "no php_version app metadata"
  run -1 grep -F "php8.2;" out/last_profile.col
}

@test "Python frames show [pkg==ver] as gProfiler's do, and not with --no-python-versions" {
  start_venv_target
  PIDS+=("$PY_PID")
  local spin="spin ($VENV_SITE/tinypkg/__init__.py:1"
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 2 -o out --pids "$PY_PID" \
    --perf-mode disabled --no-flamegraph
  run -0 grep -c -F "$spin [TinyPkg==1.2.3])_[p] " out/last_profile.col
  grep -q -F "[standard-library==$PY_FULL_VERSION])_[p];main (" out/last_profile.col ||
    fail "no standard-library frame: $(tail -n 3 out/last_profile.col)"
  rm -rf out
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 2 -o out --pids "$PY_PID" \
    --perf-mode disabled --no-flamegraph --no-python-versions
  run -0 grep -c -F "$spin)_[p] " out/last_profile.col
  run -1 grep -F -e "[TinyPkg==" -e "[standard-library==" out/last_profile.col
}

@test "continuous: a --pids process that is no runtime's is named once per run, not every session" {
  start_busy
  start_venv_target
  PIDS+=("$PY_PID")
  timeout -s KILL 120 gp-profile -c -d 1 -o out --pids "$busy,$PY_PID" --perf-mode disabled \
    --no-flamegraph 2>err &
  local gp=$!
  PIDS+=("$gp")
  for _ in $(seq 600); do
    [ "$(grep -c 'samples, wrote' err)" -ge 3 ] && break
    sleep 0.1
  done
  kill -TERM "$gp"
  wait "$gp" || true
  [ "$(grep -c 'samples, wrote' err)" -ge 3 ] || fail "fewer than 3 sessions: $(cat err)"
  # Once, without gp-runtime's own prefix and severity, and its summary is no warning.
  run -0 grep -c "process $busy: not a Java, Python, Ruby process (comm 'sh')" err
  assert_output 1
  run -0 grep -c "gp-profile: warning: gp-runtime: process $busy: not a" err
  assert_output 1
  run -1 grep -e 'gp-runtime: gp-runtime:' -e 'gp-runtime: error:' -e 'processes: .* profiled' err
}

@test "a process the runtime profiler cannot profile is named with why, in one line" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_venv_target
  PIDS+=("$PY_PID")
  # py-spy is not installed here: the Python process is skipped, gp-runtime exits 1.
  PATH="$GP_BUILD_DIR/bin:/usr/bin:/bin" run -0 --separate-stderr timeout -s KILL 120 \
    gp-profile -d 1 -o out --pids "$PY_PID" --python-mode pyspy --no-flamegraph
  local want="gp-profile: warning: session 1: gp-runtime failed (exit status 1: pid $PY_PID (python3): python (mode pyspy): [Profiling skipped: py-spy is not installed (not on PATH)]); this profile has system stacks only"
  [ "$(grep -c -F "$want" <<<"$stderr")" = 1 ] || fail "$stderr"
  [ "$(grep -c 'warning' <<<"$stderr")" = 1 ] || fail "$stderr"
  [[ "$stderr" != *"gp-runtime: gp-runtime:"* ]] || fail "$stderr"
}

@test "temporary directories: removed on SIGINT and on an error exit; a SIGKILLed run's by the next start" {
  start_venv_target
  PIDS+=("$PY_PID")
  # SIGINT in the middle of a session: gp-profile and its stages remove theirs.
  gp-profile -c -d 2 -o out --pids "$PY_PID" --perf-mode disabled --no-flamegraph 2>int.err &
  local gp=$!
  PIDS+=("$gp")
  wait_for 120 children_running
  kill -INT "$gp"
  wait "$gp"
  wait_for 30 no_children
  [ -z "$(ls -A tmp)" ] || fail "left after SIGINT: $(ls -R tmp)"
  # An error exit after the directory was made: a Studio that is not there.
  run -1 --separate-stderr timeout -s KILL 60 gp-profile -c -u --server-host "http://127.0.0.1:$(free_port)" \
    --token "$TOKEN" --service-name svc
  [ -z "$(ls -A tmp)" ] || fail "left after an error: $(ls -R tmp)"
  # SIGKILL: its directory stays (its stages end their session and remove their own inside it).
  gp-profile -c -d 2 -o out --pids "$PY_PID" --perf-mode disabled --no-flamegraph 2>kill.err &
  gp=$!
  wait_for 120 children_running
  kill -KILL "$gp"
  wait "$gp" || true
  local left
  left=$(compgen -G "tmp/gp-profile-*")
  [ -f "$left/owner" ] || fail "nothing left over: $(ls -R tmp)"
  wait_for 60 no_children
  # The next start proves the owner is gone and removes it; its own goes at its end.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 1 -o out --pids "$PY_PID" \
    --perf-mode disabled --no-flamegraph
  [ -z "$(ls -A tmp)" ] || fail "left after the next run: $(ls -R tmp)"
}

@test "--heartbeat-file is touched as a continuous session starts; core files are off unless --dont-disable-core-files" {
  start_venv_target
  PIDS+=("$PY_PID")
  # gProfiler's GProfiler.run_continuous (gprofiler/main.py) touches the heartbeat file before
  # each snapshot; its setup_env sets RLIMIT_CORE to 0 (utils/linux.py disable_core_files)
  # unless --dont-disable-core-files. The shell's soft limit is raised to its hard one first.
  local hard
  hard=$(ulimit -H -c)
  [ "$hard" != 0 ] || fail "the hard core-file limit is 0 here: nothing to tell apart"
  (ulimit -S -c "$hard" && exec gp-profile -c -d 60 -o out --pids "$PY_PID" --perf-mode disabled \
    --no-flamegraph --heartbeat-file "$PWD/beat") 2>beat.err &
  local gp=$!
  PIDS+=("$gp")
  wait_for 120 children_running
  [ -f beat ] || fail "no heartbeat file while session 1 runs: $(cat beat.err)"
  grep -qE '^Max core file size +0 +0 ' "/proc/$gp/limits" || fail "$(grep core "/proc/$gp/limits")"
  kill -INT "$gp"
  wait "$gp"
  wait_for 30 no_children
  (ulimit -S -c "$hard" && exec gp-profile -c -d 60 -o out --pids "$PY_PID" --perf-mode disabled \
    --no-flamegraph --dont-disable-core-files) 2>core.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 120 children_running
  local want
  want=$hard
  [ "$want" = unlimited ] || want=$((want * 1024))
  grep -qE "^Max core file size +$want +$want " "/proc/$gp/limits" ||
    fail "$(grep core "/proc/$gp/limits") (wanted $want)"
  kill -INT "$gp"
  wait "$gp"
}

@test "--no-flamegraph writes the .col only" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 -o out --pids "$busy" --no-flamegraph
  run ls out
  assert_line --regexp '^profile_.*\.col$'
  refute_line --regexp '\.html$'
}

@test "continuous: three sessions uploaded and rotated; SIGTERM ends it cleanly" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  gp-profile -c -d 2 -f 99 --pids "$busy" -u --server-host "$studio" \
    --token "$TOKEN" --service-name svc -o out --rotating-output --pid-file gp.pid \
    --log-file gp.log 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 at_least 3 stored
  # A second instance is refused while the first runs (gprofiler.md §9.4).
  run -1 --separate-stderr gp-profile -d 1 -o other
  [[ "$stderr" == *"is it already running?"* ]] || fail "$stderr"
  assert_equal "$(cat gp.pid)" "$gp"
  # Stop it in the middle of a session: its stages must go with it.
  wait_for 120 children_running
  kill -TERM "$gp"
  status=0
  for _ in $(seq 150); do kill -0 "$gp" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$gp" 2>/dev/null && fail "gp-profile still runs 30 s after SIGTERM"
  wait "$gp" || status=$?
  assert_equal "$status" 0
  wait_for 10 no_children
  [ ! -e gp.pid ] || fail "pid file left behind"
  [ -z "$(ls tmp)" ] || fail "temporary files left: $(ls -R tmp)"
  grep -q 'stopped by signal' gp.err || fail "$(cat gp.err)"
  grep -q 'session 3: ' gp.log || fail "log file: $(cat gp.log)"
  ! grep -q "$TOKEN" gp.err gp.log || fail "the token was logged"
  # Every upload is the agent's request: gzip JSON with a .col whose first line is the header.
  python3 - "$TOKEN" <<'PY'
import json, sys
posts = [e for e in map(json.loads, open("studio.log")) if e["method"] == "POST"]
assert len(posts) >= 3, len(posts)
busy = 0
for p in posts[:3]:
    h, b = p["headers"], p["body"]
    assert h["content-encoding"] == "gzip" and h["content-type"] == "application/json", h
    assert h["gprofiler-api-key"] == sys.argv[1] and h["gprofiler-service-name"] == "svc", h
    head = b["profile"].split("\n", 1)[0]
    assert json.loads(head[2:])["metadata"]["hostname"], head
    busy += ";sh;" in b["profile"]  # a loaded machine may leave one session without samples
    assert len(b["start_time"]) == 19 and b["start_time"] <= b["end_time"], b
assert busy >= 1, "the busy shell is in no upload"
PY
  # --rotating-output: only the newest .col/.html are left, and the links point at them.
  run ls out
  assert_equal "$(ls out | grep -c '^profile_.*\.col$')" 1
  assert_equal "$(ls out | grep -c '^profile_.*\.html$')" 1
  col=$(cd out && ls profile_*.col)
  assert_equal "$(readlink out/last_profile.col)" "$col"
  assert_equal "$(readlink out/last_flamegraph.html)" "${col%.col}.html"
  check_col out/last_profile.col
  [ ! -e out/last_profile.col.tmp ]
}

# The continuous gp-record gp-profile keeps (its session files go to gp-profile's tmp/).
recorders() { pgrep -f "gp-record .*--output-dir $BATS_TEST_TMPDIR/tmp/" || true; }
logged() { sessions_logged gp.log; }

# Starts gp-profile -c with sessions of $1 s, system stacks only, on the busy shell (--pids), with
# the remaining options; logs to gp.log, stderr to gp.err. Waits for its first session; sets gp
# (its pid) and first_recorder (the gp-record it started).
start_continuous_system_only() {
  local seconds=$1
  shift
  start_busy
  gp-profile -c -d "$seconds" -f 99 --pids "$busy" --no-java --no-python --no-ruby --no-php \
    --no-nodejs --no-dotnet -o out --log-file gp.log "$@" 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 120 at_least 1 logged
  first_recorder=$(recorders)
  [ -n "$first_recorder" ] || fail "no continuous gp-record running: $(cat gp.err)"
}

@test "continuous: one gp-record for the whole run, as gProfiler keeps perf running; sessions end by SIGUSR2" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_continuous_system_only 2 -v
  local first=$first_recorder
  wait_for 120 at_least 4 logged
  # The same gp-record wrote every session: it was never restarted.
  assert_equal "$(recorders)" "$first"
  ! grep -q 'starting it again' gp.log || fail "gp-record was restarted: $(cat gp.log)"
  assert_equal "$(ls out | grep -c '^profile_.*\.col$')" "$(sessions_logged gp.log)"
  check_col out/last_profile.col
  grep -q ';sh' out/last_profile.col || fail "the busy shell is not in the last session"
  kill -TERM "$gp"
  wait "$gp"
  # The recorder goes with gp-profile, and its session files with gp-profile's directory.
  wait_for 30 no_children
  [ -z "$(ls -A tmp)" ] || fail "left after SIGTERM: $(ls -R tmp)"
}

@test "continuous: a gp-record killed mid-session costs that session's system stacks; the next starts a new one" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_continuous_system_only 3
  local first=$first_recorder
  kill -KILL "$first"
  wait_for 60 grep -q 'gp-record failed (gp-record exited (killed by signal 9' gp.log
  local n
  n=$(logged)
  wait_for 120 at_least $((n + 2)) logged
  local second
  second=$(recorders)
  [ -n "$second" ] && [ "$second" != "$first" ] || fail "no new gp-record: '$second' (was $first)"
  grep -q ';sh' out/last_profile.col || fail "the busy shell is not in the last session"
  kill -TERM "$gp"
  wait "$gp"
  wait_for 30 no_children
}

@test "start-up health check: an unreachable or refusing Studio stops it at once, gProfiler's messages" {
  [ "$(id -u)" -eq 0 ] || skip "needs root (the root check comes first)"
  closed=$(free_port)
  run -1 --separate-stderr timeout -s KILL 60 gp-profile -c -u --server-host "http://127.0.0.1:$closed" \
    --token "$TOKEN" --service-name svc --log-file gp.log --pid-file gp.pid
  [[ "$stderr" == *"error: Failed to connect to server. It might be blocked by your security rules / firewall, or you might require a proxy to access it from your environment? Proxy used: none. Error: "* ]] ||
    fail "$stderr"
  start_studio
  run -1 --separate-stderr timeout -s KILL 60 gp-profile -c -u --server-host "$studio" \
    --token wrong-token --service-name svc --log-file gp.log --pid-file gp.pid
  [[ "$stderr" == *"error: Server error: HTTP 400: Invalid API key"* ]] || fail "$stderr"
  [[ "$stderr" != *"wrong-token"* && "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  run python3 -c 'import json; print(sorted({(e["method"], e["path"]) for e in map(json.loads, open("studio.log"))}))'
  assert_equal "$output" "[('GET', '/api/v1/health_check')]"
  [ ! -e gp.pid ]
}

@test "continuous: a Studio answering 500 does not stop the loop either" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio --fail 1000
  gp-profile -c -d 1 --pids "$busy" -u --server-host "$studio" \
    --token "$TOKEN" --service-name svc 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 grep -q 'session 2: gp-upload failed' gp.err
  kill -TERM "$gp"
  status=0
  wait "$gp" || status=$?
  assert_equal "$status" 0
  grep -q 'HTTP 500' gp.err || fail "$(cat gp.err)"
}

# Log batches the Studio's logs backend received (POST /api/v1/logs), one JSON line each.
log_batches() {
  local n
  n=$(grep -c '"path": "/api/v1/logs"' studio.log 2>/dev/null) || true
  echo "${n:-0}"
}

@test "remote logs: the run's records reach --api-server as gProfiler's glogger sends them" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  # The path of --api-server is not used: gProfiler keeps its scheme and host only.
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 --pids "$busy" -u \
    --server-host "$studio" --api-server "$studio/not/used" --token "$TOKEN" --service-name svc \
    --log-file gp.log --pid-file gp.pid
  assert_equal "$(log_batches)" 1
  python3 - "$TOKEN" "$(hostname)" <<'PY'
import json, re, sys
token, host = sys.argv[1], sys.argv[2]
e = [e for e in map(json.loads, open("studio.log")) if e["path"] == "/api/v1/logs"][0]
h = e["headers"]
assert e["method"] == "POST" and e["query"] == {}, e
assert h["x-token"] == token and h["x-application-name"] == "gprofiler", h
assert h["content-encoding"] == "gzip" and h["content-type"] == "application/json", h
raw, b = e["raw"], e["body"]
# glogger's JSON: compact separators, ASCII only, members in its order.
assert raw.startswith('{"batch_id":"') and ", " not in raw.split('"logs":')[0], raw[:200]
assert raw.isascii()
assert list(b) == ["batch_id", "metadata", "lost_logs_count", "logs"], list(b)
assert re.fullmatch(r"[0-9a-f]{32}", b["batch_id"]), b["batch_id"]
md = b["metadata"]
assert list(md) == ["run_id", "gprofiler_version", "service_name", "hostname"], md
assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", md["run_id"]), md
assert md["gprofiler_version"] == "1.57.1" and md["service_name"] == "svc" and md["hostname"] == host, md
assert b["lost_logs_count"] == 0, b["lost_logs_count"]
logs = b["logs"]
assert [l["text"]["serial_no"] for l in logs] == list(range(len(logs))), logs
for l in logs:
    assert list(l) == ["severity", "timestamp", "text"], l
    assert list(l["text"]) == ["logger_name", "serial_no", "message", "truncated", "lineno",
                               "pathname", "funcname", "thread", "timestamp", "exception", "extra"], l
    assert l["severity"] in (2, 3, 4, 5) and isinstance(l["timestamp"], float), l
    assert l["text"]["truncated"] is False and l["text"]["lineno"] > 0, l
    assert l["text"]["pathname"].startswith("tools/gp-profile/"), l
assert token not in raw, "the token was sent in a log record"
summary = [l for l in logs if re.match(r"session 1: \d+ samples, uploaded to ", l["text"]["message"])]
assert len(summary) == 1 and summary[0]["severity"] == 3, [l["text"]["message"] for l in logs]
# A single run's cycle_id is its run_id; the DEBUG records (each stage's command line) are
# sent as gProfiler sends its DEBUG records, without -v.
assert summary[0]["text"]["extra"] == {"cycle_id": md["run_id"]}, summary[0]
assert any(l["severity"] == 2 and "gp-record" in l["text"]["message"] for l in logs), logs
PY
}

@test "remote logs: none with --dont-send-logs, GPROFILER_DONT_SEND_LOGS (any value) or API v1" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  local common=(-d 1 --pids "$busy" -u --server-host "$studio" --api-server "$studio"
    --token "$TOKEN" --service-name svc --log-file gp.log --pid-file gp.pid)
  run -0 --separate-stderr timeout -s KILL 240 gp-profile "${common[@]}" --dont-send-logs
  GPROFILER_DONT_SEND_LOGS=false run -0 --separate-stderr timeout -s KILL 240 gp-profile "${common[@]}"
  run --separate-stderr timeout -s KILL 240 gp-profile "${common[@]}" --profile-api-version v1
  [ "$(stored)" -ge 2 ] || fail "the sessions were not uploaded: $(stored)"
  assert_equal "$(log_batches)" 0
}

@test "remote logs: a failing logs server never stops profiling; the batch it refused is sent again" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio --logs-fail 1
  gp-profile -c -d 2 --pids "$busy" -u --server-host "$studio" --api-server "$studio" \
    --token "$TOKEN" --service-name svc --log-file gp.log --pid-file gp.pid 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  # gProfiler's sender: a batch every 30 s (looked at every 10 s) while records wait.
  wait_for 150 at_least 2 log_batches
  kill -TERM "$gp"
  wait "$gp" || fail "gp-profile exited $?: $(tail -5 gp.err)"
  [ "$(stored)" -ge 3 ] || fail "sessions stored: $(stored)"
  grep -q 'REMOTE_LOGGER: Received 500 from server' gp.err || fail "$(cat gp.err)"
  python3 <<'PY'
import json
batches = [e["body"] for e in map(json.loads, open("studio.log")) if e["path"] == "/api/v1/logs"]
assert len(batches) >= 3, len(batches)  # the refused one, the one sent again, the last at exit
first, second = batches[0], batches[1]
assert first["batch_id"] != second["batch_id"]
serials = lambda b: [l["text"]["serial_no"] for l in b["logs"]]
# Refused: kept and sent again with what came after; accepted: not sent twice.
assert serials(first)[0] == 0 and serials(second)[:len(serials(first))] == serials(first), (serials(first), serials(second))
assert serials(batches[2])[0] == serials(second)[-1] + 1, (serials(second), serials(batches[2]))
cycles = {l["text"]["extra"]["cycle_id"] for b in batches for l in b["logs"]
          if l["text"]["message"].startswith("session ")}
assert len(cycles) >= 3 and None not in cycles, cycles  # one per continuous session
PY
}

# Writes the Studio's command list (tests/servers/studio.py --commands): one JSON object a line.

@test "--enable-heartbeat-server: the server's start and stop commands run and end sessions, each acknowledged" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  local start1="{\"command_id\":\"cmd-1\",\"command_type\":\"start\",\"combined_config\":{\"duration\":1,\"frequency\":99,\"profiling_mode\":\"cpu\",\"pids\":[$busy],\"continuous\":true,\"profiler_configs\":{\"async_profiler\":\"disabled\"}}}"
  commands "$start1"
  start_studio --commands commands.json
  # -d 60: the command's duration (1 s) is what the sessions last.
  gp-profile -u --enable-heartbeat-server --heartbeat-interval 1 -d 60 --server-host "$studio" \
    --api-server "$studio" --token "$TOKEN" --service-name svc --log-file gp.log \
    --pid-file gp.pid -v 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 at_least 2 stored
  wait_for 30 completed cmd-1
  # Stop: the sessions end, and nothing more is uploaded.
  commands "$start1" '{"command_id":"cmd-2","command_type":"stop","combined_config":{}}'
  wait_for 60 completed cmd-2
  wait_for 60 no_children
  local after_stop
  after_stop=$(stored)
  sleep 4
  assert_equal "$(stored)" "$after_stop"
  # An ad-hoc start: one session, then the slot is free again.
  commands "$start1" '{"command_id":"cmd-2","command_type":"stop","combined_config":{}}' \
    "{\"command_id\":\"cmd-3\",\"command_type\":\"start\",\"combined_config\":{\"duration\":1,\"pids\":\"$busy\",\"continuous\":false,\"profiling_mode\":\"bogus\"}}" \
    '{"command_id":"cmd-4","command_type":"restart","combined_config":{}}'
  wait_for 120 at_least $((after_stop + 1)) stored
  wait_for 60 completed cmd-4
  sleep 4
  assert_equal "$(stored)" "$((after_stop + 1))"
  kill -TERM "$gp"
  wait "$gp" || fail "gp-profile exited $?: $(tail -5 gp.err)"
  grep -q 'Unknown command type: restart' gp.err || fail "$(cat gp.err)"
  # A mode gp-profile has no profiler for is said, and CPU time is profiled instead.
  grep -q "warning: profiling_mode 'bogus' is not implemented by gp-profile: profiling CPU time" gp.err ||
    fail "$(cat gp.err)"
  python3 - "$TOKEN" "$(hostname)" <<'PY'
import json, sys
token, host = sys.argv[1], sys.argv[2]
log = list(map(json.loads, open("studio.log")))
beats = [e for e in log if e["path"] == "/api/metrics/heartbeat"]
done = [e for e in log if e["path"] == "/api/metrics/command_completion"]
for e in beats + done:
    h = e["headers"]
    assert h["authorization"] == "Bearer " + token and h["content-type"] == "application/json", h
    assert "content-encoding" not in h, h
    assert e["raw"] == json.dumps(e["body"]), e["raw"]  # json.dumps' default form
first = beats[0]["body"]
assert list(first) == ["ip_address", "hostname", "service_name", "last_command_id", "status",
                       "timestamp", "received_command_ids", "executed_command_ids"], first
assert first["hostname"] == host and first["service_name"] == "svc" and first["status"] == "active", first
assert first["last_command_id"] is None and first["received_command_ids"] == [], first
last = beats[-1]["body"]
assert last["last_command_id"] == "cmd-4", last
assert last["received_command_ids"] == ["cmd-1", "cmd-2", "cmd-3", "cmd-4"], last
assert last["executed_command_ids"] == ["cmd-1", "cmd-2", "cmd-3"], last
status = {e["body"]["command_id"]: e["body"] for e in done}
assert sorted(status) == ["cmd-1", "cmd-2", "cmd-3", "cmd-4"], status
for c in ("cmd-1", "cmd-2", "cmd-3"):
    b = status[c]
    assert b == {"command_id": c, "hostname": host, "status": "completed", "execution_time": 0,
                 "error_message": None, "results_path": None}, b
assert status["cmd-4"]["status"] == "failed" and status["cmd-4"]["error_message"] == "Unknown command type: restart", status["cmd-4"]
assert len(done) == 4, [e["body"]["command_id"] for e in done]  # each command acknowledged once
# The sessions are the command's: 1 s each (not -d 60), on the command's pids.
from datetime import datetime
posts = [e["body"] for e in log if e["path"] == "/api/v2/profiles"]
for b in posts:
    span = datetime.fromisoformat(b["end_time"]) - datetime.fromisoformat(b["start_time"])
    assert span.total_seconds() < 30, (b["start_time"], b["end_time"])
PY
}

@test "--log-rotate-max-size and --log-rotate-backup-count rotate --log-file as gProfiler's RotatingFileHandler" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  local i f
  for i in 1 2; do
    run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 --pids "$busy" -o out \
      --no-flamegraph -vv --log-file gp.log --log-rotate-max-size 400 --log-rotate-backup-count 2 \
      --pid-file gp.pid
  done
  [ -s gp.log ] && [ -s gp.log.1 ] && [ -s gp.log.2 ] || fail "$(ls -l gp.log*)"
  [ ! -e gp.log.3 ] || fail "more backups than --log-rotate-backup-count: $(ls gp.log*)"
  # A file stays under the bound unless a single record is longer than it.
  for f in gp.log gp.log.1 gp.log.2; do
    [ "$(stat -c %s "$f")" -lt 400 ] || [ "$(wc -l <"$f")" -eq 1 ] || fail "$f: $(stat -c %s "$f") bytes: $(cat "$f")"
  done
  # The newest records are in gp.log: the second run's summary is there or in gp.log.1.
  grep -q 'session 1: ' gp.log gp.log.1 || fail "$(cat gp.log gp.log.1)"
}

@test "--curlify-requests logs each Studio request as a curl command, token redacted, never sent as a remote log" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 --pids "$busy" -u \
    --server-host "$studio" --api-server "$studio" --token "$TOKEN" --service-name svc \
    --log-file gp.log --pid-file gp.pid --curlify-requests -v
  [[ "$stderr" == *"info: API request (curl_command=curl -X GET -H 'GPROFILER-API-KEY: ***' -H 'GPROFILER-SERVICE-NAME: svc' '$studio/api/v1/health_check?key=***&service=svc&hostname="*", status_code=200)"* ]] ||
    fail "$stderr"
  # The upload: its JSON body un-gzipped, no Content-Encoding header.
  [[ "$stderr" == *"session 1: API request (curl_command=curl -X POST -H 'GPROFILER-API-KEY: ***' -H 'GPROFILER-SERVICE-NAME: svc' -H 'Content-Type: application/json' -d '{\"start_time\": "*"' '$studio/api/v2/profiles?key=***&"*", status_code=200)"* ]] ||
    fail "$stderr"
  [[ "$stderr" != *"$TOKEN"* ]] || fail "the token was printed"
  grep -q 'API request (curl_command=curl -X POST' gp.log || fail "not in the log file"
  ! grep -q "$TOKEN" gp.log || fail "the token was logged"
  run -0 python3 -c 'import json; print(sum("curl_command" in l["text"].get("message", "") for e in map(json.loads, open("studio.log")) if e["path"] == "/api/v1/logs" for l in e["body"]["logs"]))'
  assert_equal "$output" 0
  # Without the option: no such line.
  run -0 --separate-stderr timeout -s KILL 240 gp-profile -d 1 --pids "$busy" -u \
    --server-host "$studio" --token "$TOKEN" --service-name svc --log-file gp.log \
    --pid-file gp.pid --dont-send-logs -vv
  [[ "$stderr" != *"curl_command"* ]] || fail "$stderr"
}

# Studio requests of a run, as a list of (start_time, end_time, gpid, spawn_time, cpu, mem).
studio_posts() {
  python3 - <<'PY'
import json
for e in map(json.loads, open("studio.log")):
    if e["method"] == "POST" and e["body"]:
        b = e["body"]
        print(b["start_time"], b["end_time"], repr(b["gpid"]), b["spawn_time"], b["cpu_avg"], b["mem_avg"])
PY
}

@test "gProfiler's deployment command lines, unchanged, against the loopback Studio" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  start_studio
  # The DaemonSet/Helm/ECS form: everything but the flags from GPROFILER_* variables; the
  # systemd/docker form: -cu --token=... --service-name=... . The test's own settings (server,
  # session length, one process, files) come from variables too.
  export GPROFILER_SERVER_HOST="$studio" GPROFILER_PROFILING_DURATION=2 GPROFILER_PIDS="$busy"
  export GPROFILER_LOG_FILE="$BATS_TEST_TMPDIR/gp.log" GPROFILER_PID_FILE="$BATS_TEST_TMPDIR/gp.pid"
  local form
  for form in env argv; do
    rm -rf store studio.log
    if [ "$form" = env ]; then
      GPROFILER_TOKEN="$TOKEN" GPROFILER_SERVICE_NAME=svc gp-profile -cu -vv 2>gp.err &
    else
      gp-profile -cu --token="$TOKEN" --service-name="svc" -vv 2>gp.err &
    fi
    gp=$!
    PIDS+=("$gp")
    wait_for 300 at_least 3 stored
    kill -TERM "$gp"
    wait "$gp" || fail "gp-profile ($form) exited $?: $(tail -5 gp.err)"
    # The token never reaches a child's command line (-vv logs each one) nor a log.
    grep -q 'session 1: gp-upload ' gp.err || fail "no stage command lines: $(cat gp.err)"
    ! grep -q -- "--token" <(grep 'gp-upload ' gp.err) || fail "gp-upload got --token: $(grep 'gp-upload ' gp.err)"
    ! grep -q "$TOKEN" gp.err gp.log || fail "the token was logged"
    run studio_posts
    python3 - "$output" <<'PY'
import sys
rows = [l.split(" ") for l in sys.argv[1].splitlines()]
assert len(rows) >= 3, rows
gpids = [r[2] for r in rows]
assert gpids[0] == "''" and len(set(gpids[1:])) == 1 and gpids[1].isdigit(), gpids
spawn = {r[3] for r in rows}
assert len(spawn) == 1, spawn                      # the agent's start, not each session's
assert min(r[0] for r in rows) >= spawn.pop()
starts = [r[0] for r in rows]
assert starts == sorted(starts) and len(set(starts)) == len(starts), starts
for r in rows:
    assert r[4] != "None" and 0 <= float(r[4]) <= 100, r   # cpu_avg
    assert r[5] != "None" and 0 < float(r[5]) < 100, r     # mem_avg
PY
    # The header is gProfiler's: system metadata, metrics as in the body, run arguments.
    python3 - "$TOKEN" <<'PY'
import json, sys
posts = [e["body"] for e in map(json.loads, open("studio.log")) if e["method"] == "POST"]
for b in posts:
    h = json.loads(b["profile"].split("\n", 1)[0][2:])
    md = h["metadata"]
    for k in ("hypervisor", "cpu_model_name", "processors", "memory_capacity_mb", "os_name",
              "os_release", "os_codename", "libc_type", "libc_version", "run_arguments",
              "spawn_time", "current_time", "mac_address", "private_ip"):
        assert k in md, k
    assert md["spawn_time"] == b["spawn_time"], (md["spawn_time"], b["spawn_time"])
    assert md["os_name"] != "unknown" and "(" not in md["os_release"], md
    assert h["metrics"] == {"cpu_avg": b["cpu_avg"], "mem_avg": b["mem_avg"]}, h["metrics"]
    assert md["run_arguments"]["continuous"] is True, md["run_arguments"]
    assert sys.argv[1] not in b["profile"], "token in the profile"
PY
  done
}

@test "continuous: a Studio down for two sessions receives every session when back, in order" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_busy
  port=$(free_port)
  start_studio --port "$port"
  server=${PIDS[-1]}
  gp-profile -c -d 2 --pids "$busy" -u --server-host "$studio" --token "$TOKEN" \
    --service-name svc --spool-dir spool --log-file gp.log --pid-file gp.pid 2>gp.err &
  gp=$!
  PIDS+=("$gp")
  wait_for 300 at_least 1 stored
  kill "$server"
  failed() { [ "$(grep -c 'gp-upload failed' gp.err)" -ge 2 ]; }
  wait_for 300 failed
  [ "$(ls spool/*.col | wc -l)" -ge 2 ] || fail "spool: $(ls spool)"
  start_studio --port "$port"
  wait_for 300 at_least 4 stored
  kill -TERM "$gp"
  wait "$gp" || true
  run studio_posts
  python3 - "$output" <<'PY'
import sys
rows = [l.split(" ") for l in sys.argv[1].splitlines()]
assert len(rows) >= 4, rows
starts = [r[0] for r in rows]
assert starts == sorted(starts) and len(set(starts)) == len(starts), starts  # oldest first, none twice
assert len({r[2] for r in rows[1:]}) == 1, rows                                # one gpid throughout
PY
  ! grep -q "$TOKEN" gp.err gp.log || fail "the token was logged"
}

@test "cmake --install --prefix /usr lays gp out as Debian expects, so deploy/ works as shipped" {
  require_command cmake
  root="$BATS_TEST_TMPDIR/root"
  DESTDIR="$root" run cmake --install "$GP_BUILD_DIR" --prefix /usr
  assert_success
  local tool
  for tool in gp-record gp-runtime gp-merge gp-symbolize gp-fold gp-flame gp-upload gp-profile; do
    [ -x "$root/usr/bin/$tool" ] || fail "no /usr/bin/$tool"
    [ -f "$root/usr/share/man/man1/$tool.1" ] || fail "no man page of $tool"
    [ -f "$root/usr/share/bash-completion/completions/$tool" ] || fail "no bash completion of $tool"
    [ -f "$root/usr/share/zsh/vendor-completions/_$tool" ] || fail "no zsh completion of $tool"
    [ -f "$root/usr/share/fish/vendor_completions.d/$tool.fish" ] || fail "no fish completion of $tool"
  done
  unit="$root/usr/lib/systemd/system/gp-profile.service"
  [ -f "$unit" ] || fail "no unit file"
  # The unit runs what was installed, with the settings file that was installed.
  exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
  assert_equal "$exe" /usr/bin/gp-profile
  grep -qx 'EnvironmentFile=-/etc/default/gp-profile' "$unit"
  assert_equal "$(stat -c %a "$root/etc/default/gp-profile")" 600
  run "$root/usr/bin/gp-profile" --version
  assert_success
  # The installed gp-profile finds its tools next to it.
  run "$root/usr/bin/gp-profile" upload-file --file-path /etc/hostname --token t --service-name s \
    --server-host "http://127.0.0.1:$(free_port)"
  [[ "$output" != *"cannot find"* ]] || fail "$output"
  # An edited settings file (it may hold the token) survives a reinstall.
  echo 'GPROFILER_TOKEN=kept' >>"$root/etc/default/gp-profile"
  DESTDIR="$root" run cmake --install "$GP_BUILD_DIR" --prefix /usr
  assert_success
  grep -q 'GPROFILER_TOKEN=kept' "$root/etc/default/gp-profile"
}

@test "Python, Java, Ruby and PHP at once: each runtime's frames, suffix and appid in one merged profile" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command javac
  require_command php8.2
  require_command ruby
  local fixtures="$GP_SOURCE_DIR/tests/fixtures/runtime" py jvm rb php
  printf 'def work():\n    while True:\n        pass\n\nwork()\n' >busy.py
  /usr/bin/python3 busy.py & py=$!
  PIDS+=("$py")
  mkdir classes && javac -d classes "$fixtures/java/Main.java"
  java -Xmx64m -XX:+UseSerialGC -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
    -cp classes Main >jvm.out & jvm=$!
  PIDS+=("$jvm")
  /usr/bin/ruby "$fixtures/ruby/busy.rb" rb-ready & rb=$!
  PIDS+=("$rb")
  /usr/bin/php8.2 -n "$fixtures/php/target.php" php-trace >/dev/null & php=$!
  PIDS+=("$php")
  for _ in $(seq 600); do
    grep -q ready jvm.out 2>/dev/null && [ -e rb-ready ] && [ -e php-trace ] && break
    sleep 0.1
  done
  # JFR (async-profiler is not packaged by Debian) needs a session of some seconds to hand in.
  run -0 --separate-stderr timeout -s KILL 300 gp-profile -d 15 -f 49 -o out --no-flamegraph \
    --pids "$py,$jvm,$rb,$php" --python-mode gp --java-mode jfr --ruby-mode gp --php-mode gp \
    --php-proc-filter php
  check_col out/last_profile.col
  local col=out/last_profile.col
  grep -qE ';python3;appid: python: busy\.py \([^)]*\);<module> \([^)]*busy\.py:1\)_\[p\];work \([^)]*busy\.py:1\)_\[p\] [0-9]+$' "$col" ||
    fail "no Python stack: $(grep -F python3 "$col" | head -3)"
  grep -qE ';java;appid: java: Main;([^;]*;)*Main\.work\(\)V_\[j\]' "$col" ||
    fail "no Java stack: $(grep -F ';java;' "$col" | head -3)"
  grep -qF ";ruby;appid: ruby: $fixtures/ruby/busy.rb ($fixtures/ruby/busy.rb);" "$col" ||
    fail "no Ruby stack: $(grep -F ';ruby;' "$col" | head -3)"
  grep -qE ";ruby;.*;inner - [^;]*busy\.rb:7_\[rb\]" "$col" || fail "no Ruby frames"
  grep -qE ";php;<main> [^;]*target\.php:[0-9]+_\[php\];.*record_and_spin [^;]*_\[php\] [0-9]+$" "$col" ||
    fail "no PHP stack: $(grep -F ';php;' "$col" | head -3)"
  # Each process's app metadata names its runtime's version.
  local key
  for key in python_version java_version ruby_version php_version; do
    grep -qF "\"$key\": " "$col" || fail "no $key in the app metadata: $(head -c 3000 "$col")"
  done
}
