#!/usr/bin/env bash
# Configures and builds gp into a build directory (default: build/ at the repository root).
#   scripts/build.sh [cmake -D options...]
# Environment: GP_BUILD_DIR (build directory), GP_JOBS (parallel jobs, default: CPU count),
#              GP_BUILD_BPF (ON|OFF, default ON: gp-record's eBPF program needs clang + bpftool),
#              GP_BUILD_TESTS (ON|OFF, default ON when GoogleTest is installed, i.e. after
#              'install-deps.sh --test'; the main job needs only the tools),
#              CMAKE_BUILD_TYPE (default RelWithDebInfo; Release, README command 1's, is the
#              same -O2 without debug information: a third less compile time).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GP_BUILD_DIR:-$root/build}"
jobs="${GP_JOBS:-$(nproc)}"
tests="${GP_BUILD_TESTS:-}"
if [ -z "$tests" ]; then
  if [ -f /usr/include/gtest/gtest.h ]; then tests=ON; else tests=OFF; fi
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
  -DGP_BUILD_BPF="${GP_BUILD_BPF:-ON}" -DGP_BUILD_TESTS="$tests" "$@"
cmake --build "$build" -j "$jobs"
echo "build.sh: tools are in $build/bin"
