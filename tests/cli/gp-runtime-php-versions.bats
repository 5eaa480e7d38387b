#!/usr/bin/env bats
# gp's own PHP sampler across the versions a fleet runs: Debian's php7.4 (bullseye), php8.2
# (this host, tests/cli/gp-runtime-php.bats), php8.4 (trixie) and php8.5 (experimental). Each runs
# tests/fixtures/runtime/php/target.php, which writes PHP's own debug_backtrace() to a file; gp
# must name every frame (function, file, line) as that trace does. The other suites' interpreters
# run as they do in production, in containers: their own root (scripts/debian-root.sh, cached
# under /var/cache/gp/roots), mount and pid namespaces (unshare --mount --pid --fork chroot ROOT
# ...), profiled from the host by host pid. Also: the layout tables regenerated from the same
# roots' headers equal the checked-in ones, a version text that lies is not walked, and a
# container's php that exits mid-session is an error frame.
# bats file_tags=gp-runtime,php,root

load helpers
bats_require_minimum_version 1.5.0

# The roots (the same package sets scripts/gen-interp-layouts.sh uses, so one root per suite),
# made or found in the cache once per run, in parallel.
setup_file() {
  make_roots "bullseye php7.4-cli ruby2.7" "trixie php8.4-cli ruby3.3" \
    "experimental php-common/sid php8.5-cli ruby3.4"
}

setup() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (chroot, unshare, reading other processes)"
  require_command jq
  OUT="$BATS_TEST_TMPDIR"
  UNSHARE_PID=
  PHP_PID=
}

teardown() {
  end_container "$PHP_PID" "$UNSHARE_PID"
  rm -rf "${JOB_DIR:-}" "${PATCHED_DIR:-}"
  return 0
}

# start_target ROOT PHP [ARG...]: runs target.php under ROOT's PHP (a path inside ROOT, with
# ARGs) in new mount and pid namespaces. Sets PHP_PID (host pid), TRACE (PHP's own trace, host
# path) and SCRIPT (the script's path as PHP sees it).
start_target() {
  local root="$1" php="$2" inner
  shift 2
  JOB_DIR=$(mktemp -d "${root%/}/tmp/gp-php-XXXXXX")
  inner="${JOB_DIR#"${root%/}"}"
  cp "$GP_SOURCE_DIR"/tests/fixtures/runtime/php/{target,spin}.php "$JOB_DIR/"
  SCRIPT="$inner/target.php"
  TRACE="$JOB_DIR/trace.json"
  start_in_root "$root" "$TRACE" "$php" -n "$@" "$SCRIPT" "$inner/trace.json"
  PHP_PID=$TARGET_PID
}

# check_version SUITE PHP [ARG...]: every sample gp-runtime takes of the container's php is the
# stack PHP's own debug_backtrace() reports (max() as the leaf while the spin loop calls it).
check_version() {
  local root want
  root=$(root_of "$1")
  shift
  start_target "$root" "$@"
  want=$(php_expected_frames "$TRACE")
  [[ "$want" == "<main> $SCRIPT:39_[php];Shop::checkout $SCRIPT:13_[php];"*";record_and_spin $SCRIPT:36_[php]" ]] ||
    fail "unexpected trace: $want"
  run -0 gp-runtime --php-mode gp --php-proc-filter php -F 99 -p "$PHP_PID" -d 2 -o "$OUT/rt.gpa"
  assert_output --partial "pid $PHP_PID ("
  assert_output --partial "php via gp-php:"
  run -0 gp-fold "$OUT/rt.gpa"
  php_samples_are "$want" 100
}

@test "PHP 7.4 (bullseye, in a container): gp's frames are PHP's own debug_backtrace()" {
  # 7.4's json is a shared extension, which -n (no php.ini) leaves out.
  check_version bullseye /usr/bin/php7.4 -d extension=json
}

@test "PHP 8.4 (trixie, in a container): gp's frames are PHP's own debug_backtrace()" {
  check_version trixie /usr/bin/php8.4
}

@test "PHP 8.5 (experimental, in a container): gp's frames are PHP's own debug_backtrace()" {
  check_version experimental /usr/bin/php8.5
}

@test "the PHP layout tables equal what each version's Zend headers give" {
  run -0 bash "$GP_SOURCE_DIR/scripts/gen-interp-layouts.sh" --check php
  assert_output --partial "matches the headers"
}

@test "a PHP whose version text lies (7.4 saying 8.4) is skipped, never walked with 8.4's table" {
  local root micro
  root=$(root_of bullseye)
  PATCHED_DIR=$(mktemp -d "$root/tmp/gp-patched-XXXXXX")
  # Same length: "PHP/7.4." becomes "PHP/8.4.", the engine (and its module API) stays 7.4's.
  sed 's|X-Powered-By: PHP/7\.4\.|X-Powered-By: PHP/8.4.|' "$root/usr/bin/php7.4" >"$PATCHED_DIR/php"
  chmod +x "$PATCHED_DIR/php"
  start_target "$root" "${PATCHED_DIR#"$root"}/php" -d extension=json
  run -1 gp-runtime --php-mode gp --php-proc-filter php -p "$PHP_PID" -d 1 -o "$OUT/rt.gpa"
  assert_output --regexp "\[Profiling skipped: '[^']*/php' says PHP 8\.4\.[0-9]+ but lacks that version's Zend module API [0-9]+: not walked\]"
}

@test "a container's php (8.5) that exits mid-session gets gProfiler's error frame" {
  local root
  root=$(root_of experimental)
  unshare --mount --pid --fork chroot "$root" /usr/bin/php8.5 -n -r \
    'function f() { $end = microtime(true) + 3; while (microtime(true) < $end) {} } f();' &
  UNSHARE_PID=$!
  for _ in $(seq 100); do
    PHP_PID=$(cat "/proc/$UNSHARE_PID/task/$UNSHARE_PID/children" 2>/dev/null) && [ -n "$PHP_PID" ] && break
    sleep 0.05
  done
  PHP_PID=${PHP_PID%% *}
  [ -n "$PHP_PID" ] || fail "php8.5 did not start"
  for _ in $(seq 100); do  # the namespace's first process execs chroot, then php
    [[ "$(readlink "/proc/$PHP_PID/exe")" == */php8.5 ]] && break
    sleep 0.05
  done
  sleep 0.2
  run -0 gp-runtime --php-mode gp --php-proc-filter php -p "$PHP_PID" -d 6 -o "$OUT/rt.gpa"
  assert_output --partial "php via gp-php: exited during the session: [Profiling error: process went down during profiling]"
}
