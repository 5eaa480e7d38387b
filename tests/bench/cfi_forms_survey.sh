#!/usr/bin/env bash
# Which DWARF call-frame forms Debian's libraries use (CFA rules, register rules, expressions),
# and which gp's unwind-table builder follows: per file, the share of its FDEs that use each form
# and, of those, the share with a row gp cannot follow (the walk ends [truncated] there) or
# follows only in the sampled frame (a CFA in another register). Files not installed are skipped.
#   tests/bench/cfi_forms_survey.sh [BUILD_DIR]
#   FILES="/usr/lib/x86_64-linux-gnu/libcrypto.so.3" tests/bench/cfi_forms_survey.sh build
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build}
driver=$build/bin/cfi_forms_survey
[ -x "$driver" ] || {
  echo "cfi_forms_survey.sh: error: no '$driver': cmake --build $build --target cfi_forms_survey" >&2
  exit 1
}
lib=/usr/lib/x86_64-linux-gnu
default_files="$lib/libc.so.6 $lib/ld-linux-x86-64.so.2 $lib/libcrypto.so.3 /usr/bin/python3.11
  $lib/libgcrypt.so.20 $lib/libz.so.1 $lib/libstdc++.so.6 $lib/libavcodec.so.59
  /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so $lib/libLLVM-14.so.1"
files=()
for f in ${FILES:-$default_files}; do
  if [ -r "$f" ]; then files+=("$f"); else echo "cfi_forms_survey.sh: skipping '$f': not installed" >&2; fi
done
[ ${#files[@]} -gt 0 ] || { echo "cfi_forms_survey.sh: error: none of the files exist" >&2; exit 1; }
"$driver" "${files[@]}"
