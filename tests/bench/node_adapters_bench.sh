#!/usr/bin/env bash
# Extra slowdown each Node adapter of gp-runtime costs a busy node (not a test; run by hand):
# a fixed amount of JS work (chain.js's spin) is timed alone and while an adapter runs against
# the process (gp_node_adapter_run, built with the unit tests), median of N runs each.
#
#   tests/bench/node_adapters_bench.sh [build dir] [runs] [frequency Hz]
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-5}
HZ=${3:-11}  # gp-runtime's default
HZ_ARG=(${3:+"$3"})
RUN="$BUILD/tests/gp_node_adapter_run"
[ -x "$RUN" ] || { echo "missing $RUN" >&2; exit 1; }
SRC="$(cd "$(dirname "$0")/../.." && pwd)/tests/fixtures/runtime/node/chain.js"

# The timed work starts 2 s after launch, once an adapter has attached.
JS="
const src = require('fs').readFileSync('$SRC', 'utf8');
const spin = new Function('return ' + src.slice(src.indexOf('function spin'), src.indexOf('function work')))();
setTimeout(() => {
  const t0 = process.hrtime.bigint();
  let s = 0;
  for (let i = 0; i < 3000; i++) s += spin(20000);
  console.log(Number(process.hrtime.bigint() - t0) / 1e6, s > 0 ? '' : '!');
}, 2000);
"

one_run() {  # mode -> elapsed ms
  local mode=$1 out pid runner=
  out=$(mktemp)
  node --inspect-port=0 -e "$JS" >"$out" 2>/dev/null &
  pid=$!
  if [ "$mode" != none ]; then
    sleep 0.3
    "$RUN" "$mode" "$pid" 600 "${HZ_ARG[@]}" >/dev/null &
    runner=$!
  fi
  wait "$pid" || true
  if [ -n "$runner" ]; then kill -TERM "$runner" 2>/dev/null || true; wait "$runner" 2>/dev/null || true; fi
  rm -f "/tmp/perf-$pid.map"
  awk '{print $1}' "$out"
  rm -f "$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

base=
for mode in none attach-maps inspector; do
  ms=$(for _ in $(seq "$RUNS"); do one_run "$mode"; done | median)
  [ -z "$base" ] && base=$ms
  awk -v m="$mode" -v ms="$ms" -v b="$base" -v hz="$HZ" \
    'BEGIN { printf "%-12s %8.1f ms  %+6.1f%%  (%s Hz, median of runs)\n", m, ms, (ms / b - 1) * 100, hz }'
done
