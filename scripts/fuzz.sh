#!/usr/bin/env bash
# Builds gp's libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs each one for a
# while on its seed corpus (tests/fuzz/corpus/<name>/). Fails when a target finds a crash; the
# input that crashed is kept in build-fuzz/artifacts/ (replay: build-fuzz/bin/<target> FILE).
#   scripts/fuzz.sh [TARGET...]           (default: every *_fuzz target)
# Environment: GP_FUZZ_SECONDS (per target, default 60), GP_FUZZ_RUNS (per target: stop after
#              this many executions instead, 0 = no limit), GP_FUZZ_MAX_LEN (largest input, default
#              1 MiB: large enough for multi-block LZ4 streams and lists of millions of entries),
#              GP_FUZZ_BUILD_DIR (default build-fuzz/), GP_JOBS (build jobs).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GP_FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${GP_FUZZ_SECONDS:-60}"
runs="${GP_FUZZ_RUNS:-0}"
max_len="${GP_FUZZ_MAX_LEN:-1048576}"
jobs="${GP_JOBS:-$(nproc)}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: error: clang++ not found: run scripts/install-deps.sh --test" >&2
  exit 1
fi
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DGP_FUZZ=ON -DGP_BUILD_BPF=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs" --target gp_fuzzers

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for bin in "$build"/bin/*_fuzz; do targets+=("$(basename "$bin")"); done
fi

mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  name="${target%_fuzz}"
  seeds="$root/tests/fuzz/corpus/$name"
  work="$build/corpus/$name"  # new inputs go here, never into the checked-in seeds
  mkdir -p "$work"
  [ -d "$seeds" ] || seeds=""
  if [ "$runs" -gt 0 ]; then limit=(-runs="$runs"); echo "fuzz.sh: running $target for $runs executions"
  else limit=(-max_total_time="$seconds"); echo "fuzz.sh: running $target for ${seconds}s"; fi
  # -close_fd_mask=1 silences the target's stdout; stderr keeps the sanitizer report.
  if ! "$build/bin/$target" "${limit[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -close_fd_mask=1 -artifact_prefix="$build/artifacts/$target-" \
       "$work" ${seeds:+"$seeds"} >"$build/$target.log" 2>&1; then
    grep -vE '^#[0-9]+[[:space:]]' "$build/$target.log" | tail -n 40 >&2  # the report, not progress
    echo "fuzz.sh: error: $target failed: see $build/$target.log and $build/artifacts/" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build/$target.log" | sed "s/^/  $target /"
  fi
done
exit "$status"
