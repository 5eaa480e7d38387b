#!/usr/bin/env bash
# Benchmark of gp's `perf script | gp-import | gp-fold`, and of gp-import reading perf.data
# itself (`gp-import perf.data | gp-symbolize | gp-fold`), against perf's own Python folding
# (`perf script report stackcollapse`) on one system-wide recording of >= 200k samples, and
# gp-flame on the result; then the same for a `--call-graph dwarf` recording of Debian's python3
# (no frame pointers), where gp-import unwinds the stack copies with gp's walker and perf script
# with its own. The timings run side by side, in one run, on the same perf.data files.
#
#   tests/bench/import_fold_bench.sh [--samples N] [--runs N] [--perf-data FILE]
#                                    [--dwarf-seconds N] [--dwarf-data FILE] [--keep DIR]
#
#   --samples N        record until the recording holds at least N samples (default 200000)
#   --runs N           time each step N times and report the fastest (default 3)
#   --perf-data FILE   use this recording instead of making one (no root needed then)
#   --dwarf-seconds N  CPU seconds of the python3 --call-graph dwarf recording (default 5)
#   --dwarf-data FILE  use this --call-graph dwarf recording instead of making one
#   --keep DIR         keep the recordings and outputs in DIR (default: a temporary directory)
#
# Needs root (perf record -a), Linux perf, python3, and gp-import, gp-symbolize, gp-fold and gp-flame in
# $GP_BUILD_DIR/bin (default build/bin). The recording is made at 999 Hz on all CPUs while one
# CPU-bound worker per CPU runs (Python recursion, gzip and sort, for deep and varied stacks).
# The dwarf recording: /usr/bin/python3 at 999 Hz, 8 KiB stack copies (perf's default).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${GP_BUILD_DIR:-$root/build}/bin"
target=200000
runs=3
perf_data=""
dwarf_seconds=5
dwarf_data=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --samples) target="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --perf-data) perf_data="$2"; shift 2 ;;
    --dwarf-seconds) dwarf_seconds="$2"; shift 2 ;;
    --dwarf-data) dwarf_data="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "import_fold_bench.sh: error: unknown option '$1'" >&2; exit 2 ;;
  esac
done

for tool in gp-import gp-symbolize gp-fold gp-flame; do
  [ -x "$bin/$tool" ] || { echo "import_fold_bench.sh: error: '$bin/$tool' is not built" >&2; exit 1; }
done
command -v perf >/dev/null || { echo "import_fold_bench.sh: error: perf not found (linux-perf)" >&2; exit 1; }
export PATH="$bin:$PATH"

if [ -n "$keep" ]; then
  dir="$keep"
  mkdir -p "$dir"
else
  dir=$(mktemp -d /tmp/gp-bench.XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi

# One CPU-bound worker per CPU until killed.
start_workers() {
  local cpus i
  cpus=$(nproc)
  for ((i = 0; i < cpus; i++)); do
    case $((i % 3)) in
      0) python3 -c '
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
while True: fib(22)' & ;;
      1) sh -c 'while :; do head -c 4000000 /dev/urandom | gzip -1 > /dev/null; done' & ;;
      2) sh -c 'while :; do seq 1 300000 | sort -R | sort -n > /dev/null; done' & ;;
    esac
    workers+=($!)
  done
}

stop_workers() {
  local pid
  for pid in "${workers[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait "${workers[@]}" 2>/dev/null || true
  workers=()
}

# Records perf.data with at least $target samples; the duration is estimated from 999 Hz per CPU
# and grown when the recording came out short.
record() {
  [ "$(id -u)" -eq 0 ] || { echo "import_fold_bench.sh: error: recording needs root (or pass --perf-data)" >&2; exit 1; }
  local seconds samples log="$dir/record.log"
  seconds=$(( target / (999 * $(nproc)) + 3 ))
  workers=()
  trap 'stop_workers' INT TERM
  for attempt in 1 2 3; do
    echo "recording all CPUs at 999 Hz for ${seconds}s (target: $target samples)..." >&2
    start_workers
    perf record -F 999 -a -g -o "$dir/perf.data" -- sleep "$seconds" 2>"$log" >/dev/null
    stop_workers
    samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$log" | tail -1)
    [ "${samples:-0}" -ge "$target" ] && break
    seconds=$(( seconds * target / (${samples:-1} + 1) + 5 ))
  done
  [ "${samples:-0}" -ge "$target" ] || { echo "import_fold_bench.sh: error: only ${samples:-0} samples" >&2; exit 1; }
  perf_data="$dir/perf.data"
}

