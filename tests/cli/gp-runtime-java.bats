#!/usr/bin/env bats
# gp-runtime's Java adapters end to end: a real JVM running tests/fixtures/runtime/java/Main.java
# (Main.main -> Main.work -> Main.spin), profiled through JFR (the JDK's jcmd and jfr), folded
# by gp-fold and merged into a gp-record session by gp-merge. Sessions are long (20 s): attaching
# (jcmd starts a JVM of its own) takes seconds on a loaded CI host and eats into the session.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
  command -v javac >/dev/null || skip "javac is missing (scripts/install-deps.sh --test installs the JDK)"
  export JAVA_CLASSES="$BATS_FILE_TMPDIR/classes"
  mkdir -p "$JAVA_CLASSES"
  javac -d "$JAVA_CLASSES" "$GP_SOURCE_DIR/tests/fixtures/runtime/java/Main.java"
}

setup() {
  cd "$BATS_TEST_TMPDIR"
  require_command java
  require_command jcmd
}

teardown() {
  [ -n "${JVM_PID:-}" ] && kill -9 "$JVM_PID" 2>/dev/null
  wait 2>/dev/null || true
}

# Starts Main in the background (extra args: its own), and waits for its "ready" line.
start_jvm() {
  # DebugNonSafepoints: JFR attached at run time cannot walk code compiled without it (samples
  # of the hot C2 loop were dropped: 3 samples in 20 s); gp-runtime(1) tells users the same.
  java -Xmx64m -XX:+UseSerialGC -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
    -cp "$JAVA_CLASSES" Main "$@" > jvm.out &
  JVM_PID=$!
  for _ in $(seq 600); do
    grep -q ready jvm.out 2>/dev/null && return 0
    sleep 0.1
  done
  fail "the JVM did not start within 60 s"
}

@test "JFR mode shows the Java method chain with Java frame suffixes" {
  start_jvm
  run --separate-stderr gp-runtime --java-mode jfr -p "$JVM_PID" -d 20 -F 50 -o rt.gpa
  assert_success
  run --separate-stderr gp-fold rt.gpa
  assert_success
  assert_output --regexp ';java;(appid: [^;]*;)?Main\.main\(\[Ljava/lang/String\|\)V_\[j\];Main\.work\(\)V_\[j\](;| )'
  assert_output --partial ';Main.work()V_[j];Main.spin(J)J_['
  kill -0 "$JVM_PID"
  run jcmd "$JVM_PID" JFR.check
  refute_output --partial 'gp-runtime'
}

@test "a JVM that exits mid-session gets the error frame, and the run succeeds (churn)" {
  start_jvm 3
  run --separate-stderr gp-runtime --java-mode jfr -p "$JVM_PID" -d 15 -o rt.gpa
  assert_success
  [[ "$stderr" == *"exited during the session"*"[Profiling error: process went down during profiling]"* ]] || fail "stderr: $stderr"
  [[ "$stderr" != *"warning"* ]] || fail "churn was a warning: $stderr"
  run --separate-stderr gp-fold rt.gpa
  assert_success
  assert_output --regexp ';java;(appid: [^;]*;)?\[Profiling error: process went down during profiling\] 1$'
}

@test "two overlapping sessions never profile each other's jcmd and jfr, and both get the JVM" {
  start_jvm
  local only_java=(--java-mode jfr --no-python --no-ruby --no-nodejs -F 50)
  # 10-s sessions: on a loaded host attaching to a JVM (and to another test's) takes seconds.
  gp-runtime "${only_java[@]}" -d 10 -o a.gpa 2> a.err &
  local a=$!
  # The second starts while the first attaches (its jcmd runs) and scans the whole system too.
  for _ in $(seq 100); do pgrep -x jcmd >/dev/null && break; sleep 0.1; done
  gp-runtime "${only_java[@]}" -d 10 -o b.gpa 2> b.err &
  local b=$!
  local sa=0 sb=0
  wait "$a" || sa=$?
  wait "$b" || sb=$?
  [ "$sa" -eq 0 ] || fail "first run exited $sa: $(cat a.err)"
  [ "$sb" -eq 0 ] || fail "second run exited $sb: $(cat b.err)"
  ! grep -E '\((jcmd|jfr|jps|jstack)\)' a.err b.err || fail "a JDK tool was profiled"
  for f in a b; do
    run -0 gp-fold -f folded "$f.gpa"
    [[ "$output" == *'Main.work()V'* ]] || fail "no Main.work()V in $f.gpa: $output
$(cat "$f.err")"
    refute_line --regexp '^(jcmd|jfr);'
  done
}

@test "a gp-runtime killed with SIGKILL leaves its JVM directory; the next run removes it" {
  start_jvm
  local pattern="/tmp/gp-jfr-$JVM_PID-r*"
  gp-runtime --java-mode jfr -p "$JVM_PID" -d 60 -o killed.gpa 2>killed.err &
  local rt=$!
  for _ in $(seq 600); do
    compgen -G "$pattern" >/dev/null && break
    sleep 0.1
  done
  compgen -G "$pattern" >/dev/null || fail "no JVM directory: $(cat killed.err)"
  sleep 1
  kill -KILL "$rt"
  wait "$rt" || true
  local left
  left=$(compgen -G "$pattern")
  [ -d "$left" ] || fail "nothing left over to clean: $left"
  run --separate-stderr gp-runtime --java-mode jfr -p "$JVM_PID" -d 3 -o next.gpa
  [ ! -e "$left" ] || fail "the killed run's '$left' is still there"
  run compgen -G "$pattern"
  assert_output ""
}

