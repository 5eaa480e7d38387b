#!/bin/bash
# gp's Ruby sampler (gp-runtime --ruby-mode gp): its own CPU cost per snapshot on
# tests/fixtures/runtime/ruby/target.rb (4 threads parked 6 to 20 frames deep), back to back and
# at gProfiler's default 11 Hz and at 99 Hz; the slowdown a busy single-threaded Ruby loop sees
# while sampled at 11 and 99 Hz (median of 3 runs of 4 CPU-seconds each); gp's CPython sampler measured
# the same way beside it; and rbspy's published figures (rbspy cannot be installed here). Then the
# back-to-back cost per Ruby version a fleet runs: this host's 3.1, and 2.7, 3.3 and 3.4 from
# Debian roots (scripts/debian-root.sh; made once, cached, the package sets the version tests
# use) run in their own mount and pid namespaces as in containers, each against the best.
# Usage: tests/bench/ruby_sampler_bench.sh [BUILD_DIR]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rb_bench=$build/bin/gp_ruby_sampler_bench
py_bench=$build/bin/gp_python_sampler_bench
bench=ruby_sampler_bench
tmp=$(mktemp -d)
# shellcheck source=interpreter_bench_lib.sh
. "$here/interpreter_bench_lib.sh"
dirs=()
trap 'kill $targets 2>/dev/null || true; rm -rf "$tmp" "${dirs[@]}"' EXIT

# Ruby's busy loop (a method call per iteration), as loop_python.
loop_ruby() {
  exec /usr/bin/ruby --disable-gems -e 'def f(n) = n + 1
clock = Process::CLOCK_PROCESS_CPUTIME_ID
n = 0; t = Process.clock_gettime(clock) + 4
while Process.clock_gettime(clock) < t
  1000.times { n = f(n) }
end
print n'
}

echo "== gp's Ruby sampler, cost per snapshot on target.rb ($(/usr/bin/ruby --version | cut -d' ' -f1-2))"
start_target "$tmp/rb-snapshot" /usr/bin/ruby "$here/../fixtures/runtime/ruby/target.rb" "$tmp/rb-snapshot"
snapshot_costs "$rb_bench" "$target"
kill "$target"
python_beside

fixture_files=("$here/../fixtures/runtime/ruby/target.rb")
: >"$tmp/table"
for spec in "3.1 host" "2.7 bullseye php7.4-cli ruby2.7" "3.3 trixie php8.4-cli ruby3.3" \
  "3.4 experimental php-common/sid php8.5-cli ruby3.4"; do
  set -- $spec
  version=$1
  shift
  root=/
  [ "$1" = host ] || root=$(bash "$here/../../scripts/debian-root.sh" "$@")
  start_in_root "$root" ready "/usr/bin/ruby$version" --disable-gems @DIR@/target.rb @DIR@/ready
  version_cost Ruby "$version" "$rb_bench"
done
echo "== back-to-back snapshot cost per Ruby version (target.rb)"
version_table Ruby

echo "== target slowdown (a shared 2-CPU machine: the spread between runs shows the noise)"
for hz in 11 99; do slowdown ruby "$hz" "$rb_bench" /usr/bin/ruby; done
for hz in 11 99; do slowdown python "$hz" "$py_bench" /usr/bin/python3; done

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
