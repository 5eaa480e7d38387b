#!/usr/bin/env bash
# Runs every test of a build made with the tests (ctest: unit + CLI suites), then each libFuzzer
# target briefly. The README's test command installs and builds first:
#   bash scripts/install-deps.sh --test && bash scripts/build.sh && bash scripts/test.sh
# Environment: GP_BUILD_DIR (default build/), GP_TEST_JOBS (ctest parallelism, default 2),
# GP_FUZZ_SECONDS (per fuzz target, default 60; 0 skips fuzzing).
set -euo pipefail
# No test may wait on a terminal: stdin is closed for all of them (CI and a run by hand alike).
exec </dev/null

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GP_BUILD_DIR:-$root/build}"
export GP_BUILD_DIR="$build"

if [ ! -x "$build/bin/gp_unit_tests" ]; then
  echo "test.sh: error: '$build' has no test build: run 'bash scripts/install-deps.sh --test && bash scripts/build.sh' first" >&2
  exit 1
fi

status=0
# --timeout applies to tests without their own TIMEOUT property (the unit tests).
ctest --test-dir "$build" --output-on-failure -j "${GP_TEST_JOBS:-2}" --timeout 300 || status=1

if [ "${GP_FUZZ_SECONDS:-60}" != 0 ]; then
  bash "$root/scripts/fuzz.sh" || status=1
fi

if [ "$status" -ne 0 ]; then
  echo "test.sh: FAILED (see the output above)" >&2
else
  echo "test.sh: all tests passed"
fi
exit "$status"
