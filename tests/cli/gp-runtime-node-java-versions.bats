#!/usr/bin/env bats
# gp-runtime's Node and Java adapters across the versions a fleet runs: Node 12 (bullseye), 18
# (bookworm), 20 (trixie), 24 (sid); OpenJDK 8 (sid), 11 (bullseye), 17 (this host), 21 and 25
# (trixie). Each runs a known call chain (tests/fixtures/runtime/versions/chain.js, Chain.java)
# that writes what the runtime itself reports for it (`new Error().stack`,
# Thread.getStackTrace()); gp's frames must say the same.
# The other suites' runtimes run as they do in production, in containers: their own root
# (scripts/debian-root.sh, cached under /var/cache/gp/roots), mount and pid namespaces
# (unshare --mount --pid --fork --mount-proc chroot ROOT ...), profiled from the host by host pid: Node
# through the inspector (V8's own sampler), Java through JFR driven by this host's jcmd.
# bats file_tags=gp-runtime,node,java,root

load helpers
bats_require_minimum_version 1.5.0

# The roots are made (or found in the cache) once per run, the four suites in parallel.
setup_file() {
  make_roots "bullseye nodejs openjdk-11-jdk-headless" \
    "trixie nodejs openjdk-21-jdk-headless openjdk-25-jdk-headless" \
    "sid nodejs openjdk-8-jdk-headless" "bookworm nodejs"
  # Compiled once, for Java 8: every JDK of the matrix runs the same class file.
  if command -v javac >/dev/null; then
    mkdir -p "$BATS_FILE_TMPDIR/classes"
    javac --release 8 -d "$BATS_FILE_TMPDIR/classes" \
      "$GP_SOURCE_DIR/tests/fixtures/runtime/versions/Chain.java" 2>"$BATS_FILE_TMPDIR/javac.err"
  fi
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (chroot, unshare, attaching to other processes)"
  OUT="$BATS_TEST_TMPDIR"
  RUN_ADAPTER="$GP_BUILD_DIR/tests/gp_node_adapter_run"
  UNSHARE_PID=
  TARGET_PID=
  JOB_DIR=
}

teardown() {
  end_container "$TARGET_PID" "$UNSHARE_PID"
  [ -n "$JOB_DIR" ] && rm -rf "$JOB_DIR"
  return 0
}

# in_root ROOT COMMAND...: COMMAND in new mount and pid namespaces chrooted to ROOT, with a /proc
# of its own as a container has (java finds its libraries through /proc/self/exe).
in_root() {
  local root="$1"
  shift
  unshare --mount --pid --fork --mount-proc="${root%/}/proc" chroot "$root" "$@"
}

