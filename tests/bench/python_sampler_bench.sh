#!/bin/bash
# gp's CPython sampler: its own CPU cost per snapshot (back to back and at gProfiler's 50 Hz)
# on tests/fixtures/runtime/python/target.py (5 threads, one 50 frames deep) under each CPython a
# fleet runs: this host's python3 (3.11), and 3.9, 3.13, 3.14 and 3.15 from Debian roots
# (scripts/debian-root.sh; made once, cached), run in their own mount and pid namespaces as in
# containers. Then a table of the back-to-back cost per version against the best, and the
# slowdown a busy single-threaded Python loop sees while gp samples it at 50 Hz.
# Usage: tests/bench/python_sampler_bench.sh [BUILD_DIR]   (as root)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
bench=$build/bin/gp_python_sampler_bench
tmp=$(mktemp -d)
jobs=()
dirs=()
cleanup() {
  local p
  for p in "${jobs[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$tmp" "${dirs[@]}"
}
trap cleanup EXIT

# run_target ROOT PYTHON: target.py under ROOT's PYTHON ("/" = this host, no namespaces); sets
# target (the interpreter's host pid) once its threads have settled.
run_target() {
  local root=$1 python=$2 dir inner unshare_pid
  dir=$(mktemp -d "${root%/}/tmp/gp-bench-XXXXXX")
  dirs+=("$dir")
  inner=${dir#"${root%/}"}
  cp "$here/../fixtures/runtime/python/target.py" "$dir/target.py"
  if [ "$root" = / ]; then
    "$python" "$dir/target.py" "$dir/snapshot" &
    target=$!
  else
    unshare --mount --pid --fork chroot "$root" "$python" "$inner/target.py" "$inner/snapshot" &
    unshare_pid=$!
    jobs+=("$unshare_pid")
  fi
  while [ ! -e "$dir/snapshot" ]; do sleep 0.1; done
  [ "$root" = / ] || target=$(cut -d' ' -f1 "/proc/$unshare_pid/task/$unshare_pid/children")
  jobs+=("$target")
}

versions=("/ /usr/bin/python3")
for spec in "bullseye python3.9" "trixie python3.13" "sid python3.14 python3.15"; do
  set -- $spec
  root=$(bash "$here/../../scripts/debian-root.sh" "$@")
  shift
  for py in "$@"; do versions+=("$root /usr/bin/$py"); done
done

: > "$tmp/table"
for v in "${versions[@]}"; do
  set -- $v
  run_target "$1" "$2"
  echo "== sampler cost on target.py under $2 (host pid $target)"
  "$bench" "$target" 3 0 | tee "$tmp/out"
  "$bench" "$target" 5 50
  awk 'NR == 1 { version = $2; sub(",", "", version) } /per snapshot:/ { print version, $3, $6 }' "$tmp/out" >> "$tmp/table"
  kill -KILL "$target" 2>/dev/null || true
done

echo "== back-to-back snapshot cost per version (5 threads; target.py)"
sort -n -k2 "$tmp/table" | awk 'NR == 1 { best = $2 }
  { printf "   CPython %-8s %7.1f us  %5.1f frames  %.2fx the best\n", $1, $2, $3, $2 / best }'

# Slowdown: iterations of a busy loop in 5 s, alone and while sampled at 50 Hz.
loop='import time
n=0; end=time.time()+5
while time.time() < end: n += 1
print(n)'
alone=$(/usr/bin/python3 -c "$loop")
/usr/bin/python3 -c "$loop" > "$tmp/sampled" &
busy=$!
sleep 0.3
"$bench" "$busy" 4.5 50 > /dev/null
wait $busy
sampled=$(cat "$tmp/sampled")
echo "== busy loop iterations in 5 s: alone $alone, sampled at 50 Hz $sampled"
awk -v a="$alone" -v s="$sampled" 'BEGIN { printf "   slowdown %.2f%% (noise on a shared machine is of the same order)\n", (a - s) * 100 / a }'
