#!/usr/bin/env bash
# Formats gp's C/C++ sources with clang-format (.clang-format at the root; bpf/ has its own).
#   scripts/format.sh [FILE...]            rewrite files in place (default: every tracked source)
#   scripts/format.sh --check [FILE...]    list files that differ from the style; exit 1 if any
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
command -v clang-format >/dev/null || { echo "format.sh: error: clang-format not found: run scripts/install-deps.sh --test" >&2; exit 1; }

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(git -C "$root" ls-files -- '*.cpp' '*.h' '*.c' | sed "s|^|$root/|")
fi

bad=0
for f in "${files[@]}"; do
  if [ "$check" -eq 1 ]; then
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format.sh: '$f' is not formatted (run scripts/format.sh '$f')"
      bad=1
    fi
  else
    clang-format -i "$f"
  fi
done
exit "$bad"
