# Shell functions shared by the samplers' benchmarks (record_overhead.sh, unwind_bench.sh);
# sourced, not run. The sourcing script sets:
#   bench        its name, for messages
#   tmp          its scratch directory (removed by cleanup)
#   bin          the directory of gp's tools
#   ncpu         the number of CPUs
# and defines launch_sampler NAME HZ, which starts sampler NAME at HZ in the background and
# sets sampler_pid. sampler_pid holds the running samplers' pids (several at once in the
# probe); cleanup, installed as the EXIT trap by install_cleanup, stops them.

sampler_pid=""

# On any exit (an error too), no sampler may be left running: it would sample every later run.
# One still starting may miss SIGINT: it gets SIGKILL a second later. Extra cleanup commands
# (a sysctl to restore) go in cleanup_extra.
cleanup_extra=""
cleanup() {
  if [ -n "$sampler_pid" ]; then
    kill -INT $sampler_pid 2>/dev/null && sleep 1 && kill -KILL $sampler_pid 2>/dev/null
  fi
  [ -z "$cleanup_extra" ] || eval "$cleanup_extra"
  rm -rf "$tmp"
  return 0
}
install_cleanup() { trap cleanup EXIT; }

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# quartiles: numbers on stdin -> "Q1 median Q3" (Q1 and Q3: the medians of the lower and upper halves).
quartiles() {
  sort -g | awk '{ a[NR] = $1 }
    function med(lo, hi,  n) { n = hi - lo + 1; return (n % 2) ? a[lo + (n - 1) / 2] : (a[lo + n / 2 - 1] + a[lo + n / 2]) / 2 }
    END { h = int(NR / 2); if (NR == 0) print 0, 0, 0; else if (h == 0) print a[1], a[1], a[1]; else print med(1, h), med(1, NR), med(NR - h + 1, NR) }'
}

# The median of field $3 of the lines of file $1 whose second field is sampler $2.
sampler_median() { awk -v s="$2" -v i="$3" '$2 == s { print $i }' "$1" | median; }

# Starts sampler $1 at frequency $2 in the background; sets sampler_pid. launch_sampler does not
# wait for it to attach.
start_sampler() {
  launch_sampler "$@"
  sleep 1.5  # let it load and attach
}

# Waits until process $1 has a perf event open on every CPU (up to 30 s): a sampler that gets
# SIGINT while it still sets up may miss it, and bpftrace then runs on.
wait_attached() {
  local tries f events
  for ((tries = 0; tries < 300; tries++)); do
    events=0
    for f in /proc/"$1"/fd/*; do [ "$(readlink "$f" 2>/dev/null)" != "anon_inode:[perf_event]" ] || events=$((events + 1)); done
    ((events < ncpu)) || return 0
    sleep 0.1
  done
  echo "$bench: warning: pid $1 opened no perf event on every CPU in 30 s" >&2
}

# Stops the running samplers; one still running 30 s after SIGINT is killed, with a warning.
stop_sampler() {
  local watchdog
  kill -INT $sampler_pid 2>/dev/null || true
  (
    sleep 30
    for p in $sampler_pid; do
      name=$(cat /proc/"$p"/comm 2>/dev/null) || continue
      kill -KILL "$p" 2>/dev/null && echo "$bench: warning: killed $name (pid $p), which ignored SIGINT for 30 s" >&2
    done
  ) &
  watchdog=$!
  wait $sampler_pid 2>/dev/null || true
  kill "$watchdog" 2>/dev/null || true
  wait "$watchdog" 2>/dev/null || true
  sampler_pid=""
}

# The measured window must hold only the workload's processes: gp-record snapshots every new
# process it samples, so a helper the script started there (cat, awk, bpftool, even a $(...)
# subshell) would add its snapshot to gp-record's CPU. These readers are bash builtins that set
# variables, and take no command substitution.

# cpu_ns=CPU nanoseconds of every thread of process $1 so far (schedstat: exact, unlike ticks).
read_cpu_ns() {
  local f ns rest
  cpu_ns=0
  for f in /proc/"$1"/task/*/schedstat; do
    read -r ns rest <"$f" 2>/dev/null && cpu_ns=$((cpu_ns + ns))
  done
}

# bpf_ns, bpf_runs = run time of the BPF programs process $1 holds, runs of its perf_event
# (sampling, prog_type 7) programs; bpf_pe_ns = the run time of those perf_event programs alone.
# From their fdinfo; needs kernel.bpf_stats_enabled=1.
read_bpf_stats() {
  local f key value id type ns runs
  local -A seen=()
  bpf_ns=0 bpf_runs=0 bpf_pe_ns=0
  for f in /proc/"$1"/fdinfo/*; do
    id="" type="" ns=0 runs=0
    # An fd closed since the glob (a sampler closing a file) is skipped, not an error under -e.
    { while read -r key value; do
      case "$key" in
        prog_id:) id=$value ;;
        prog_type:) type=$value ;;
        run_time_ns:) ns=$value ;;
        run_cnt:) runs=$value ;;
      esac
    done <"$f"; } 2>/dev/null || continue
    [ -n "$id" ] && [ -z "${seen[$id]:-}" ] || continue
    seen[$id]=1
    bpf_ns=$((bpf_ns + ns))
    [ "$type" = 7 ] && bpf_runs=$((bpf_runs + runs)) && bpf_pe_ns=$((bpf_pe_ns + ns))
  done
  return 0
}

# now_ns=wall clock in nanoseconds (a builtin: no date process).
read_now_ns() { now_ns=$(( ${EPOCHREALTIME/./} * 1000 )); }

# flush_s = gp-record's default flush interval at $1 Hz on this host, as its -v output names it.
read_flush_seconds() {
  flush_s=$("$bin/gp-record" -v -F "$1" -d 0.1 -o "$tmp/flush.gpa" 2>&1 |
    sed -n 's/.*flushing every \([0-9.]*\) s.*/\1/p')
  [ -n "$flush_s" ] || { echo "$bench: error: gp-record -v named no flush interval" >&2; exit 1; }
}

# window_s = whole seconds of a window at $1 Hz: $2, or two of gp-record's flush intervals if
# that is longer.
window_seconds() {
  read_flush_seconds "$1"
  window_s=$(awk -v a="$2" -v f="$flush_s" 'BEGIN { w = 2 * f; if (w > int(w)) w = int(w) + 1; print (a > w ? a : w) }')
}

# The value of session counter $2 in gp-record -v's stderr, file $1 (0 when it is absent).
session_counter() {
  sed -n 's/.*session counters:\(.*\)/\1/p' "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { v = $2 } END { print v + 0 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b * 100 : 0 }'; }