@test "a second SIGINT ends gp-runtime by the signal, and it removes its directories first" {
  start_jvm
  mkdir tmp
  local pattern="/tmp/gp-jfr-$JVM_PID-r*"
  TMPDIR="$BATS_TEST_TMPDIR/tmp" gp-runtime --java-mode jfr -p "$JVM_PID" -d 60 -o int.gpa 2>int.err &
  local rt=$!
  for _ in $(seq 600); do
    compgen -G "$pattern" >/dev/null && break
    sleep 0.1
  done
  compgen -G "$pattern" >/dev/null || fail "no JVM directory: $(cat int.err)"
  [ -n "$(ls -A tmp)" ] || fail "no work directory"
  sleep 1
  # The first asks it to stop (JFR.stop through jcmd takes a while); the second kills it.
  kill -INT "$rt"
  sleep 0.3
  kill -INT "$rt"
  local status=0
  wait "$rt" || status=$?
  assert_equal "$status" 130
  run compgen -G "$pattern"
  assert_output ""
  run ls -A tmp
  assert_output ""
}

@test "ap mode without async-profiler installed skips the JVM with gProfiler's frame" {
  command -v asprof >/dev/null && skip "async-profiler is installed here"
  start_jvm
  run --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 2 -o rt.gpa
  assert_failure 1
  [[ "$stderr" == *"[Profiling skipped: async-profiler is not installed"* ]] || fail "stderr: $stderr"
  run --separate-stderr gp-fold rt.gpa
  assert_success
  assert_output --regexp ';java;(appid: [^;]*;)?\[Profiling skipped: async-profiler is not installed \(no asprof or profiler\.sh on PATH\)\] 1$'
}

@test "--app-id-args-filter: the Java appid names the JVM options that match, as gProfiler's" {
  command -v asprof >/dev/null && skip "async-profiler is installed here"
  start_jvm
  # ap without asprof: a skip frame at once, the process (and its appid) recorded all the same.
  run --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 1 -o rt.gpa \
    --app-id-args-filter 'Xmx' --app-id-args-filter '^-XX:\+UseSerial'
  run -0 --separate-stderr gp-fold rt.gpa
  assert_output --partial ';java;appid: java: Main (-Xmx64m -XX:+UseSerialGC);'
  run -2 --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 1 -o rt.gpa --app-id-args-filter '(x'
  [[ "$stderr" == *"invalid regex '(x'"* ]] || fail "$stderr"
}

@test "gp-merge puts the JFR stacks in place of the JVM's native stacks of gp-record" {
  require_root_bpf
  start_jvm
  gp-record -p "$JVM_PID" -d 25 -o sys.gpa 2>/dev/null &
  local rec=$!
  gp-runtime --java-mode jfr -p "$JVM_PID" -d 20 -F 50 -o rt.gpa
  wait "$rec"
  run --separate-stderr bash -c "gp-merge sys.gpa rt.gpa | gp-fold"
  assert_success
  assert_output --partial ';Main.work()V_[j]'
}

@test "--java-collect-spark-app-name-as-appid: a Spark executor's appid ends with its Spark application's name, as gProfiler's" {
  # gProfiler's _JavaSparkApplicationIdentifier: a JVM with an argument naming
  # org.apache.spark.executor reads spark.app.name from the properties Spark writes in its working
  # directory; the appid joins the Java one and it with ", ".
  mkdir __spark_conf__
  printf '# Spark properties\nspark.master=yarn\nspark.app.name=nightly-etl\n' \
    >__spark_conf__/__spark_conf__.properties
  start_jvm 600 org.apache.spark.executor.CoarseGrainedExecutorBackend
  # ap, with or without asprof: the process and its appid are recorded either way.
  run --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 1 -o rt.gpa \
    --java-collect-spark-app-name-as-appid
  run -0 --separate-stderr gp-fold rt.gpa
  assert_output --partial ';java;appid: java: Main, spark: nightly-etl;'
  # Without the option: the Java appid alone.
  run --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 1 -o rt.gpa
  run -0 --separate-stderr gp-fold rt.gpa
  assert_output --partial ';java;appid: java: Main;'
  # No properties file: gProfiler's "app name not found".
  rm -r __spark_conf__
  run --separate-stderr gp-runtime --java-mode ap -p "$JVM_PID" -d 1 -o rt.gpa \
    --java-collect-spark-app-name-as-appid
  run -0 --separate-stderr gp-fold rt.gpa
  assert_output --partial ';java;appid: java: Main, app name not found;'
  # gp-profile passes the option on to gp-runtime (whose profile, ap without asprof, may fail).
  if [ "$(id -u)" -eq 0 ]; then
    run --separate-stderr timeout -s KILL 120 gp-profile -d 1 -o out --pids "$JVM_PID" \
      --perf-mode disabled --java-mode ap --no-flamegraph --java-collect-spark-app-name-as-appid -vv
    grep -q 'gp-runtime .*--java-collect-spark-app-name-as-appid' <<<"$stderr" || fail "$stderr"
  fi
}
