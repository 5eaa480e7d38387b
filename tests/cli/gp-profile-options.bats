#!/usr/bin/env bats
# gp-profile's gProfiler options beyond CPU sampling, run for real: allocation profiling of a
# JVM (tests/fixtures/runtime/java/Alloc.java) through JFR; the busiest cgroups (--perf-use-cgroups) with cgroups the
# test makes. Needs root (gp-profile's precondition) and the JDK (scripts/install-deps.sh
# --test installs it).
# bats file_tags=gp-profile

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
  export JAVA_CLASSES="$BATS_FILE_TMPDIR/classes"
  mkdir -p "$JAVA_CLASSES"
  if command -v javac >/dev/null; then
    javac -d "$JAVA_CLASSES" "$GP_SOURCE_DIR/tests/fixtures/runtime/java/Alloc.java" \
      "$GP_SOURCE_DIR/tests/fixtures/runtime/java/Fibonacci.java"
  fi
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  profile_test_setup
}

teardown() {
  profile_test_kill
  wait 2>/dev/null || true
  [ -z "${MEMCG:-}" ] || rmdir "$MEMCG" 2>/dev/null || true
  if [ -n "${CGROUPS:-}" ]; then
    local d
    for d in "$CGROUPS"/*/; do rmdir "$d" 2>/dev/null || true; done
    rmdir "$CGROUPS" 2>/dev/null || true
  fi
}

require_jdk() {
  require_command javac
  require_command java
  require_command jcmd
}

# Starts Alloc (it waits for ./go, then allocates and writes its byte count to ./allocated).
start_alloc_jvm() {
  java -Xmx256m -XX:+UseSerialGC -cp "$JAVA_CLASSES" Alloc "$PWD/go" "$PWD/allocated" >jvm.out &
  JVM_PID=$!
  PIDS+=("$JVM_PID")
  wait_for 60 grep -q ready jvm.out
}

recording() { jcmd "$JVM_PID" JFR.check 2>/dev/null | grep -q 'gp-runtime-'; }

# Lets Alloc allocate once gp's JFR recording runs in it, and waits until it is done.
allocate_while_recorded() {
  wait_for 90 recording
  touch go
  wait_for 90 test -s allocated
}

# Checks the .col text on stdin: header profiling_mode "allocation" (top level and metadata, no
# sampling fields, as gProfiler's), the heaviest stack ends in Alloc.allocate then the allocated
# class as async-profiler's alloc event names it (byte[]_[i]), and the bytes under
# Alloc.allocate are within 10 % of what the program counted ($1).
check_allocation_col() {
  python3 -c '
import json, sys
allocated = int(sys.argv[1])
lines = sys.stdin.read().rstrip("\n").split("\n")
header = json.loads(lines[0][2:])
assert header["profiling_mode"] == "allocation", header["profiling_mode"]
assert header["metadata"]["profiling_mode"] == "allocation", header["metadata"]
assert "sampling_frequency" not in header and "sampling_event" not in header, header
stacks = [l.rsplit(" ", 1) for l in lines[1:]]
stacks = [(frames.split(";"), int(count)) for frames, count in stacks]
top = max(stacks, key=lambda s: s[1])[0]
assert top[-1] == "byte[]_[i]" and top[-2].startswith("Alloc.allocate(I)J_["), top[-3:]
ours = sum(c for frames, c in stacks if any(f.startswith("Alloc.allocate(I)J_[") for f in frames))
assert abs(ours - allocated) <= 0.10 * allocated, (ours, allocated)
print(f"{ours} bytes profiled, {allocated} allocated")
' "$1"
}

@test "--mode allocation: a JVM's byte[] allocations in bytes, in its method, header profiling_mode allocation" {
  require_jdk
  start_alloc_jvm
  timeout -s KILL 240 gp-profile --mode allocation --alloc-interval 1mb -d 25 -o out \
    --pids "$JVM_PID" --java-mode jfr --no-flamegraph 2>gp.err &
  local gp=$!
  PIDS+=("$gp")
  allocate_while_recorded
  wait "$gp" || fail "gp-profile exited $?: $(tail -5 gp.err)"
  # gp-record is off in allocation mode (gProfiler's perf supports cpu only).
  ! grep -q 'gp-record' gp.err || fail "$(cat gp.err)"
  ! grep -q 'not implemented' gp.err || fail "$(cat gp.err)"
  check_allocation_col "$(cat allocated)" <out/last_profile.col
}

@test "the Studio's start command with profiling_mode allocation profiles the JVM's allocations in bytes" {
  require_jdk
  start_alloc_jvm
  TOKEN=alloc-token
  commands "{\"command_id\":\"cmd-a\",\"command_type\":\"start\",\"combined_config\":{\"duration\":15,\"profiling_mode\":\"allocation\",\"pids\":[$JVM_PID],\"continuous\":false}}"
  start_studio --commands commands.json
  timeout -s KILL 240 gp-profile -u --enable-heartbeat-server --heartbeat-interval 1 \
    --server-host "$studio" --api-server "$studio" --token "$TOKEN" --service-name svc \
    --java-mode jfr --log-file gp.log --pid-file gp.pid -v 2>gp.err &
  local gp=$!
  PIDS+=("$gp")
  allocate_while_recorded
  wait_for 120 compgen -G 'store/products/svc/stacks/*.gz'
  kill -TERM "$gp"
  wait "$gp" || fail "gp-profile exited $?: $(tail -5 gp.err)"
  ! grep -q 'gp-record\|not implemented' gp.err || fail "$(cat gp.err)"
  check_allocation_col "$(cat allocated)" < <(gzip -dc store/products/svc/stacks/*.gz)
}

# Starts Fibonacci (busy in a private static method) and waits until it runs.
start_fibonacci_jvm() {
  java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >jvm.out &
  JVM_PID=$!
  PIDS+=("$JVM_PID")
  wait_for 60 grep -q ready jvm.out
}

# Prints the jvm_flags of the .col's (stdin) app metadata, one "name type value origin kinds" line
# each, sorted as gProfiler sorts them (by name).
jvm_flags_of_col() {
  python3 -c '
import json, sys
header = json.loads(sys.stdin.readline()[2:])
apps = [a for a in header["application_metadata"] if a and "jvm_flags" in a]
assert len(apps) == 1, header["application_metadata"]
assert isinstance(apps[0]["jvm_flags"], list), apps[0]["jvm_flags"]
for f in apps[0]["jvm_flags"]:
    assert list(f) == ["name", "type", "value", "origin", "kind"], f
    print(f["name"], f["type"], f["value"], f["origin"], ",".join(f["kind"]))
'
}

@test "--java-include-method-modifiers: JFR's Java frames start with the modifiers, as gProfiler's" {
  require_jdk
  start_fibonacci_jvm
  # -d 12: JFR's first execution samples come seconds after its start on a loaded host.
  run -0 --separate-stderr timeout -s KILL 180 gp-profile -d 12 -o out --pids "$JVM_PID" \
    --java-mode jfr --perf-mode disabled --no-flamegraph --java-include-method-modifiers
  # gProfiler tests/test_java.py, test_including_method_modifiers: with the option its Fibonacci
  # test application's collapsed stacks hold "private static Fibonacci.fibonacci(I)J_[j]"
  # (java.py passes 'includemm' to its async-profiler, which writes the modifiers first).
  [[ "$stderr" != *"session 1: 0 samples"* ]] || fail "no JFR sample in 12 s: $stderr"
  run -0 grep -c ';private static Fibonacci.fibonacci(I)J_\[j\]' out/last_profile.col
  run -0 grep -c ';public static Fibonacci.main(\[Ljava/lang/String|)V_\[j\]' out/last_profile.col
  run -1 grep -E ';Fibonacci\.' out/last_profile.col
  # gProfiler's default --java-collect-jvm-flags: the flags not set by default, in the app
  # metadata's jvm_flags ({name, type, value, origin, kind} as granulate_utils' JvmFlag), here
  # the -Xmx64m of the command line among them.
  jvm_flags_of_col <out/last_profile.col >flags
  grep -qx 'MaxHeapSize size_t 67108864 command line product' flags || fail "$(cat flags)"
  ! grep -q ' default [a-zA-Z0-9_,]*$' flags || fail "$(cat flags)"
  sort -c -k1,1 flags || fail "not sorted: $(cat flags)"
}

@test "--java-line-numbers line-of-function, --java-collect-thread-names, --java-collect-jvm-flags LIST under JFR" {
  require_jdk
  start_fibonacci_jvm
  run -0 --separate-stderr timeout -s KILL 180 gp-profile -d 12 -o out --pids "$JVM_PID" \
    --java-mode jfr --perf-mode disabled --no-flamegraph --java-line-numbers line-of-function \
    --java-collect-thread-names --java-collect-jvm-flags MaxHeapSize,NoSuchFlag
  [[ "$stderr" != *"session 1: 0 samples"* ]] || fail "no JFR sample in 12 s: $stderr"
  # --java-collect-jvm-flags with names: those of them the JVM has, only.
  jvm_flags_of_col <out/last_profile.col >flags
  [ "$(cat flags)" = "MaxHeapSize size_t 67108864 command line product" ] || fail "$(cat flags)"
  [[ "$stderr" != *"not implemented"* ]] || fail "$stderr"
  # Line numbers: gProfiler tests/test_java.py, test_including_line_numbers, expects
  # "Fibonacci.fibonacci:20(I)J_[j]" of its Fibonacci.java, whose fibonacci is at line 20 (java.py
  # passes 'includeln' to its async-profiler: the frame's line after the method's name); ours is
  # at line 7 (tests/fixtures/runtime/java/Fibonacci.java), main's loop at line 14.
  # Thread names: java.py passes 'threads', and async-profiler's frameName.cpp roots each stack at
  # "[<thread name> tid=<tid>]" (Granulate/async-profiler); JFR's main thread is "main".
  local main
  main=$(grep -oE ';\[main tid=[0-9]+\];Fibonacci\.main:14\(\[Ljava/lang/String\|\)V_\[j\];Fibonacci\.fibonacci:7\(I\)J_\[[ji]\]' \
    out/last_profile.col | head -1)
  [ -n "$main" ] || fail "$(grep Fibonacci out/last_profile.col | head -5)"
  local tid=${main#;\[main tid=}
  tid=${tid%%]*}
  [ -d "/proc/$JVM_PID/task/$tid" ] || fail "tid $tid is not a thread of $JVM_PID"
  # Every Java frame of the program names its line; every stack starts with its thread.
  run -1 grep -E ';Fibonacci\.[a-z]+\(' out/last_profile.col
  run -1 grep -vE '^#|;\[[^];]* tid=[0-9]+\];' out/last_profile.col
}

@test "--java-jattach-timeout: a JVM that does not answer jcmd is given up after that many seconds" {
  require_jdk
  start_fibonacci_jvm
  kill -STOP "$JVM_PID"  # attach never answers
  # A 6 s session: without the option (30 s) the session's end cuts jcmd short, unreported.
  run --separate-stderr timeout -s KILL 120 gp-profile -d 6 -o out --pids "$JVM_PID" \
    --java-mode jfr --perf-mode disabled --no-flamegraph --java-jattach-timeout 2
  kill -CONT "$JVM_PID"
  [[ "$stderr" == *"jcmd JFR.start: jcmd killed by signal 9 (timed out after 2 s)"* ]] ||
    fail "$stderr"
}

# A JDK whose release file says 1.8.0_100 (too old for JFR, which came with 8u262) around this
# host's JVM: its own copy of the java launcher (the JVM's /proc/PID/exe, where gp looks for the
# JDK's release file), the real JDK's libraries.
make_old_jdk() {
  local real
  real=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
  mkdir -p oldjdk/bin
  cp "$real/bin/java" oldjdk/bin/java
  ln -s "$real/lib" oldjdk/lib
  ln -s "$real/conf" oldjdk/conf
  printf 'JAVA_VERSION="1.8.0_100"\n' >oldjdk/release
}

@test "--java-no-version-check: a JVM too old for JFR is skipped, as gProfiler's version check, unless given" {
  require_jdk
  make_old_jdk
  oldjdk/bin/java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >jvm.out &
  JVM_PID=$!
  PIDS+=("$JVM_PID")
  wait_for 60 grep -q ready jvm.out
  # gProfiler's _profiling_skipped_profile("profiling this JVM is not supported") for a JVM its
  # check refuses (gprofiler/profilers/java.py, _is_jvm_profiling_supported); gp-runtime is then
  # left with no profile.
  run --separate-stderr timeout -s KILL 120 gp-profile -d 2 -o out --pids "$JVM_PID" \
    --java-mode jfr --perf-mode disabled --no-flamegraph
  [[ "$stderr" == *"JVM $JVM_PID is not profiled: JFR needs JDK 8u262 or 11+ (its JDK's release file says 8u100) (--java-no-version-check to profile it anyway)"* ]] ||
    fail "$stderr"
  [[ "$stderr" == *"[Profiling skipped: profiling this JVM is not supported]"* ]] || fail "$stderr"
  # With the option it is attached to, and JFR (which this JVM has) profiles it.
  run -0 --separate-stderr timeout -s KILL 180 gp-profile -d 12 -o out --pids "$JVM_PID" \
    --java-mode jfr --perf-mode disabled --no-flamegraph --java-no-version-check
  [[ "$stderr" != *"not supported"* ]] || fail "$stderr"
  run -0 grep -c ';Fibonacci.fibonacci(I)J_\[[ji]\]' out/last_profile.col
}

# gp-profile --continuous -d $1 over the test's JVMs (JVMS, else A and B) with more options, in the background
# (teardown kills it).
start_continuous_java() {
  local d=$1
  shift
  gp-profile -c -d "$d" -o out --pids "${JVMS:-$A,$B}" --java-mode jfr \
    --perf-mode disabled --no-flamegraph "$@" 2>gp.err &
  GP_PID=$!
  PIDS+=("$GP_PID")
}

# Starts two Fibonacci JVMs (A, B) in this directory, and crashes A with SIGSEGV once gp's JFR
# recording runs in it: HotSpot writes hs_err_pid<A>.log here and aborts.
start_two_jvms() {
  java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >a.out &
  A=$!
  java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >b.out &
  B=$!
  PIDS+=("$A" "$B")
  wait_for 60 grep -q ready a.out
  wait_for 60 grep -q ready b.out
}
col_count() { find out -name 'profile_*.col' | wc -l; }
more_cols_than() { [ "$(col_count)" -gt "$1" ]; }
recording_name() { jcmd "$JVM_PID" JFR.check 2>/dev/null | grep -o 'gp-runtime-[0-9-]*' | head -1; }
recording_other_than() { local name; name=$(recording_name) && [ -n "$name" ] && [ "$name" != "$1" ]; }
crash_a_while_recorded() {
  JVM_PID=$A
  wait_for 90 recording
  # Crashed as a session starts (each gp-runtime names its recording), so that it goes down
  # during that session: gProfiler too reads the hs_err file of a JVM that went down while
  # profiled, and one that dies between sessions is not profiled again.
  local first
  first=$(recording_name)
  wait_for 90 recording_other_than "$first"
  kill -SEGV "$A"
  wait_for 30 test -s "hs_err_pid$A.log"
}

@test "--java-safemode: a profiled JVM that crashed with an hs_err file turns Java profiling off, its excerpt logged" {
  require_jdk
  run -2 --separate-stderr gp-profile --java-safemode hserr,bogus -d 1
  [[ "$stderr" == *"unknown options given in Java safemode: ['bogus']"* ]] || fail "$stderr"
  start_two_jvms
  # hserr alone: with gProfiler's default (profiled-oom,profiled-signaled,hserr), the JVM's
  # SIGABRT exit after its hs_err file is profiled-signaled, seen first.
  WAIT_FOR_SHOW=gp.err
  start_continuous_java 4 --java-safemode hserr
  crash_a_while_recorded
  # The sessions after the crash: every JVM "[Profiling skipped: disabled due to hserr]", as
  # gProfiler's _profiling_skipped_profile(f"disabled due to {reason}").
  wait_for 120 grep -q 'Profiling skipped: disabled due to hserr' gp.err
  kill -TERM "$GP_PID"
  wait "$GP_PID" || true
  grep -q "gp-profile: warning: Found HotSpot error log of JVM $A: $PWD/hs_err_pid$A.log$" gp.err ||
    fail "$(cat gp.err)"
  grep -q 'Java profiling has been disabled, will avoid profiling any new java processes (safemode cause: hserr)' gp.err ||
    fail "$(cat gp.err)"
  # gProfiler's excerpt (_check_hotspot_error): the siginfo of the kill, the problematic frame,
  # vm_info's line; not the rest of the file.
  grep -q 'gp-profile: warning: siginfo: si_signo: 11 (SIGSEGV), si_code: 0 (SI_USER)' gp.err ||
    fail "$(cat gp.err)"
  grep -q 'gp-profile: warning: VM info: OpenJDK 64-Bit Server VM' gp.err || fail "$(cat gp.err)"
  grep -qE 'gp-profile: warning: Problematic frame: [A-Za-z] +\[' gp.err || fail "$(cat gp.err)"
  ! grep -q 'S Y S T E M' gp.err || fail "the whole hs_err file was logged"
  [ "$(grep -c 'gp-profile: warning: Found HotSpot error log' gp.err)" -eq 1 ] || fail "$(cat gp.err)"
}

# Makes the test's memory cgroup MEMCG, its limit $1: memory.max where cgroup v2 has the memory
# controller, else cgroup v1's memory.limit_in_bytes.
make_memory_cgroup() {
  local v2 v1
  v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  if [ -n "$v2" ] && grep -qw memory "$v2/cgroup.controllers"; then
    grep -qw memory "$v2/cgroup.subtree_control" || echo +memory >"$v2/cgroup.subtree_control"
    MEMCG="$v2/gp-test-$$-$BATS_TEST_NUMBER"
    mkdir "$MEMCG"
    echo "$1" >"$MEMCG/memory.max"
    echo 0 >"$MEMCG/memory.swap.max" 2>/dev/null || true
  else
    v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
    [ -n "$v1" ] || skip "no memory cgroup controller"
    MEMCG="$v1/gp-test-$$-$BATS_TEST_NUMBER"
    mkdir "$MEMCG"
    echo "$1" >"$MEMCG/memory.limit_in_bytes"
  fi
}

@test "--java-safemode: a profiled JVM the kernel OOM-kills turns Java profiling off (profiled-oom)" {
  require_jdk
  make_memory_cgroup 150M
  # A: Alloc in the cgroup, its 300-MiB young generation filled once it allocates (./go), past
  # the cgroup's 150 MiB: the kernel's OOM killer kills it (SIGKILL, no hs_err file). B: a JVM
  # outside, profiled until Java profiling is off.
  sh -c 'echo $$ >"$1/cgroup.procs" && exec java -Xms400m -Xmx400m -Xmn300m -XX:+UseSerialGC \
    -cp "$2" Alloc "$3/go" "$3/allocated"' - "$MEMCG" "$JAVA_CLASSES" "$PWD" >a.out &
  A=$!
  java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >b.out &
  B=$!
  PIDS+=("$A" "$B")
  wait_for 60 grep -q ready a.out
  wait_for 60 grep -q ready b.out
  WAIT_FOR_SHOW=gp.err
  start_continuous_java 4
  JVM_PID=$A
  wait_for 90 recording
  touch go
  # gProfiler's warning when the kernel log names a profiled pid's OOM kill, and from the next
  # session every JVM skipped.
  wait_for 60 grep -q "gp-profile: warning: Profiled Java process OOM (pid $A, comm java)" gp.err
  wait_for 120 grep -q 'Profiling skipped: disabled due to profiled-oom' gp.err
  kill -TERM "$GP_PID"
  wait "$GP_PID" || true
  grep -q 'Java profiling has been disabled, will avoid profiling any new java processes (safemode cause: profiled-oom)' gp.err ||
    fail "$(cat gp.err)"
  [ ! -e "hs_err_pid$A.log" ] || fail "the JVM wrote an hs_err file"
  [ ! -e allocated ] || fail "the JVM was not OOM-killed"
}

@test "--java-safemode: a profiled JVM killed by SIGKILL turns Java profiling off (profiled-signaled), by SIGTERM not" {
  require_jdk
  start_two_jvms
  java -Xmx64m -cp "$JAVA_CLASSES" Fibonacci >c.out &
  C=$!
  PIDS+=("$C")
  wait_for 60 grep -q ready c.out
  JVMS="$A,$B,$C"
  WAIT_FOR_SHOW=gp.err
  start_continuous_java 4
  # SIGTERM: the JVM exits 143, which gProfiler reads as SIGTERM and logs; not a fatal signal
  # (is_java_fatal_signal: SIGABRT, SIGKILL, SIGSEGV).
  JVM_PID=$A
  wait_for 90 recording
  kill -TERM "$A"
  wait_for 30 grep -q "async-profiled Java process exited with signal (pid $A, signal 15)" gp.err
  # The watch has decided once it logged the exit; the end of the session says what it did.
  local before
  before=$(col_count)
  wait_for 120 more_cols_than "$before"
  ! grep -q 'disabled due to\|Java profiling has been disabled' gp.err || fail "$(cat gp.err)"
  # SIGKILL (a user's kill -9, or the OOM killer's): HotSpot cannot catch it, no hs_err file.
  JVM_PID=$B
  wait_for 90 recording
  kill -KILL "$B"
  wait_for 30 grep -q "async-profiled Java process exited with signal (pid $B, signal 9)" gp.err
  wait_for 120 grep -q 'Profiling skipped: disabled due to profiled-signaled' gp.err
  kill -TERM "$GP_PID"
  wait "$GP_PID" || true
  grep -q 'Java profiling has been disabled, will avoid profiling any new java processes (safemode cause: profiled-signaled)' gp.err ||
    fail "$(cat gp.err)"
  [ ! -e "hs_err_pid$B.log" ] || fail "the JVM wrote an hs_err file"
}

@test "--java-safemode '' --java-full-hserr: the whole hs_err file is logged and Java profiling goes on" {
  require_jdk
  start_two_jvms
  WAIT_FOR_SHOW=gp.err
  start_continuous_java 8 --java-safemode '' --java-full-hserr
  crash_a_while_recorded
  wait_for 120 grep -q "Found HotSpot error log of JVM $A" gp.err
  # A session that starts after the crash profiles B.
  local before
  before=$(col_count)
  wait_for 120 more_cols_than "$before"
  kill -TERM "$GP_PID"
  wait "$GP_PID" || true
  ! grep -q 'disabled due to\|Java profiling has been disabled' gp.err || fail "$(cat gp.err)"
  grep -q ';Fibonacci.fibonacci(I)J_\[[ji]\]' "$(ls -t out/profile_*.col | head -1)" || fail "$(cat gp.err)"
  # The whole file: its system section too, as gProfiler logs it with --java-full-hserr.
  grep -q -- 'gp-profile: warning: ---------------  S Y S T E M  ---------------' gp.err ||
    fail "$(head -50 gp.err)"
}

@test "--python-skip-pyperf-profiler-above: with more Python processes at start, no PyPerf, said so" {
  require_root_bpf
  require_command python3
  local i
  for i in 1 2; do
    python3 -c 'import time; time.sleep(600)' &
    PIDS+=($!)
    wait_for 10 grep -q python "/proc/$!/maps"
  done
  local gp_args=(-d 1 -o out --python-mode pyperf --no-java --no-php --no-ruby --no-flamegraph -vv)
  # gProfiler's python_ebpf.py counts the Python processes as PyPerf starts; above the threshold
  # it skips PyPerf, and under --python-mode pyperf has no py-spy to fall back on.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" \
    --python-skip-pyperf-profiler-above 1
  [[ "$stderr" =~ "warning: PyPerf skipped: "[0-9]+" Python processes exceed --python-skip-pyperf-profiler-above 1" ]] ||
    fail "$stderr"
  grep -q 'gp-record.* -d ' <<<"$stderr" || fail "no gp-record command line: $stderr"
  ! grep -q 'gp-record.*--python-frames' <<<"$stderr" || fail "$stderr"
  # Under the threshold PyPerf runs: gp-record walks Python frames.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" \
    --python-skip-pyperf-profiler-above 100000
  [[ "$stderr" != *"PyPerf skipped"* ]] || fail "$stderr"
  grep -q 'gp-record.*--python-frames' <<<"$stderr" || fail "$stderr"
}

# Runs SCRIPT (sh) in the test's cgroup NAME as a process whose comm is cg-NAME.
start_in_cgroup() {
  local name=$1 script=$2
  mkdir -p "$CGROUPS/$name"
  ln -sf "$(command -v sh)" "tmp/cg-$name"
  sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -c "$3"' - "$CGROUPS/$name" "$PWD/tmp/cg-$name" \
    "$script" &
  PIDS+=($!)
}

@test "--perf-use-cgroups --perf-max-cgroups 2: of three busy cgroups, only the two busiest are sampled" {
  require_root_bpf
  local v2
  v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
  [ -n "$v2" ] || skip "no cgroup v2 hierarchy"
  CGROUPS="$v2/gp-test-$$-$BATS_TEST_NUMBER"
  mkdir "$CGROUPS"
  local spin='while :; do :; done'
  # busy: two spinners; medium: one; light: one that spins a tenth of the time.
  start_in_cgroup busy "$spin"
  start_in_cgroup busy "$spin"
  start_in_cgroup medium "$spin"
  start_in_cgroup light 'while :; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; sleep 0.1; done'
  # The ranking covers every cgroup of the host: when another cgroup (another test's command,
  # on a loaded machine) used more CPU than medium in the ranking's window, it is rightly chosen
  # instead, and the test measures again, up to three times. Light is never chosen.
  local attempt chosen
  for attempt in 1 2 3; do
    rm -rf out
    run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 3 -o out --perf-use-cgroups \
      --perf-max-cgroups 2 --perf-mode fp --no-java --no-python --no-php --no-ruby \
      --no-flamegraph -v
    chosen=$(sed -n 's/.*session 1: sampling the 2 busiest cgroups: //p' <<<"$stderr")
    [ "$chosen" = "$CGROUPS/busy, $CGROUPS/medium" ] && break
    [[ "$chosen" == *"$CGROUPS/busy"* && "$chosen" != *"$CGROUPS/"*"$CGROUPS/"* ]] || fail "$stderr"
  done
  [ "$chosen" = "$CGROUPS/busy, $CGROUPS/medium" ] || fail "$stderr"
  # The .col's comm frames: both busiest cgroups' processes, nothing of the third or of any
  # process outside them.
  run -0 python3 -c '
import sys
comms = {line.split(";")[2] for line in open("out/last_profile.col").read().splitlines()[1:]}
print(" ".join(sorted(comms)))' 
  assert_output "cg-busy cg-medium"
}

@test "--log-usage: the CPU time and memory gp-profile and its children used, after each session" {
  require_root_bpf
  sh -c 'while :; do :; done' &
  local busy=$!
  PIDS+=("$busy")
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 1 -o out --pids "$busy" \
    --perf-mode fp --no-java --no-python --no-php --no-ruby --no-flamegraph --log-usage
  [[ "$stderr" =~ CPU\ usage\ this\ cycle:\ [0-9]+\.[0-9]{3}\ seconds\ [0-9.]+%\ \(gp-profile\ and\ its\ children\)\;\ memory\ usage:\ [0-9.]+\ MB ]] ||
    fail "$stderr"
}

# gp-profile's option table is generated from gProfiler's parser (scripts/gen-gprofiler-options.py
# reads tests/fixtures/gprofiler/options_source.py, an excerpt of gprofiler/main.py and
# gprofiler/profilers/*.py of the gProfiler version named in its header).
@test "the gProfiler option table is what scripts/gen-gprofiler-options.py generates" {
  run -0 python3 "$GP_SOURCE_DIR/scripts/gen-gprofiler-options.py" --check
  # A new option in gProfiler's parser reaches the table, with its group, default and help.
  cp "$GP_SOURCE_DIR/tests/fixtures/gprofiler/options_source.py" source.py
  cat >>source.py <<'PY'
# gprofiler/main.py:1
parser.add_argument("--new-thing", type=positive_integer, dest="new_thing", default=DEFAULT_PROFILING_DURATION,
                    help="A new option (default: %(default)s)")
PY
  run -1 python3 "$GP_SOURCE_DIR/scripts/gen-gprofiler-options.py" --check --excerpt source.py
  python3 "$GP_SOURCE_DIR/scripts/gen-gprofiler-options.py" --excerpt source.py --table table.inc \
    --safemode-causes causes.inc
  run -0 grep -A1 -- '"--new-thing"' table.inc
  assert_output "$(printf '%s\n%s' '{"", "", "--new-thing", "new_thing", "store", "", "positive_integer", true, "60", "", "",' \
    ' "A new option (default: 60)"},')"
}

@test "gp-profile takes every option of gProfiler's parser with its names and default" {
  run -0 --separate-stderr gp-profile --help
  local help=$output
  # The table's main-parser options: every name in the help, with gProfiler's default where gp
  # shows one of its own choosing nowhere else.
  run -0 python3 - "$GP_SOURCE_DIR/tools/gp-profile/gprofiler_options.inc" "$help" <<'PY'
import re, sys
table, help_text = open(sys.argv[1]).read(), sys.argv[2]
rows = re.findall(r'^\{"([^"]*)", "[^"]*", "([^"]*)", "[^"]*", "([^"]*)", "[^"]*", "[^"]*", (true|false), "([^"]*)"',
                  table, re.M)
missing = []
for sub, names, action, has_default, default in rows:
    if sub:
        continue
    for n in names.split(","):
        if not re.search(r"(^|[ ,])" + re.escape(n) + r"([ ,=\n]|$)", help_text, re.M):
            missing.append(n)
print(len(rows), "options;", "missing:", missing)
sys.exit(1 if missing else 0)
PY
  # An option gp has no code for is accepted as gProfiler's parser takes it, and refused as it
  # refuses it (here an integer_range of gProfiler's type= in the table).
  run -2 --separate-stderr gp-profile --java-async-profiler-mcache 300 -d 1 -o out
  [[ "$stderr" == *"argument --java-async-profiler-mcache: invalid integer value 300 (out of range 0-256)"* ]] ||
    fail "$stderr"
}

@test "--diagnostics: after the session, the running processes and the kernel log (-v)" {
  # gProfiler's log_diagnostics (gprofiler/diagnostics.py): "Running processes" (pid, ppid, comm,
  # exe, uids, threads, memory, cmdline of each) and "Kernel log" (dmesg -T | tail -n 100).
  require_root_bpf
  ln -sf "$(command -v sh)" tmp/diag-busy
  tmp/diag-busy -c 'while :; do :; done' &
  local busy=$! ppid
  PIDS+=("$busy")
  ppid=$(awk '/^PPid:/ { print $2 }' "/proc/$busy/status")
  local gp_args=(-d 1 -o out --pids "$busy" --perf-mode fp --no-java --no-python --no-php
    --no-ruby --no-flamegraph -v)
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" --diagnostics
  [[ "$stderr" == *"Running processes:"* && "$stderr" == *"Kernel log:"* ]] || fail "$stderr"
  grep -qE "gp-profile: info: pid=$busy ppid=$ppid comm='diag-busy' exe='/[^']*' uid=0 threads=1 rss_kb=[0-9]+ cmdline='tmp/diag-busy -c while :; do :; done'\$" <<<"$stderr" ||
    fail "$stderr"
  # Without the option: neither.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}"
  [[ "$stderr" != *"Running processes:"* && "$stderr" != *"Kernel log:"* ]] || fail "$stderr"
}

@test "--hw-events-file: --perf-event NAME samples the file's raw event for this host's platform" {
  # gProfiler's hw_events.py: a custom event's entry has a raw event per CPU platform (ICX, SPR,
  # EMR, GNR, or UNKNOWN for any other CPU). software/config=1/ (task-clock through the software
  # PMU) opens on any host, VM or not, and takes no precise modifier.
  require_root_bpf
  sh -c 'while :; do :; done' &
  local busy=$!
  PIDS+=("$busy")
  local raw='{"raw": "software/config=1/"}'
  cat >events.json <<JSON
{"_comment": "custom events", "busy_clock": {"ICX": $raw, "SPR": $raw, "EMR": $raw, "GNR": $raw, "UNKNOWN": $raw},
 "elsewhere_only": {"XYZ": {"raw": "r01b7"}}, "no_raw": {"ICX": {}, "SPR": {}, "EMR": {}, "GNR": {}, "UNKNOWN": {}}}
JSON
  run -0 --separate-stderr timeout -s KILL 120 gp-profile -d 2 -o out --pids "$busy" \
    --perf-event busy_clock --hw-events-file events.json --no-flamegraph -vv
  grep -q 'gp-record .*-e software/config=1/ ' <<<"$stderr" || fail "$stderr"
  head -1 out/last_profile.col | grep -q '"sampling_event": "software/config=1/"' ||
    fail "$(head -c 2000 out/last_profile.col)"
  grep -q ';sh;' out/last_profile.col || fail "no sample of the busy sh: $(cat out/last_profile.col)"
  # gProfiler's refusals: a name in neither list, a platform the entry lacks, an entry without raw.
  local args=(-d 1 -o out --hw-events-file events.json)
  run -2 --separate-stderr gp-profile "${args[@]}" --perf-event nosuch
  [[ "$stderr" == *"vent 'nosuch' not found in perf built-in events or custom events file (events.json). Available custom events: ['busy_clock', 'elsewhere_only', 'no_raw']"* ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile "${args[@]}" --perf-event elsewhere_only
  [[ "$stderr" =~ "ustom event 'elsewhere_only' not supported on platform '"[A-Z]+"'. Supported platforms: ['XYZ']" ]] || fail "$stderr"
  run -2 --separate-stderr gp-profile "${args[@]}" --perf-event no_raw
  [[ "$stderr" == *"ustom event 'no_raw' missing 'raw' field for platform"* ]] || fail "$stderr"
}

@test "--perf-dwarf-stack-size: gp-record copies that many bytes of the stacks it copies" {
  require_root_bpf
  sh -c 'while :; do :; done' &
  local busy=$!
  PIDS+=("$busy")
  local gp_args=(-d 1 -o out --pids "$busy" --no-java --no-python --no-php --no-ruby
    --no-flamegraph -vv)
  # (gp-record --unwind-copy-size's own test, in gp-record-unwind.bats, checks the copies.)
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" --perf-dwarf-stack-size 1024
  grep -q 'gp-record .*--unwind-copy-size 1024' <<<"$stderr" || fail "$stderr"
  # gProfiler's largest (65528) is more than gp-record copies: said, and its largest used.
  run -0 --separate-stderr timeout -s KILL 120 gp-profile "${gp_args[@]}" --perf-dwarf-stack-size 65528
  [[ "$stderr" == *"warning: --perf-dwarf-stack-size 65528: gp-record copies 512 to 16384 bytes of stack; it copies 16384"* ]] ||
    fail "$stderr"
  grep -q 'gp-record .*--unwind-copy-size 16384' <<<"$stderr" || fail "$stderr"
  run -2 --separate-stderr gp-profile -d 1 -o out --perf-dwarf-stack-size 65529
  [[ "$stderr" == *"--perf-dwarf-stack-size maximum size is 65528"* ]] || fail "$stderr"
}

@test "--perf-no-memory-restart: a continuous gp-record over the memory limit is started again, unless given" {
  # gProfiler restarts perf when it has run an hour and holds 512 MiB; the test lowers both
  # (GP_PROFILE_RECORD_MEMORY_LIMIT=MIB,SECONDS) so that gp-record is over them at once.
  require_root_bpf
  sh -c 'while :; do :; done' &
  local busy=$!
  PIDS+=("$busy")
  local gp_args=(-c -d 1 -o out --pids "$busy" --no-java --no-python --no-php --no-ruby
    --no-flamegraph)
  # The controller process exits once two sessions are written: gp-profile then stops.
  local two_sessions='until [ "$(ls out/profile_*.col 2>/dev/null | wc -l)" -ge 2 ]; do sleep 0.1; done'
  bash -c "$two_sessions" &
  run -0 --separate-stderr env GP_PROFILE_RECORD_MEMORY_LIMIT=1,0 timeout -s KILL 120 \
    gp-profile "${gp_args[@]}" --controller-pid $!
  [[ "$stderr" =~ "warning: restarting gp-record: its memory exceeds the limit (resident "[0-9]+" MiB, limit 1 MiB, after 0 s" ]] ||
    fail "$stderr"
  [[ "$stderr" == *"session 2: "* ]] || fail "no second session: $stderr"
  rm -r out
  bash -c "$two_sessions" &
  run -0 --separate-stderr env GP_PROFILE_RECORD_MEMORY_LIMIT=1,0 timeout -s KILL 120 \
    gp-profile "${gp_args[@]}" --controller-pid $! --perf-no-memory-restart
  [[ "$stderr" == *"session 2: "* ]] || fail "no second session: $stderr"
  [[ "$stderr" != *"restarting gp-record"* ]] || fail "$stderr"
}