# A --call-graph dwarf recording of Debian's python3 running $dwarf_seconds s of CPU time.
record_dwarf() {
  [ "$(id -u)" -eq 0 ] || { echo "import_fold_bench.sh: error: recording needs root (or pass --dwarf-data)" >&2; exit 1; }
  [ -x /usr/bin/python3 ] || { echo "import_fold_bench.sh: error: no /usr/bin/python3 (or pass --dwarf-data)" >&2; exit 1; }
  echo "recording python3 with --call-graph dwarf for ${dwarf_seconds}s of CPU time..." >&2
  perf record -F 999 --call-graph dwarf -o "$dir/dwarf.data" -- /usr/bin/python3 -c "
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.process_time() + $dwarf_seconds
while time.process_time() < end: fib(20)" 2>"$dir/dwarf.log" >/dev/null
  dwarf_data="$dir/dwarf.data"
}

# Per mille of the samples of folded text $1 whose stack reaches the outermost frame (comm first).
whole_permille() {
  awk '!/^#/ && NF { n = $NF; total += n; split($1, f, ";")
         if (f[2] == "_start" || f[2] ~ /^__libc_start_main/ || f[2] == "start_thread" || f[2] ~ /^clone3?$/) whole += n }
       END { print total ? int(1000 * whole / total) : 0 }' "$1"
}

# "WALL CPU": the fastest wall time and the smallest CPU time (user + sys of every process of
# the command) over $runs runs, in seconds. CPU time is the steadier figure on a busy machine.
best_of() {
  python3 - "$runs" "$1" <<'PY'
import resource, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2]
walls, cpus = [], []
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    if subprocess.run(["bash", "-o", "pipefail", "-c", cmd]).returncode != 0:
        sys.exit(f"import_fold_bench.sh: error: failed: {cmd}")
    walls.append(time.monotonic() - t0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
print(f"{min(walls):.3f} {min(cpus):.3f}")
PY
}

# Sum of the counts of folded lines (the last field), skipping '#' header lines.
folded_total() { awk '!/^#/ && NF { n += $NF } END { print n + 0 }' "$1"; }

[ -n "$perf_data" ] || record
[ -r "$perf_data" ] || { echo "import_fold_bench.sh: error: cannot read '$perf_data'" >&2; exit 1; }
data="$perf_data"
[ -n "$dwarf_data" ] || record_dwarf
[ -r "$dwarf_data" ] || { echo "import_fold_bench.sh: error: cannot read '$dwarf_data'" >&2; exit 1; }

# Outputs, made once outside the timings, to check that both sides folded the same samples.
perf script -i "$data" > "$dir/script.txt" 2>/dev/null
perf script report stackcollapse -i "$data" > "$dir/perf.folded" 2>/dev/null
gp-import "$dir/script.txt" | gp-fold -f folded --include-idle > "$dir/gp.folded"
gp-import "$dir/script.txt" | gp-fold > "$dir/out.col"
gp-import "$data" 2>/dev/null | gp-symbolize 2>/dev/null | gp-fold -f folded --include-idle > "$dir/native.folded"
samples=$(grep -c '^[^[:space:]]' "$dir/script.txt" || true)  # one header line per sample
perf script report stackcollapse -i "$dwarf_data" > "$dir/dwarf.perf.folded" 2>/dev/null
gp-import "$dwarf_data" 2>/dev/null | gp-symbolize 2>/dev/null | gp-fold -f folded --include-idle > "$dir/dwarf.gp.folded"

echo "timing ($runs runs each, best shown)..." >&2
t_script=$(best_of "perf script -i '$data' > /dev/null 2>&1")
t_gp_pipe=$(best_of "perf script -i '$data' 2>/dev/null | gp-import | gp-fold > /dev/null")
t_gp_only=$(best_of "gp-import '$dir/script.txt' | gp-fold > /dev/null")
t_perf_fold=$(best_of "perf script report stackcollapse -i '$data' > /dev/null 2>&1")
t_native_read=$(best_of "gp-import '$data' --no-compress > /dev/null 2>&1")
t_native=$(best_of "gp-import '$data' 2>/dev/null | gp-symbolize 2>/dev/null | gp-fold > /dev/null")
t_flame=$(best_of "gp-flame '$dir/out.col' > '$dir/flame.html'")
t_d_script=$(best_of "perf script -i '$dwarf_data' > /dev/null 2>&1")
t_d_perf_fold=$(best_of "perf script report stackcollapse -i '$dwarf_data' > /dev/null 2>&1")
t_d_read=$(best_of "gp-import '$dwarf_data' --no-compress > /dev/null 2>&1")
t_d_native=$(best_of "gp-import '$dwarf_data' 2>/dev/null | gp-symbolize 2>/dev/null | gp-fold > /dev/null")

# Column $2 of "WALL CPU" pairs; the Python part of stackcollapse is estimated as stackcollapse
# minus perf script alone (both decode the same samples; one prints text, one calls Python).
wall() { echo "${1% *}"; }
cpu() { echo "${1#* }"; }
py_part() { python3 -c "print(f'{max($1 - $2, 0):.3f}')"; }
ratio() { python3 -c "print(f'{$1 / max($2, 1e-9):.1f}x')"; }
py_wall=$(py_part "$(wall "$t_perf_fold")" "$(wall "$t_script")")
py_cpu=$(py_part "$(cpu "$t_perf_fold")" "$(cpu "$t_script")")
row() { printf '%-58s %8s %8s\n' "$1" "$2" "$3"; }

