#!/bin/bash
# gp's PHP sampler (gp-runtime --php-mode gp): its own CPU cost per snapshot on
# tests/fixtures/runtime/php/target.php (11 frames: methods, closures, array_map/usort callbacks,
# an include), back to back, at gProfiler's default 11 Hz and at 99 Hz; the slowdown a busy PHP
# loop sees while sampled at 11 and 99 Hz (median of 3 runs of 4 CPU-seconds each); gp's CPython
# sampler measured the same way beside it; and the figures published for phpspy (phpspy cannot be
# installed here).
# Usage: tests/bench/php_sampler_bench.sh [BUILD_DIR]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
php_bench=$build/bin/gp_php_sampler_bench
py_bench=$build/bin/gp_python_sampler_bench
bench=php_sampler_bench
tmp=$(mktemp -d)
bin=$build/bin
ncpu=$(nproc)
# shellcheck source=sampler_lib.sh
. "$here/sampler_lib.sh"
targets=""
trap 'kill $targets 2>/dev/null || true; rm -rf "$tmp"' EXIT
php=/usr/bin/php8.2

# $1: ready file, then the command; sets target (added to targets).
start_target() {
  local ready=$1
  shift
  "$@" > /dev/null &
  target=$!
  targets="$targets $target"
  while [ ! -e "$ready" ]; do sleep 0.1; done
}

echo "== gp's PHP sampler, cost per snapshot on target.php ($("$php" -n -r 'echo "PHP ", PHP_VERSION;'))"
start_target "$tmp/trace" "$php" -n "$here/../fixtures/runtime/php/target.php" "$tmp/trace"
"$php_bench" "$target" 3 0
"$php_bench" "$target" 5 11
"$php_bench" "$target" 5 99
kill "$target"

echo "== gp's CPython sampler, the same way on target.py ($(/usr/bin/python3 --version))"
start_target "$tmp/py-snapshot" /usr/bin/python3 "$here/../fixtures/runtime/python/target.py" "$tmp/py-snapshot"
"$py_bench" "$target" 3 0
"$py_bench" "$target" 5 11
"$py_bench" "$target" 5 99
kill "$target"

# Iterations of a busy loop (a function call per iteration) in 4 s of its own CPU time, so that
# other work on the machine does not count as slowdown; $1: php or python. It execs, so a
# background job's $! is its pid.
loop_iterations() {
  if [ "$1" = php ]; then
    exec "$php" -n -r 'function f($n) { return $n + 1; }
function cpu() { $r = getrusage(); return $r["ru_utime.tv_sec"] + $r["ru_utime.tv_usec"] / 1e6 + $r["ru_stime.tv_sec"] + $r["ru_stime.tv_usec"] / 1e6; }
$n = 0; $end = cpu() + 4;
while (cpu() < $end) { for ($i = 0; $i < 1000; $i++) { $n = f($n); } }
echo $n;'
  else
    exec /usr/bin/python3 -c 'import time
def f(n): return n + 1
n = 0; end = time.process_time() + 4
while time.process_time() < end:
    for _ in range(1000): n = f(n)
print(n)'
  fi
}
# Waits (up to 10 s) until process $1 runs interpreter $2: a busy machine may delay the exec.
wait_exec() {
  local want
  want=$(readlink -f "$2")
  for _ in $(seq 200); do
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
    sleep 0.05
  done
  echo "$bench: warning: pid $1 did not exec $2 in 10 s" >&2
}
# Slowdown of the $1 loop sampled at $2 Hz by sampler bench $3: median of 3 runs alone and 3 sampled.
slowdown() {
  local lang=$1 hz=$2 sampler=$3 alone=() sampled=() i a s pid
  for i in 1 2 3; do
    alone+=("$(loop_iterations "$lang")")
    loop_iterations "$lang" > "$tmp/sampled" &
    pid=$!
    if [ "$lang" = php ]; then wait_exec "$pid" "$php"; else wait_exec "$pid" /usr/bin/python3; fi
    sleep 0.3
    "$sampler" "$pid" 4.5 "$hz" > /dev/null
    wait "$pid"
    sampled+=("$(cat "$tmp/sampled")")
  done
  a=$(printf '%s\n' "${alone[@]}" | median)
  s=$(printf '%s\n' "${sampled[@]}" | median)
  awk -v l="$lang" -v h="$hz" -v a="$a" -v s="$s" 'BEGIN {
    printf "   %-6s %2d Hz: busy-loop iterations per 4 CPU-s, median of 3: alone %d, sampled %d -> slowdown %.2f%%\n", l, h, a, s, (a - s) * 100 / a }'
}
echo "== target slowdown (a shared 2-CPU machine: differences of ~1% are noise)"
for hz in 11 99; do slowdown php "$hz" "$php_bench"; done
for hz in 11 99; do slowdown python "$hz" "$py_bench"; done

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
