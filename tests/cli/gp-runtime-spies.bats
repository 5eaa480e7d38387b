#!/usr/bin/env bats
# gp-runtime's Ruby support end to end with rbspy (--ruby-mode rbspy) on a live Ruby process.
# rbspy is not installable on the build machines, so a stand-in rbspy goes first on PATH
# (tests/fixtures/runtime/spies/fake-rbspy): it refuses any command but gProfiler's
#   rbspy record --silent -r HZ -d SECONDS --nonblocking --oncpu --format=collapsed
#         --file OUT --raw-file /dev/null -p PID
# and writes rbspy's documented collapsed output (tests/fixtures/runtime/spies/rbspy_collapsed.txt)
# to OUT. gp-fold must then show the frames with gProfiler's "_[rb]" suffix. Without rbspy, the
# process gets gProfiler's skip frame and a per-process line on stderr.
# bats file_tags=gp-runtime,ruby

load helpers
bats_require_minimum_version 1.5.0

setup() {
  require_command ruby
  OUT="$BATS_TEST_TMPDIR"
  FIXTURES="$GP_SOURCE_DIR/tests/fixtures/runtime/spies"
  ruby -e 'loop { 2 ** 64 }' &
  RB_PID=$!
}

teardown() {
  kill -KILL "$RB_PID" 2>/dev/null || true
  wait "$RB_PID" 2>/dev/null || true
}

# install_fake_rbspy MODE HZ: the stand-in in $OUT/bin, expecting -r HZ and -p $RB_PID.
install_fake_rbspy() {
  mkdir -p "$OUT/bin"
  cp "$FIXTURES/fake-rbspy" "$OUT/bin/rbspy"
  cp "$FIXTURES/fake_tool.bash" "$OUT/bin/"
  cat >"$OUT/bin/fake.conf" <<EOF
EXPECT=(record --silent -r $2 -d '*' --nonblocking --oncpu --format=collapsed --file '*' --raw-file /dev/null -p $RB_PID)
MODE=$1
OUTPUT='$FIXTURES/rbspy_collapsed.txt'
TARGET=$RB_PID
EOF
}

@test "--ruby-mode rbspy: rbspy's frames as NAME - FILE:LINE_[rb] in the .col" {
  install_fake_rbspy ok 100
  # -F 250: rbspy gets gProfiler's cap, 100 Hz.
  PATH="$OUT/bin:$PATH" run -0 gp-runtime --ruby-mode rbspy -F 250 -p "$RB_PID" -d 2 -o "$OUT/rt.gpa"
  [ ! -e "$OUT/bin/fake.failed" ] || fail "rbspy stand-in refused gp's command: $(cat "$OUT/bin/fake.failed")"
  grep -qx -- "$RB_PID" "$OUT/bin/fake.args"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "<main> - /app/server.rb:30_[rb];block in serve - /app/server.rb:12_[rb];Handler#call - /app/handler.rb:8_[rb];fib - /app/fib.rb:3_[rb] 7"
  assert_output --partial "Handler#call - /app/handler.rb:9_[rb];sleep [c function] - (unknown):0_[rb] 2"
  assert_output --partial "<main> - /app/server.rb:30_[rb];Kernel#loop [c function] - (unknown):0_[rb] 1"
}

@test "--ruby-mode rbspy: a crashing rbspy is the process's error frame, with rbspy's reason" {
  install_fake_rbspy crash 11
  PATH="$OUT/bin:$PATH" run -1 gp-runtime --ruby-mode rbspy -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  assert_line --partial "pid $RB_PID (ruby"
  assert_output --partial "[Profiling error: rbspy exited with status 1: Error: failed to attach to process $RB_PID: Operation not permitted (os error 1)]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling error: rbspy exited with status 1: "
}

@test "--ruby-mode rbspy without rbspy: gProfiler's skip frame and a per-process stderr line" {
  PATH="$GP_BUILD_DIR/bin:/usr/bin:/bin" run -1 gp-runtime --ruby-mode rbspy -p "$RB_PID" -d 1 -o "$OUT/rt.gpa"
  local why="rbspy is not installed (not on PATH, nor in /root/.cargo/bin, /usr/local/bin, /opt/rbspy/bin, /opt/gprofiler/ruby)"
  assert_line --partial "pid $RB_PID (ruby"
  assert_line --partial "[Profiling skipped: $why]"
  run -0 gp-fold "$OUT/rt.gpa"
  assert_output --partial "[Profiling skipped: $why] 1"
}
