# Shares of Python functions in folded stacks (gp-fold -f folded --annotate: Python frames end in
# _[p]), for gp-record-python-bpf.bats and tests/bench/python_walk_bench.sh (which sources it).

# Percent (integer, rounded down) of the samples of folded stacks on stdin that hold a Python
# frame.
python_percent() {
  awk '{ n = $NF; total += n; if ($0 ~ /_\[p\];|_\[p\] [0-9]+$/) py += n }
       END { if (total == 0) print 0; else print int(100 * py / total) }'
}

# Per Python function, the percent of the Python samples of folded stacks on stdin whose innermost
# Python frame it is, and those samples ("spin_a 49.80 3984"); the last line is "all 100 N" (N:
# the samples with a Python frame). Names without module or class, as both samplers spell the
# function ("gpyext_work.spin_a (...)_[p]", "spin_a (...)_[p]").
leaf_python_shares() {
  awk '{ n = $NF; k = split($0, f, ";"); leaf = ""
         for (i = 1; i <= k; i++) if (f[i] ~ /_\[p\]( [0-9]+)?$/) leaf = f[i]
         if (leaf == "") next
         sub(/ \(.*/, "", leaf); sub(/.*\./, "", leaf); sub(/_\[p\].*/, "", leaf)
         by[leaf] += n; total += n }
       END { for (x in by) printf "%s %.2f %d\n", x, 100 * by[x] / total, by[x] | "sort -k2,2nr"
             close("sort -k2,2nr"); printf "all 100 %d\n", total }'
}
