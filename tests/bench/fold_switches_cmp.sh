#!/usr/bin/env bash
# Byte-for-byte comparison of two gp-fold binaries over its switches, for changes that must not
# alter output (a faster folding path): every combination of the folded switches (process frame
# style, --annotate, --kernel-delimiter, --user-only/--kernel-only, idle), the filters, and the
# other formats that share the folding code (col, speedscope, --top).
#
#   tests/bench/fold_switches_cmp.sh BEFORE AFTER ARCHIVE [PID] [COMM]
#
# BEFORE, AFTER: gp-fold binaries; ARCHIVE: any input gp-fold reads (e.g. the symbolized
# archive of tests/bench/symbolize_bench.sh); PID and COMM: values for the filter runs (default:
# the pid and comm of the process frame with the most lines). Prints one line per differing run
# and a summary; exits 1 when any output or exit status differs.
set -uo pipefail

[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
before="$1" after="$2" archive="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
first="$("$before" -f folded --with-pid "$archive" | cut -d';' -f1 | grep -E -- '-[0-9]+$' |
  sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')"
pid="${4:-${first##*-}}"
comm="${5:-${first%-*}}"

runs=0 diffs=0
compare() {  # compare ARGS...: both binaries on the archive with ARGS
  runs=$((runs + 1))
  "$before" "$@" "$archive" >"$tmp/b" 2>"$tmp/be"; local rb=$?
  "$after" "$@" "$archive" >"$tmp/a" 2>"$tmp/ae"; local ra=$?
  if [ "$rb" != "$ra" ] || ! cmp -s "$tmp/b" "$tmp/a" || ! cmp -s "$tmp/be" "$tmp/ae"; then
    diffs=$((diffs + 1))
    echo "DIFFERS: gp-fold $* (exit $rb vs $ra, $(wc -c <"$tmp/b") vs $(wc -c <"$tmp/a") bytes)"
  fi
}

for proc in "" --with-pid --with-tid; do
  for annotate in "" --annotate; do
    for delim in "" --kernel-delimiter; do
      for part in "" --user-only --kernel-only; do
        for idle in "" --include-idle --exclude-idle; do
          # shellcheck disable=SC2086  # empty switches vanish on purpose
          compare -f folded $proc $annotate $delim $part $idle
        done
      done
    done
  done
done
for filter in "--pid $pid" "--comm $comm" "--comm swapper" "--container none" "--pid 0"; do
  # shellcheck disable=SC2086
  compare -f folded $filter
  # shellcheck disable=SC2086
  compare -f folded --with-tid --annotate --kernel-delimiter $filter
  # shellcheck disable=SC2086
  compare -f col $filter
done
for col in "" "--profile-api-version v1" "--no-app-metadata" "--exclude-idle"; do
  # shellcheck disable=SC2086
  compare -f col $col
done
for part in "" --user-only --kernel-only; do
  # shellcheck disable=SC2086
  compare -f speedscope --with-pid $part
  # shellcheck disable=SC2086
  compare --top 30 $part
done
compare -f speedscope
compare -f pprof
echo "fold_switches_cmp: $runs runs, $diffs differ (pid $pid, comm $comm)"
[ "$diffs" = 0 ]
