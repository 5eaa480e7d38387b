# shellcheck shell=bash
# What the Ruby and PHP sampler benches share (sourced): their target process, the cost of one
# snapshot at three rates, and the slowdown of a busy loop while sampled, measured the same way
# for gp's CPython sampler beside them; the cost per version, each in its own Debian root. The caller sets tmp (a scratch directory), bench (its
# name, for warnings) and py_bench (gp_python_sampler_bench), and defines loop_<lang> for its own
# language: a busy loop that runs 4 s of its own CPU time and prints its iterations.
# shellcheck source=sampler_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/sampler_lib.sh"
targets=""

# $1: ready file, then the command; sets target (added to targets).
start_target() {
  local ready=$1
  shift
  "$@" > /dev/null &
  target=$!
  targets="$targets $target"
  while [ ! -e "$ready" ]; do sleep 0.1; done
}

# The sampler bench $1's cost per snapshot on pid $2: back to back, 11 Hz and 99 Hz.
snapshot_costs() {
  "$1" "$2" 3 0
  "$1" "$2" 5 11
  "$1" "$2" 5 99
}

# Python's busy loop: iterations in 4 s of its own CPU time (other work on the machine does
# not count as slowdown). It execs, so a background job's $! is its pid.
loop_python() {
  exec /usr/bin/python3 -c 'import time
def f(n): return n + 1
n = 0; end = time.process_time() + 4
while time.process_time() < end:
    for _ in range(1000): n = f(n)
print(n)'
}

# Waits (up to 10 s) until process $1 runs the executable $2: a busy machine may delay the exec.
wait_exec() {
  local want
  want=$(readlink -f "$2")
  for _ in $(seq 200); do
    [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$want" ] && return 0
    sleep 0.05
  done
  echo "$bench: warning: pid $1 did not exec $2 in 10 s" >&2
}

# Slowdown of loop_$1 (run by executable $4) sampled at $2 Hz by sampler bench $3: median of 3
# runs alone and 3 sampled, every run shown (the noise of the machine).
slowdown() {
  local lang=$1 hz=$2 sampler=$3 exe=$4 alone=() sampled=() i a s pid
  for i in 1 2 3; do
    alone+=("$("loop_$lang")")
    "loop_$lang" > "$tmp/sampled" &
    pid=$!
    wait_exec "$pid" "$exe"
    sleep 0.3
    "$sampler" "$pid" 4.5 "$hz" > /dev/null
    wait "$pid"
    sampled+=("$(cat "$tmp/sampled")")
  done
  a=$(printf '%s\n' "${alone[@]}" | median)
  s=$(printf '%s\n' "${sampled[@]}" | median)
  awk -v l="$lang" -v h="$hz" -v a="$a" -v s="$s" -v runs="${alone[*]} / ${sampled[*]}" 'BEGIN {
    printf "   %-6s %2d Hz: iterations per 4 CPU-s, median of 3: alone %d, sampled %d -> slowdown %.2f%%  (runs: %s)\n", l, h, a, s, (a - s) * 100 / a, runs }'
}

# gp's CPython sampler measured the same way: snapshot costs on target.py, then the slowdown.
python_beside() {
  echo "== gp's CPython sampler, the same way on target.py ($(/usr/bin/python3 --version))"
  start_target "$tmp/py-snapshot" /usr/bin/python3 \
    "$(dirname "${BASH_SOURCE[0]}")/../fixtures/runtime/python/target.py" "$tmp/py-snapshot"
  snapshot_costs "$py_bench" "$target"
  kill "$target"
}

# start_in_root ROOT READY COMMAND...: copies the files named in fixture_files to a new directory
# under ROOT/tmp and runs COMMAND in new mount and pid namespaces chrooted to ROOT (/ is this
# host), as a container runs it; "@DIR@" in COMMAND's words stands for that directory as seen
# inside. Waits for @DIR@/READY; sets target (the command's host pid). The caller removes dirs.
start_in_root() {
  local root=$1 ready=$2 dir inner unshare_pid words=() w
  shift 2
  dir=$(mktemp -d "${root%/}/tmp/gp-bench-XXXXXX")
  dirs+=("$dir")
  inner=${dir#"${root%/}"}
  cp "${fixture_files[@]}" "$dir/"
  for w in "$@"; do words+=("${w//@DIR@/$inner}"); done
  unshare --mount --pid --fork chroot "$root" "${words[@]}" >/dev/null &
  unshare_pid=$!
  targets="$targets $unshare_pid"
  while [ ! -e "$dir/$ready" ]; do sleep 0.1; done
  target=$(cut -d' ' -f1 "/proc/$unshare_pid/task/$unshare_pid/children")
  targets="$targets $target"
}

# version_cost LANG VERSION SAMPLER: the back-to-back snapshot cost of SAMPLER on target, shown
# and added to $tmp/table; then the target is killed.
version_cost() {
  echo "== sampler cost under $1 $2 (host pid $target)"
  "$3" "$target" 3 0 | tee "$tmp/out"
  awk -v v="$2" '/per snapshot:/ { print v, $3, $6 }' "$tmp/out" >>"$tmp/table"
  kill -KILL "$target" 2>/dev/null || true
}

# version_table LANG: the versions in $tmp/table, cheapest first, each against the cheapest.
version_table() {
  sort -n -k2 "$tmp/table" | awk -v l="$1" 'NR == 1 { best = $2 }
    { printf "   %s %-4s %7.1f us  %5.1f frames  %.2fx the best\n", l, $1, $2, $3, $2 / best }'
}