# start_in ROOT FILE... -- COMMAND...: copies FILEs into a new directory of ROOT's /tmp (JOB_DIR;
# INNER is its path as the target sees it), runs COMMAND (with @INNER@ replaced) in new mount and
# pid namespaces chrooted to ROOT (ROOT "/": on the host as it is), and waits for "ready" on
# its stdout ($OUT/target.out). Sets TARGET_PID, the runtime's pid as the host numbers it.
start_in() {
  local root="$1" arg cmd=()
  shift
  JOB_DIR=$(mktemp -d "${root%/}/tmp/gp-versions-XXXXXX")
  chmod 755 "$JOB_DIR"
  INNER="${JOB_DIR#"${root%/}"}"
  while [ "$1" != -- ]; do cp -r "$1" "$JOB_DIR/"; shift; done
  shift
  for arg in "$@"; do cmd+=("${arg//@INNER@/$INNER}"); done
  if [ "$root" = / ]; then
    "${cmd[@]}" >"$OUT/target.out" 2>"$OUT/target.err" &
    TARGET_PID=$!
  else
    # unshare itself in the background (not in_root's subshell): its child is the runtime.
    unshare --mount --pid --fork --mount-proc="${root%/}/proc" chroot "$root" "${cmd[@]}" \
      >"$OUT/target.out" 2>"$OUT/target.err" &
    UNSHARE_PID=$!
  fi
  for _ in $(seq 600); do
    grep -q '^ready' "$OUT/target.out" 2>/dev/null && break
    sleep 0.1
  done
  grep -q '^ready' "$OUT/target.out" || fail "${cmd[*]} did not start: $(cat "$OUT/target.err")"
  if [ -n "$UNSHARE_PID" ]; then
    TARGET_PID=$(cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children")
    TARGET_PID=${TARGET_PID%% *}
    [ "$(awk '$1 == "NSpid:" { print $NF }' "/proc/$TARGET_PID/status")" = 1 ] ||
      fail "the runtime does not run in a pid namespace of its own"
  fi
}

# check_node SUITE MAJOR: chain.js under SUITE's node; gp's inspector frames are main;work;spin,
# each with the file Error().stack names and the first line of the function it is in.
check_node() {
  local suite="$1" major="$2" root expected=() name file line first
  root=$(root_of "$suite")
  [ -x "${root%/}/usr/bin/node" ] || fail "no node in the $suite root"
  run -0 in_root "$root" node --version
  assert_output --regexp "^v$major\."
  # No inlining, so that spin() keeps a frame of its own (its size alone did not keep node 12's
  # TurboFan from inlining it in one run of many).
  local opts=(--inspect-port=0 --no-turbo-inlining)
  start_in "$root" "$GP_SOURCE_DIR/tests/fixtures/runtime/versions/chain.js" -- \
    node "${opts[@]}" @INNER@/chain.js 60
  # What V8 reports, outermost first: "NAME@FILE:FIRST" with FIRST the line of NAME's
  # declaration at or above the line reported.
  while read -r _ name file line; do
    [ "$file" = "$INNER/chain.js" ] || fail "node reports file '$file' for $name"
    first=$(awk -v n="$name" -v l="$line" 'NR <= l && $0 ~ "^function " n "\\(" { f = NR } END { print f }' \
      "$JOB_DIR/chain.js")
    [ -n "$first" ] || fail "no declaration of $name above line $line"
    expected=("$name@$file:$first" "${expected[@]}")
  done < <(grep '^stack ' "$OUT/target.out")
  [ "${#expected[@]}" -eq 3 ] || fail "node reported: $(cat "$OUT/target.out")"
  run -0 env GP_ADAPTER_RUN_LOCATIONS=1 timeout -s KILL 60 "$RUN_ADAPTER" inspector "$TARGET_PID" 3 200
  local want
  want=$(IFS=';'; echo "${expected[*]}")
  # Node ≥ 14 names CommonJS scripts by file:// URL, node 12 by path.
  output=${output//file:\/\//}
  [[ "$output" == *"$want "[0-9]* ]] || fail "$(printf 'want %s in:\n%s' "$want" "$output")"
}

@test "node 12 (bullseye) in a container: inspector frames match Error().stack" {
  check_node bullseye 12
}

@test "node 18 (bookworm) in a container: inspector frames match Error().stack" {
  check_node bookworm 18
}

@test "node 20 (trixie) in a container: inspector frames match Error().stack" {
  check_node trixie 20
}

@test "node 24 (sid) in a container: inspector frames match Error().stack" {
  check_node sid 24
}

# check_java SUITE MAJOR JAVA: Chain under SUITE's JAVA (a path in its root); gp's JFR stacks
# hold Chain.main;Chain.work;Chain.spin, the methods Thread.getStackTrace() names, in its order.
check_java() {
  local suite="$1" major="$2" java="$3" root names=() name file
  [ -s "$BATS_FILE_TMPDIR/classes/Chain.class" ] || fail "Chain.java did not compile: $(cat "$BATS_FILE_TMPDIR/javac.err")"
  root=$(root_of "$suite")
  run -0 in_root "$root" "$java" -version
  assert_output --regexp "version \"(1\.)?$major[.\"]"
  start_in "$root" "$BATS_FILE_TMPDIR/classes" -- "$java" -Xmx64m -XX:+UseSerialGC \
    -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp @INNER@/classes Chain
  while read -r _ name file _; do
    [ "$file" = Chain.java ] || fail "the JVM reports file '$file' for $name"
    names=("$name" "${names[@]}")
  done < <(grep '^stack ' "$OUT/target.out")
  [ "${names[*]}" = "Chain.main Chain.work Chain.spin" ] || fail "the JVM reported: $(cat "$OUT/target.out")"
  run --separate-stderr timeout -s KILL 120 gp-runtime --java-mode jfr -p "$TARGET_PID" -d 20 -F 50 -o "$OUT/rt.gpa"
  [ "$status" -eq 0 ] || fail "gp-runtime exited $status: $stderr"
  run -0 --separate-stderr gp-fold -f folded "$OUT/rt.gpa"
  # Each method as JFR names it: NAME(DESCRIPTOR)RETURN (';' of descriptors shown as '|').
  local want="" n
  for n in "${names[@]}"; do
    want+="${want:+;}${n//./\\.}\\([^)]*\\)[^; ]*"
  done
  # One line of the chain; JFR may also have sampled the recording's own start (jcmd's thread).
  assert_line --regexp "(^|;)$want [0-9]+$"
}

@test "OpenJDK 8 (sid) in a container: JFR stacks match Thread.getStackTrace()" {
  check_java sid 8 /usr/lib/jvm/java-8-openjdk-amd64/bin/java
}

@test "OpenJDK 11 (bullseye) in a container: JFR stacks match Thread.getStackTrace()" {
  check_java bullseye 11 /usr/lib/jvm/java-11-openjdk-amd64/bin/java
}

@test "OpenJDK 17 (this host): JFR stacks match Thread.getStackTrace()" {
  require_command java
  check_java host 17 "$(readlink -f "$(command -v java)")"
}

@test "OpenJDK 21 (trixie) in a container: JFR stacks match Thread.getStackTrace()" {
  check_java trixie 21 /usr/lib/jvm/java-21-openjdk-amd64/bin/java
}

@test "OpenJDK 25 (trixie) in a container: JFR stacks match Thread.getStackTrace()" {
  check_java trixie 25 /usr/lib/jvm/java-25-openjdk-amd64/bin/java
}

@test "node 12 (bullseye) in a container that exits during the session: gProfiler's error frame" {
  start_in "$(root_of bullseye)" "$GP_SOURCE_DIR/tests/fixtures/runtime/versions/chain.js" -- \
    node --inspect-port=0 @INNER@/chain.js 3
  run -1 timeout -s KILL 60 "$RUN_ADAPTER" inspector "$TARGET_PID" 10
  assert_line "[Profiling error: process went down during profiling]"
}

@test "a program in a container that calls itself node but has no SIGUSR1 handler is named, not killed" {
  start_in "$(root_of bullseye)" -- /bin/sh -c 'cp /bin/sleep @INNER@/node && echo ready && exec @INNER@/node 60'
  # sh execs the copy: the pid is the same, its exe now the fake node.
  for _ in $(seq 50); do
    [[ "$(readlink "/proc/$TARGET_PID/exe")" == */node ]] && break
    sleep 0.1
  done
  run -1 timeout -s KILL 60 "$RUN_ADAPTER" inspector "$TARGET_PID" 2
  assert_line --partial "does not handle SIGUSR1"
  assert_line --partial "SIGUSR1 not sent"
  kill -0 "$TARGET_PID"
}

@test "OpenJDK 11 (bullseye) in a container that exits during the session: gProfiler's error frame" {
  [ -s "$BATS_FILE_TMPDIR/classes/Chain.class" ] || fail "Chain.java did not compile"
  start_in "$(root_of bullseye)" "$BATS_FILE_TMPDIR/classes" -- \
    /usr/lib/jvm/java-11-openjdk-amd64/bin/java -Xmx64m -cp @INNER@/classes Chain 4
  run --separate-stderr timeout -s KILL 120 gp-runtime --java-mode jfr -p "$TARGET_PID" -d 15 -o "$OUT/rt.gpa"
  assert_success
  [[ "$stderr" == *"[Profiling error: process went down during profiling]"* ]] || fail "stderr: $stderr"
  run -0 --separate-stderr gp-fold -f folded "$OUT/rt.gpa"
  assert_output --regexp '(^|;)java;(appid: [^;]*;)?\[Profiling error: process went down during profiling\] 1$'
}
