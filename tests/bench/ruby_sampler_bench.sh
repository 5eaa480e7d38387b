#!/bin/bash
# gp's Ruby sampler (gp-runtime --ruby-mode gp): its own CPU cost per snapshot on
# tests/fixtures/runtime/ruby/target.rb (4 threads parked 6 to 20 frames deep), back to back and
# at gProfiler's default 11 Hz and at 99 Hz; the slowdown a busy single-threaded Ruby loop sees
# while sampled at 11 and 99 Hz (median of 3 runs of 4 CPU-seconds each); gp's CPython sampler measured
# the same way beside it; and rbspy's published figures (rbspy cannot be installed here).
# Usage: tests/bench/ruby_sampler_bench.sh [BUILD_DIR]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rb_bench=$build/bin/gp_ruby_sampler_bench
py_bench=$build/bin/gp_python_sampler_bench
bench=ruby_sampler_bench
tmp=$(mktemp -d)
bin=$build/bin
ncpu=$(nproc)
# shellcheck source=sampler_lib.sh
. "$here/sampler_lib.sh"
targets=""
trap 'kill $targets 2>/dev/null || true; rm -rf "$tmp"' EXIT

# $1: interpreter, $2: script, $3: snapshot file; sets target (added to targets).
start_target() {
  "$1" "$2" "$3" &
  target=$!
  targets="$targets $target"
  while [ ! -e "$3" ]; do sleep 0.1; done
}

echo "== gp's Ruby sampler, cost per snapshot on target.rb ($(/usr/bin/ruby --version | cut -d' ' -f1-2))"
start_target /usr/bin/ruby "$here/../fixtures/runtime/ruby/target.rb" "$tmp/rb-snapshot"
"$rb_bench" "$target" 3 0
"$rb_bench" "$target" 5 11
"$rb_bench" "$target" 5 99
kill "$target"

echo "== gp's CPython sampler, the same way on target.py ($(/usr/bin/python3 --version))"
start_target /usr/bin/python3 "$here/../fixtures/runtime/python/target.py" "$tmp/py-snapshot"
"$py_bench" "$target" 3 0
"$py_bench" "$target" 5 11
"$py_bench" "$target" 5 99
kill "$target"

# Iterations of a busy loop in 4 s of its own CPU time (so that other work on the machine does
# not count as slowdown; what is left is the sampler's effect on the target: its reads
# competing for the memory and caches the loop uses); $1: ruby or python. The loop execs, so a
# background job's $! is its pid.
loop_iterations() {
  if [ "$1" = ruby ]; then
    exec /usr/bin/ruby --disable-gems -e 'def f(n) = n + 1
clock = Process::CLOCK_PROCESS_CPUTIME_ID
n = 0; t = Process.clock_gettime(clock) + 4
while Process.clock_gettime(clock) < t
  1000.times { n = f(n) }
end
print n'
  else
    exec /usr/bin/python3 -c 'import time
def f(n): return n + 1
n = 0; end = time.process_time() + 4
while time.process_time() < end:
    for _ in range(1000): n = f(n)
print(n)'
  fi
}
# Slowdown of the $1 loop sampled at $2 Hz: median of 3 runs alone and 3 sampled.
slowdown() {
  local lang=$1 hz=$2 alone=() sampled=() i a s pid
  for i in 1 2 3; do
    alone+=("$(loop_iterations "$lang")")
    loop_iterations "$lang" > "$tmp/sampled" &
    pid=$!
    # Until the interpreter has replaced the background shell and loaded its library.
    while ! grep -q -E "lib$lang|/$lang" "/proc/$pid/maps" 2>/dev/null; do sleep 0.05; done
    sleep 0.2
    if [ "$lang" = ruby ]; then "$rb_bench" "$pid" 4.5 "$hz" > /dev/null; else "$py_bench" "$pid" 4.5 "$hz" > /dev/null; fi
    wait "$pid"
    sampled+=("$(cat "$tmp/sampled")")
  done
  a=$(printf '%s\n' "${alone[@]}" | median)
  s=$(printf '%s\n' "${sampled[@]}" | median)
  awk -v l="$lang" -v h="$hz" -v a="$a" -v s="$s" -v runs="${alone[*]} / ${sampled[*]}" 'BEGIN {
    printf "   %-6s %2d Hz: iterations per 4 CPU-s, median of 3: alone %d, sampled %d -> slowdown %.2f%%  (runs: %s)\n", l, h, a, s, (a - s) * 100 / a, runs }'
}
echo "== target slowdown (a shared 2-CPU machine: the spread between runs shows the noise)"
for hz in 11 99; do slowdown ruby "$hz"; done
for hz in 11 99; do slowdown python "$hz"; done

cat <<'TXT'
== rbspy, published (rbspy cannot be installed here; it has no Debian package)
   rbspy's FAQ (https://rbspy.github.io/faq.html, "Can I use rbspy in production?") gives no
   per-snapshot cost or slowdown figure: it says rbspy only reads the target's memory (no
   signals, no ptrace), that by default (0.6+) it pauses the Ruby process for each sample, which
   "can affect performance, especially if you're using a high sampling rate", that --nonblocking
   (the way gProfiler runs it, with --rate <= 100) avoids the pause at the price of occasionally
   incorrect samples, and that "rbspy does use some CPU". gp's sampler is always non-blocking
   (it never stops the target) and retries a snapshot it finds torn.
TXT