echo
echo "gp import/fold benchmark: $samples samples, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(perf version)"
echo "folded totals: gp $(folded_total "$dir/gp.folded") samples in $(grep -c . "$dir/gp.folded") stacks;" \
  "perf stackcollapse $(folded_total "$dir/perf.folded") samples in $(grep -c . "$dir/perf.folded") stacks;" \
  "gp perf.data reader $(folded_total "$dir/native.folded") samples in $(grep -c . "$dir/native.folded") stacks"
echo
row "step" "wall s" "cpu s"
row "perf script > /dev/null (perf's decoding + text alone)" $t_script
row "perf script | gp-import | gp-fold (.col, end to end)" $t_gp_pipe
row "gp-import script.txt | gp-fold (gp's part alone)" $t_gp_only
row "perf script report stackcollapse (perf's Python folding)" $t_perf_fold
row "  its Python part (stackcollapse - perf script)" "$py_wall" "$py_cpu"
row "gp-import perf.data (gp's own reader, archive out)" $t_native_read
row "gp-import perf.data | gp-symbolize | gp-fold (.col)" $t_native
row "gp-flame out.col > flame.html ($(grep -c . "$dir/out.col") lines)" $t_flame
d_samples=$(folded_total "$dir/dwarf.perf.folded")
row "dwarf ($d_samples samples): perf script (perf's unwinding + text)" $t_d_script
row "dwarf: perf script report stackcollapse" $t_d_perf_fold
row "dwarf: gp-import perf.data (gp's unwinding, archive out)" $t_d_read
row "dwarf: gp-import perf.data | gp-symbolize | gp-fold (.col)" $t_d_native
echo
row "speed-up" "wall" "cpu"
row "end to end: stackcollapse / perf script|gp-import|gp-fold" \
  "$(ratio "$(wall "$t_perf_fold")" "$(wall "$t_gp_pipe")")" "$(ratio "$(cpu "$t_perf_fold")" "$(cpu "$t_gp_pipe")")"
row "folding: stackcollapse's Python part / gp's part" \
  "$(ratio "$py_wall" "$(wall "$t_gp_only")")" "$(ratio "$py_cpu" "$(cpu "$t_gp_only")")"
row "end to end: stackcollapse / gp-import perf.data|gp-symbolize|gp-fold" \
  "$(ratio "$(wall "$t_perf_fold")" "$(wall "$t_native")")" "$(ratio "$(cpu "$t_perf_fold")" "$(cpu "$t_native")")"
row "dwarf unwinding: perf script / gp-import perf.data" \
  "$(ratio "$(wall "$t_d_script")" "$(wall "$t_d_read")")" "$(ratio "$(cpu "$t_d_script")" "$(cpu "$t_d_read")")"
row "dwarf end to end: stackcollapse / gp-import|gp-symbolize|gp-fold" \
  "$(ratio "$(wall "$t_d_perf_fold")" "$(wall "$t_d_native")")" "$(ratio "$(cpu "$t_d_perf_fold")" "$(cpu "$t_d_native")")"
echo "dwarf whole stacks (reaching _start, __libc_start_main, start_thread, clone):" \
  "gp $(whole_permille "$dir/dwarf.gp.folded") per mille, perf $(whole_permille "$dir/dwarf.perf.folded") per mille"
echo
# What is compared: both sides start from the same perf.data. perf script's decoding is common to
# both (stackcollapse runs it too, then calls Python per sample), so the folding row sets gp's
# part (gp-import + gp-fold on perf script's saved text) against stackcollapse minus perf script
# alone. The end-to-end row includes perf script's decoding on both sides.
echo "folding row: gp-import script.txt | gp-fold, against stackcollapse minus 'perf script' alone;"
echo "end-to-end row: both include perf's decoding of perf.data. Issue 2's target: folding >= 5x."
python3 -c "r = $(cpu "$t_perf_fold") / max($(cpu "$t_native"), 1e-9); print(f'target perf.data end to end (cpu): {r:.1f}x ' + ('meets' if r >= 10 else 'misses') + ' 10x')"
python3 -c "import sys; r = $py_cpu / max($(cpu "$t_gp_only"), 1e-9); print(f'target (cpu): {r:.1f}x ' + ('meets' if r >= 5 else 'misses') + ' 5x')"
python3 -c "r = $(cpu "$t_d_script") / max($(cpu "$t_d_read"), 1e-9); print(f'target dwarf unwinding (cpu): {r:.1f}x ' + ('meets' if r >= 10 else 'misses') + ' 10x')"
python3 -c "r = $(cpu "$t_d_perf_fold") / max($(cpu "$t_d_native"), 1e-9); print(f'target dwarf end to end (cpu): {r:.1f}x ' + ('meets' if r >= 10 else 'misses') + ' 10x')"
