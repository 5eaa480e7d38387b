#!/usr/bin/env bash
# Unwind-table build time: gp's builder (gp::unwind::build_packed, what gp-record does for a
# binary it has not cached) on Debian's libc, python3.11, libcrypto, xz, and where installed
# libjvm, libLLVM and chromium, beside elfutils
# computing the same rows through its CFI API and `readelf -wF` printing them. Prints, per file,
# the median wall and CPU time of each, and the table's size (rows before/after merging, packed
# rows, pages, bytes in the BPF maps). The targets: libc in <= 10 ms, libLLVM in <= 90 ms.
#   tests/bench/unwind_table_bench.sh [BUILD_DIR] [RUNS]
#   FILES="/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1" tests/bench/unwind_table_bench.sh build
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build}
runs=${2:-21}
driver=$build/bin/unwind_table_bench
[ -x "$driver" ] || {
  echo "unwind_table_bench.sh: error: no '$driver': cmake --build $build --target unwind_table_bench" >&2
  exit 1
}
files=()
default_files="/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11 /lib/x86_64-linux-gnu/libcrypto.so.3
  /usr/bin/xz /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
  /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/chromium/chromium"
for f in ${FILES:-$default_files}; do
  if [ -r "$f" ]; then files+=("$f"); else echo "unwind_table_bench.sh: skipping '$f': not installed" >&2; fi
done
[ ${#files[@]} -gt 0 ] || { echo "unwind_table_bench.sh: error: none of the files exist" >&2; exit 1; }

echo "== gp (build_packed) and elfutils (every row through dwarf_cfi_addrframe), median of $runs"
"$driver" -n "$runs" "${files[@]}"

# readelf -wF decodes every FDE into the same rows (and prints them): the everyday reference.
if command -v readelf >/dev/null; then
  echo
  echo "== readelf -wF (decode + print every row to /dev/null), median of 5"
  printf '%-38s %9s %9s\n' file wall_ms cpu_ms
  for f in "${files[@]}"; do
    walls=() cpus=()
    for _ in 1 2 3 4 5; do
      TIMEFORMAT='%R %U %S'
      t=$( { time readelf -wF "$f" >/dev/null 2>&1 || true; } 2>&1 )
      read -r real user sys <<<"$t"
      walls+=("$(awk -v r="$real" 'BEGIN { printf "%.2f", r * 1000 }')")
      cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", (u + s) * 1000 }')")
    done
    med() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
    printf '%-38s %9s %9s\n' "$f" "$(med "${walls[@]}")" "$(med "${cpus[@]}")"
  done
fi
