#!/bin/bash
# gp's CPython sampler: its own CPU cost per snapshot (back to back and at gProfiler's 50 Hz)
# on tests/fixtures/runtime/python/target.py (5 threads, one 50 frames deep), and the slowdown
# a busy single-threaded Python loop sees while gp samples it at 50 Hz.
# Usage: tests/bench/python_sampler_bench.sh [BUILD_DIR] [PYTHON]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
python=${2:-/usr/bin/python3}
bench=$build/bin/gp_python_sampler_bench
tmp=$(mktemp -d)
trap 'kill $target 2>/dev/null || true; rm -rf "$tmp"' EXIT

"$python" "$here/../fixtures/runtime/python/target.py" "$tmp/snapshot" &
target=$!
while [ ! -e "$tmp/snapshot" ]; do sleep 0.1; done
echo "== sampler cost on target.py (pid $target)"
"$bench" "$target" 3 0
"$bench" "$target" 5 50
kill $target
wait $target 2>/dev/null || true

# Slowdown: iterations of a busy loop in 5 s, alone and while sampled at 50 Hz.
loop='import time
n=0; end=time.time()+5
while time.time() < end: n += 1
print(n)'
alone=$("$python" -c "$loop")
"$python" -c "$loop" > "$tmp/sampled" &
busy=$!
sleep 0.3
"$bench" "$busy" 4.5 50 > /dev/null
wait $busy
sampled=$(cat "$tmp/sampled")
echo "== busy loop iterations in 5 s: alone $alone, sampled at 50 Hz $sampled"
awk -v a="$alone" -v s="$sampled" 'BEGIN { printf "   slowdown %.2f%% (noise on a shared machine is of the same order)\n", (a - s) * 100 / a }'
