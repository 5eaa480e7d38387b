#!/bin/bash
# gp's PHP sampler (gp-runtime --php-mode gp): its own CPU cost per snapshot on
# tests/fixtures/runtime/php/target.php (11 frames: methods, closures, array_map/usort callbacks,
# an include), back to back, at gProfiler's default 11 Hz and at 99 Hz; the slowdown a busy PHP
# loop sees while sampled at 11 and 99 Hz (median of 3 runs of 4 CPU-seconds each); gp's CPython
# sampler measured the same way beside it; and the figures published for phpspy (phpspy cannot be
# installed here). Then the back-to-back cost per PHP version a fleet runs: this host's 8.2, and
# 7.4, 8.4 and 8.5 from Debian roots (scripts/debian-root.sh; made once, cached) run in their
# own mount and pid namespaces as in containers, each against the best.
# Usage: tests/bench/php_sampler_bench.sh [BUILD_DIR]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
php_bench=$build/bin/gp_php_sampler_bench
py_bench=$build/bin/gp_python_sampler_bench
bench=php_sampler_bench
tmp=$(mktemp -d)
# shellcheck source=interpreter_bench_lib.sh
. "$here/interpreter_bench_lib.sh"
dirs=()
trap 'kill $targets 2>/dev/null || true; rm -rf "$tmp" "${dirs[@]}"' EXIT
php=/usr/bin/php8.2

# PHP's busy loop (a function call per iteration), as loop_python.
loop_php() {
  exec "$php" -n -r 'function f($n) { return $n + 1; }
function cpu() { $r = getrusage(); return $r["ru_utime.tv_sec"] + $r["ru_utime.tv_usec"] / 1e6 + $r["ru_stime.tv_sec"] + $r["ru_stime.tv_usec"] / 1e6; }
$n = 0; $end = cpu() + 4;
while (cpu() < $end) { for ($i = 0; $i < 1000; $i++) { $n = f($n); } }
echo $n;'
}

echo "== gp's PHP sampler, cost per snapshot on target.php ($("$php" -n -r 'echo "PHP ", PHP_VERSION;'))"
start_target "$tmp/trace" "$php" -n "$here/../fixtures/runtime/php/target.php" "$tmp/trace"
snapshot_costs "$php_bench" "$target"
kill "$target"
python_beside

fixture_files=("$here"/../fixtures/runtime/php/{target,spin}.php)
: >"$tmp/table"
for spec in "8.2 host" "7.4 bullseye php7.4-cli" "8.4 trixie php8.4-cli" \
  "8.5 experimental php-common/sid php8.5-cli"; do
  set -- $spec
  version=$1
  shift
  root=/
  [ "$1" = host ] || root=$(bash "$here/../../scripts/debian-root.sh" "$@")
  # (7.4's json is a shared extension, which -n leaves out.)
  extra=()
  [ "$version" = 7.4 ] && extra=(-d extension=json)
  start_in_root "$root" trace "/usr/bin/php$version" -n "${extra[@]}" @DIR@/target.php @DIR@/trace
  version_cost PHP "$version" "$php_bench"
done
echo "== back-to-back snapshot cost per PHP version (target.php)"
version_table PHP

echo "== target slowdown (a shared 2-CPU machine: differences of ~1% are noise)"
for hz in 11 99; do slowdown php "$hz" "$php_bench" "$php"; done
for hz in 11 99; do slowdown python "$hz" "$py_bench" /usr/bin/python3; done

cat <<'TXT'
== phpspy, published (phpspy cannot be installed here: no Debian package)
   phpspy's own README (https://github.com/adsr/phpspy) calls it "a low-overhead sampling
   profiler" with "minimal overhead" and publishes no per-snapshot cost or slowdown figure. Like
   gp's sampler it reads the target with process_vm_readv (its -S/--pause-process option, which
   stops the target per trace, is "unsafe for production"); gProfiler runs it at <= 999 Hz.
   The only numbers found are a third party's: php-fast-profile's docs/benchmarks.md
   (github.com/loks0n/php-fast-profile; aarch64, PHP 8.3.31 NTS, 5 s windows, one CLI target):
   phpspy used 0.08 s CPU at 99 Hz (1.6% of a core) and 0.29 s at 999 Hz (5.8%) on its
   "synthetic" workload, and captured 464 of 500 expected samples at 99 Hz and 2809 of 5000 at
   999 Hz. It gives no target-slowdown figure.
TXT
