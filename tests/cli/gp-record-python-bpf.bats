#!/usr/bin/env bats
# gp-record --python-frames: CPython frames walked by the BPF program and spliced into the native
# stacks, as gProfiler's PyPerf shows them (Python frames _[p], native frames of the Python
# process _[pn], kernel frames _[k]). Records Debian's python3 running a script and a C extension
# built here against python3-dev, and checks what a user sees after `gp-symbolize | gp-fold`.
# CPython 3.9 and 3.13 run in Debian roots (scripts/debian-root.sh) as containers. Recording
# tests need root with BPF and BTF (tagged root,bpf); every recorder runs under
# `timeout`.
# bats file_tags=gp-record

load helpers
load python_shares
bats_require_minimum_version 1.5.0

setup_file() {
  PYFIX=$(mktemp -d /tmp/gp-python-bpf.XXXXXX)
  # The script's module as PyPerf names it (its whole path, "/" and "." as "."), as a regex.
  PYMOD="$(sed 's|^/||; s|[/.]|\\.|g' <<<"$PYFIX")\\.gpyext_work"
  export PYFIX PYMOD
  local src="$GP_SOURCE_DIR/tests/fixtures/src"
  # The extension as pip would build it: -O2, no frame pointers.
  # Debian's python3 (not one a version manager puts first on PATH).
  cc -O2 -g -fPIC -shared $(/usr/bin/python3-config --includes) \
    -o "$PYFIX/gpyext$(/usr/bin/python3-config --extension-suffix)" "$src/gpyext.c"
  cp "$src/gpyext_work.py" "$PYFIX/"
  chmod 755 "$PYFIX" "$PYFIX"/*
  # Other CPython versions, in containers: 3.9 (frame objects, gp's offset tables), 3.13
  # (offsets published in _Py_DebugOffsets), 3.14 and 3.15 (their evaluation loop in a part of
  # its own, past its symbol).
  make_roots "bullseye python3.9" "trixie python3.13" "sid python3.14 python3.15"
}

teardown_file() {
  rm -rf "$PYFIX"
}

setup() {
  OUT="$BATS_TEST_TMPDIR"
  WORKLOADS=()
  CONTAINERS=()
  ROOT_DIRS=()
}

teardown() {
  kill_workloads
  local c
  for c in "${CONTAINERS[@]}"; do end_container "" "$c"; done
  rm -rf "${ROOT_DIRS[@]}"
}

# start_in_root SUITE PYTHON: the class workload under the SUITE root's PYTHON in its own mount
# and pid namespaces (a container); prints its host pid.
start_in_root() {
  local root dir pid
  root=$(root_of "$1")
  dir=$(mktemp -d "$root/tmp/gp-pyframes-XXXXXX")
  ROOT_DIRS+=("$dir")
  cp "$GP_SOURCE_DIR/tests/fixtures/src/gpyext_work.py" "$dir/"
  unshare --mount --pid --fork chroot "$root" "$2" "${dir#"$root"}/gpyext_work.py" 60 class \
    >/dev/null 2>&1 &
  CONTAINERS+=($!)
  for _ in $(seq 100); do
    pid=$(cat "/proc/$!/task/$!/children" 2>/dev/null)
    [ -z "$pid" ] || break
    sleep 0.1
  done
  [ -n "$pid" ] || fail "$2 did not start in the $1 root"
  echo "${pid%% *}"
}

# Runs the workload $1 of gpyext_work.py in the background, records it by pid for 2 s
# with --python-frames at 199 Hz (and the remaining options), and folds the recording (kind
# suffixes on) into $output; gp-record's stderr is in $OUT/record.err.
record_python() {
  local what=$1
  shift
  require_command gp-symbolize
  require_command gp-fold
  # Long enough for a recorder that starts slowly on a loaded host; killed once recorded.
  PYTHONPATH="$PYFIX" /usr/bin/python3 "$PYFIX/gpyext_work.py" 60 "$what" &
  local pid=$!
  WORKLOADS+=("$pid")
  sleep 0.5
  timeout -s KILL 60 gp-record -d 2 -F 199 -p "$pid" --python-frames -o "$OUT/rec.gpa" "$@" \
    2>"$OUT/record.err" || fail "gp-record failed: $(cat "$OUT/record.err")"
  kill "$pid"
  gp-symbolize "$OUT/rec.gpa" 2>"$OUT/symbolize.err" | gp-fold -f folded --annotate >"$OUT/folded"
  run -0 cat "$OUT/folded"
}

@test "--help names --python-frames" {
  run -0 gp-record --help
  assert_output --partial '--python-frames'
}

@test "--python-frames with --sampler perf is an error, not stacks without Python frames" {
  run -1 --separate-stderr gp-record --python-frames --sampler perf -p $$ -d 1 -o "$OUT/rec.gpa"
  assert_equal "$stderr" "gp-record: error: --python-frames: Python frames are walked by the BPF sampler, not --sampler perf"
  [ ! -e "$OUT/rec.gpa" ] || fail "an archive was written"
}

@test "--python-frames where the BPF program cannot run with its walk is an error, not the perf sampler" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command setpriv
  # Not root: no BPF. Without --python-frames, gp-record falls back to the perf sampler.
  run -1 --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$GP_BUILD_DIR/bin/gp-record" --python-frames -p $$ -d 1 -o /dev/null
  assert_equal "$(grep -c 'error' <<<"$stderr")" 1
  [[ "$stderr" == "gp-record: error: --python-frames: cannot load the BPF sampler"* ]] || fail "$stderr"
  # The kernel's stack walker cannot run the Python walk.
  run -1 --separate-stderr gp-record --python-frames --stack-walker kernel -p $$ -d 1 -o /dev/null
  assert_equal "$stderr" "gp-record: error: --python-frames: the Python walk needs --stack-walker gp or auto"
}

@test "--python-frames=auto where the walk cannot run records without Python frames, not an error" {
  # bats test_tags=root,bpf
  require_root_bpf
  run -0 --separate-stderr gp-record --python-frames=auto --stack-walker kernel -p $$ -d 1 \
    -o "$OUT/rec.gpa"
  assert_equal "$(grep -c 'error\|warning' <<<"$stderr")" 0
  [[ "$stderr" == *"gp-record: --python-frames: the Python walk needs --stack-walker gp or auto: recording without Python frames"* ]] ||
    fail "$stderr"
  [ -s "$OUT/rec.gpa" ] || fail "no archive written"
}

@test "--python-frames with a value other than auto is a usage error" {
  run -2 --separate-stderr gp-record --python-frames=yes -p $$ -d 1 -o "$OUT/rec.gpa"
  [[ "$stderr" == "gp-record: error: "*"--python-frames"* ]] || fail "$stderr"
}

@test "a C extension that calls back into Python shows Python, native and Python frames in order" {
  # bats test_tags=root,bpf
  require_root_bpf
  record_python ext
  # main_py_func runs in an evaluation loop, calls ext_func through the interpreter's native
  # frames, and ext_func runs callback_py_func in an evaluation loop of its own.
  assert_line --regexp '^python3;_start_\[pn\];.*;_PyEval_EvalFrameDefault_\[pn\];([^;]+_\[p\];)*'"$PYMOD"'\.main_py_func \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\];([^;]+_\[pn\];)*ext_func_\[pn\];([^;]+_\[pn\];)*_PyEval_EvalFrameDefault_\[pn\];'"$PYMOD"'\.callback_py_func \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\]( [^;]*)? [0-9]+$'
}

@test "a Python thread in read() shows the kernel's frames under its Python frames" {
  # bats test_tags=root,bpf
  require_root_bpf
  record_python reader
  # Native frames (glibc's read inlined into its wrapper: _[i]), then the system call.
  assert_line --regexp ';'"$PYMOD"'\.reader_py_func \([^;]*\)_\[p\];([^;]+_\[(pn|i)\];)+([^;]+_\[k\];)*do_syscall_64_\[k\];'
  # The thread starts at clone3, with the threading module's frames above it.
  assert_line --regexp '^python3;clone3_\[pn\];.*;threading\.Thread\._bootstrap \([^;]*\)_\[p\];.*reader_py_func'
}

@test "NumPy's native frames sit under the Python function that called them" {
  # bats test_tags=root,bpf
  require_root_bpf
  /usr/bin/python3 -c 'import numpy' || fail "no NumPy: scripts/install-deps.sh --test installs python3-numpy"
  record_python numpy
  # numpy.sort is a Python function of NumPy's that calls into its C module (no symbols in
  # Debian's build: named by the library), which sorts.
  # Debian's numpy-*.egg-info lists no files (no installed-files.txt): gProfiler labels none of
  # its frames (py_module_version.py, _files_from_legacy), nor does gp.
  refute_output --partial '[numpy=='
  assert_line --regexp ';'"$PYMOD"'\.numpy_py_func \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\];([^;]+_\[pn?\];)*numpy\.core\.fromnumeric\.sort \([^;]*/numpy/core/fromnumeric\.py:[0-9]+\)_\[p\];([^;]+_\[pn\];)*\([^;]*/numpy/core/_multiarray_umath\.[^;]*\.so\)_\[pn\]( [^;]*)? [0-9]+$'
}

@test "99% of a CPU-bound script's samples carry Python frames, its method with its class" {
  # bats test_tags=root,bpf
  require_root_bpf
  record_python class -v
  assert_line --regexp ';'"$PYMOD"'\.Burner\.burner_method \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\]'
  local share
  share=$(python_percent <<<"$output")
  [ "$share" -ge 99 ] || fail "only $share% of the samples have Python frames: $output"
  grep -q 'python frames: 1 processes' "$OUT/record.err" || fail "$(cat "$OUT/record.err")"
}

@test "Python frames are named as gProfiler names PyPerf's: module from the path, class, package and version" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  # A package installed in a venv's site-packages as pip leaves it (tinypkg 1.2.3: a dist-info
  # with METADATA and RECORD), called by a script's function in a thread. What gProfiler gives:
  # - PyPerf's name (Granulate's bcc, examples/cpp/pyperf/PyPerfProfiler.cc, getSymbolName):
  #   "module.Class.function (file:first line)", the module being the path past
  #   .../lib/pythonX.Y/[site-packages/] ("tinypkg.__init__", "threading"), or the script's
  #   whole path with "/" as "." ("tmp.bats-run-....main");
  # - then gProfiler's label (gprofiler/profilers/python_ebpf.py 399-400 calls python.py's
  #   _add_versions_to_stacks, lines 72-92: "(file.py:N)" becomes "(file.py:N [name==version])"),
  #   for a file the RECORD of a dist-info in its last site-packages/ lists, named by METADATA
  #   (gprofiler/metadata/py_module_version.py: _get_packages_dir, _files_from_record,
  #   _get_package_name), and "standard-library==<PY_VERSION>" for a file under pythonX.Y/
  #   (_STANDARD_LIB_PATTERN, _get_python_full_version); none with --no-python-versions.
  start_venv_target
  WORKLOADS+=("$PY_PID")
  timeout -s KILL 60 gp-record -d 2 -F 199 -p "$PY_PID" --python-frames --no-python-versions \
    -o "$OUT/plain.gpa" 2>"$OUT/plain.err" &
  local plain=$!
  timeout -s KILL 60 gp-record -d 2 -F 199 -p "$PY_PID" --python-frames -o "$OUT/rec.gpa" \
    2>"$OUT/record.err" || fail "gp-record failed: $(cat "$OUT/record.err")"
  wait "$plain" || fail "gp-record --no-python-versions failed: $(cat "$OUT/plain.err")"
  local line threading main spin boot
  read -r line threading < <("$BATS_TEST_TMPDIR/venv/bin/python3" -c \
    'import threading; print(threading.Thread._bootstrap.__code__.co_firstlineno, threading.__file__)')
  boot="threading.Thread._bootstrap ($threading:$line"
  main="$(tr / . <<<"${BATS_TEST_TMPDIR#/}").main.main ($BATS_TEST_TMPDIR/main.py:2)_[p]"
  spin="tinypkg.__init__.spin ($VENV_SITE/tinypkg/__init__.py:1"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/folded"
  # In this order in one stack, the package's frame the leaf Python frame.
  awk -v b="$boot [standard-library==$PY_FULL_VERSION])_[p];" -v m=";$main;" \
    -v s=";$spin [TinyPkg==1.2.3])_[p]" '{ i = index($0, b); j = index($0, m); k = index($0, s)
      if (i > 0 && j > i && k > j && substr($0, k + length(s), 1) ~ /[; ]/) found = 1 }
      END { exit !found }' "$OUT/folded" ||
    fail "no stack with '$boot [standard-library==$PY_FULL_VERSION])', '$main', '$spin [TinyPkg==1.2.3])': $(grep -m 3 tinypkg "$OUT/folded")"
  gp-symbolize "$OUT/plain.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/plain"
  grep -q -F ";$spin)_[p]" "$OUT/plain" || fail "no '$spin)_[p]': $(grep -m 3 tinypkg "$OUT/plain")"
  grep -q -F "$boot)_[p];" "$OUT/plain" || fail "no '$boot)_[p]': $(grep -m 3 tinypkg "$OUT/plain")"
  run -1 grep -F -e "[TinyPkg==" -e "[standard-library==" "$OUT/plain"
}

@test "a whole-system recording at 999 Hz gives Python frames to 99% of a running script's samples" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  require_command gp-fold
  # A Python process that runs when the recording starts is walked from its first sample (its
  # first ones had only native frames until their announcement was read, a second or more on a
  # loaded host), and a sample taken before its unwind tables keeps its Python frames too.
  PYTHONPATH="$PYFIX" /usr/bin/python3 "$PYFIX/gpyext_work.py" 60 class &
  local pid=$!
  WORKLOADS+=("$pid")
  sleep 0.5
  timeout -s KILL 60 gp-record -d 2 -F 999 --python-frames -v -o "$OUT/rec.gpa" 2>"$OUT/record.err" ||
    fail "gp-record failed: $(cat "$OUT/record.err")"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate -p "$pid" >"$OUT/folded"
  local share samples
  samples=$(awk '{ n += $NF } END { print n + 0 }' "$OUT/folded")
  # At least 100 samples (a tenth of a CPU for 2 s), so that one sample is a point at most.
  [ "$samples" -ge 100 ] || fail "only $samples samples of the script: $(cat "$OUT/record.err")"
  share=$(python_percent <"$OUT/folded")
  [ "$share" -ge 99 ] ||
    fail "only $share% of $samples samples have Python frames: $(grep -v '_\[p\]' "$OUT/folded" | head -c 3000)"
}

# within A B NA NB: true when the percents A (of NA samples) and B (of NB samples; 0: exact) are
# within 2 points of each other, or within 4 standard errors of their difference.
within() {
  awk -v a="$1" -v b="$2" -v na="$3" -v nb="$4" 'BEGIN {
    p = a / 100; v = p * (1 - p) * (1 / (na > 0 ? na : 1) + (nb > 0 ? 1 / nb : 0))
    tol = 400 * sqrt(v); if (tol < 2) tol = 2; d = a - b; exit !(d <= tol && d >= -tol) }'
}

@test "the BPF walk and gp's user-space sampler agree on a CPU-bound script's top Python functions" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  require_command gp-runtime
  # Three functions on a fixed schedule of wall-clock time (gpyext_work.py mix: 16.18, 9.69 and
  # 6.49 ms of each 32.36-ms cycle, 20 ms times the golden ratio: the 28.75-ms cycle before it
  # was 23/16 of the sampler's 20-ms tick, whose shares it put off by up to 4 points), sampled at
  # once by both for the same 15 s. gp-record samples
  # CPU time, the user-space sampler wall-clock time: at nice -20 the script waits less for a CPU
  # (a wait weighs on the sampler's shares only), the sampler wakes on time, and gp-record is not
  # starved by the script on a loaded host.
  nice -n -20 /usr/bin/python3 "$PYFIX/gpyext_work.py" 60 mix &
  local pid=$! rec
  WORKLOADS+=("$pid")
  sleep 0.5
  nice -n -20 timeout -s KILL 90 gp-record -d 15 -F 999 -p "$pid" --python-frames \
    -o "$OUT/rec.gpa" 2>"$OUT/record.err" &
  rec=$!
  nice -n -20 timeout -s KILL 60 gp-runtime --python-mode gp -F 50 -d 15 -p "$pid" -o "$OUT/rt.gpa" \
    2>"$OUT/runtime.err" || fail "gp-runtime failed: $(cat "$OUT/runtime.err")"
  wait "$rec" || fail "gp-record failed: $(cat "$OUT/record.err")"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/bpf.folded"
  gp-fold -f folded --annotate "$OUT/rt.gpa" >"$OUT/rt.folded"
  local share
  share=$(python_percent <"$OUT/bpf.folded")
  [ "$share" -ge 99 ] || fail "only $share% of the samples have Python frames: $(head -c 3000 "$OUT/bpf.folded")"
  leaf_python_shares <"$OUT/bpf.folded" >"$OUT/bpf.shares"
  leaf_python_shares <"$OUT/rt.folded" >"$OUT/rt.shares"
  local shares="BPF: $(tr '\n' ' ' <"$OUT/bpf.shares")// sampler: $(tr '\n' ' ' <"$OUT/rt.shares")"
  # The three top functions of the BPF walk are the script's three. Each one's share is within 2
  # points of its share of the schedule, and of the sampler's share, or within what the sample
  # counts allow: 4 standard errors of the difference. gp's sampler takes at most 50 samples a
  # second (gProfiler's limit), so 15 s give it about 730 and a share's standard error of up to
  # 1.85 points; the walk samples CPU time, 3200-8100 samples at 999 Hz on a host loaded 6-25
  # tasks per CPU. Measured there, 8 runs: the walk within 1.7 points of the schedule (mean
  # offsets -0.1, -0.1, 0.0), the sampler within 2.9 (mean -0.8, +0.6, +0.3; spread 1.9, as its
  # sample count gives), the two more than 2 points apart on one function (2.2-2.5) in 4 runs of
  # 8: a strict 2-point bound between them would fail every other run.
  run -0 cut -d' ' -f1 <(head -3 "$OUT/bpf.shares")
  assert_equal "$(sort <<<"$output" | tr '\n' ' ')" "spin_a spin_b spin_c "
  local name bpf n rt m all_bpf all_rt
  all_bpf=$(awk '$1 == "all" { print $3 }' "$OUT/bpf.shares")
  all_rt=$(awk '$1 == "all" { print $3 }' "$OUT/rt.shares")
  while read -r name bpf n; do
    case $name in spin_a) m=16.18 ;; spin_b) m=9.69 ;; spin_c) m=6.49 ;; esac
    within "$bpf" "$(awk -v m="$m" 'BEGIN { print 100 * m / 32.36 }')" "$all_bpf" 0 ||
      fail "$name: $bpf% of the BPF walk's Python samples, not $m ms of 32.36: $shares"
    rt=$(awk -v n="$name" '$1 == n { print $2 }' "$OUT/rt.shares")
    within "$bpf" "${rt:-0}" "$all_bpf" "$all_rt" ||
      fail "$name: $bpf% of the BPF walk's Python samples, ${rt:-0}% of the sampler's: $shares"
  done < <(head -3 "$OUT/bpf.shares")
}

@test "a Python process started during the recording has its Python frames, to its exit" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  # Started a second after the sampler, and exits before gp-record's first drain: its frames
  # are named while it lives, its samples assembled after its exit. Two seconds of CPU time
  # (its start, without Python frames, takes about 50 ms), however loaded the host.
  timeout -s KILL 60 gp-record -F 199 --python-frames -o "$OUT/rec.gpa" -- \
    sh -c "sleep 1; exec /usr/bin/python3 '$PYFIX/gpyext_work.py' 2 class-cpu" 2>"$OUT/record.err" ||
    fail "gp-record failed: $(cat "$OUT/record.err")"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate | grep '^python3;' >"$OUT/folded"
  run -0 cat "$OUT/folded"
  assert_line --regexp ';'"$PYMOD"'\.Burner\.burner_method \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\]'
  # Its start (ld.so, the interpreter's initialization) and end have no Python frame to show.
  local share
  share=$(python_percent <"$OUT/folded")
  [ "$share" -ge 95 ] || fail "only $share% of the samples have Python frames: $output"
}

@test "a chain deeper than the walk keeps the native stack whole and is counted" {
  # bats test_tags=root,bpf
  require_root_bpf
  record_python deep -v
  # 300 frames of recursion: more than one walk reads. No stack shows a cut chain as whole.
  refute_line --regexp 'deep_py_func'
  assert_line --regexp '^python3;_start_\[pn\];.*_PyEval_EvalFrameDefault_\[pn\]'
  grep -Eq 'chains cut [1-9]' "$OUT/record.err" || fail "no cut chain counted: $(cat "$OUT/record.err")"
}

# record_bad WORKLOAD: records gpyext_work.py's WORKLOAD (a chain that loops or is rewritten,
# CPython 3.11's layout) by pid for 2 s at 199 Hz with -v; the folded stacks go into $output,
# gp-record's stderr into $OUT/record.err.
record_bad() {
  /usr/bin/python3 "$PYFIX/gpyext_work.py" 60 "$1" &
  local pid=$!
  WORKLOADS+=("$pid")
  sleep 0.5
  run -0 timeout -s KILL 60 gp-record -d 2 -F 199 -p "$pid" --python-frames -v -o "$OUT/rec.gpa"
  printf '%s\n' "$output" >"$OUT/record.err"
  kill "$pid" 2>/dev/null || :
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/folded"
  run -0 cat "$OUT/folded"
}

@test "a frame chain that loops is cut and counted, its samples shown with their native stacks" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  # The running frame's previous pointer points at itself (written with ctypes; the process
  # never returns from it). The walk stops at its bound, and no frame of the loop is shown.
  record_bad loop
  assert_line --regexp '^python3;_start_\[pn\];.*;_PyEval_EvalFrameDefault_\[pn\]'
  refute_output --partial '_[p]'
  grep -Eq 'chains cut [1-9]' "$OUT/record.err" || fail "no cut chain counted: $(cat "$OUT/record.err")"
  grep -Eq 'python\.stacks\.unspliced=[1-9]' "$OUT/record.err" || fail "$(cat "$OUT/record.err")"
}

@test "a frame chain rewritten under the sampler shows only true frames, and the others are counted" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  # The running frame's previous pointer goes in turn to its caller and to a "frame" of junk
  # (every word points at a list). Samples of the true chain show it; the others keep their
  # native stacks alone, counted as not spliced: no frame of the junk is named.
  record_bad rewrite
  assert_line --regexp ';_PyEval_EvalFrameDefault_\[pn\];'"$PYMOD"'\.<module> \([^;]*\)_\[p\];'"$PYMOD"'\.rewriting_py_func \([^;]*\)_\[p\](;| )'
  run -0 bash -c "grep -o '[^;]*_\[p\]' '$OUT/folded' | sed 's/ (.*//' | sort -u"
  local m
  m="$(tr / . <<<"${PYFIX#/}").gpyext_work"
  assert_output "$m.<module>"$'\n'"$m.rewriting_py_func"
  grep -Eq 'python\.stacks\.unspliced=[1-9]' "$OUT/record.err" || fail "$(cat "$OUT/record.err")"
}

@test "a CPython of a version gp does not know is recorded with its native stacks, and counted" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  require_command readelf
  # Debian's python3 with its Py_Version (what gp reads the version from) set to 3.99: an
  # interpreter gp has no offsets for. It runs as before (the value is informative).
  local py="$OUT/python3"
  cp "$(readlink -f /usr/bin/python3)" "$py"
  /usr/bin/python3 - "$py" <<'PY'
import struct, subprocess, sys
path = sys.argv[1]
out = subprocess.run(["readelf", "-Wsl", path], capture_output=True, text=True, check=True).stdout
sym = next(int(f[1], 16) for f in map(str.split, out.splitlines()) if f[-1:] == ["Py_Version"])
for f in map(str.split, out.splitlines()):
    if f[:1] == ["LOAD"] and int(f[2], 16) <= sym < int(f[2], 16) + int(f[4], 16):
        with open(path, "r+b") as b:
            b.seek(sym - int(f[2], 16) + int(f[1], 16))
            b.write(struct.pack("<Q", 0x036300F0))
PY
  "$py" "$PYFIX/gpyext_work.py" 60 class &
  local pid=$!
  WORKLOADS+=("$pid")
  sleep 0.5
  run -0 --separate-stderr timeout -s KILL 60 gp-record -d 2 -F 199 -p "$pid" --python-frames -v \
    -o "$OUT/rec.gpa"
  [[ "$stderr" == *"python frames: pid $pid not walked: "*"not supported"* ]] || fail "$stderr"
  [[ "$stderr" == *"python.processes.refused=1 "* ]] || fail "$stderr"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/folded"
  run -0 cat "$OUT/folded"
  # Not a Python process to gp: its native frames are plain user frames.
  assert_line --regexp '^python3;_start;.*;_PyEval_EvalFrameDefault[; ]'
  refute_output --partial '_[p'
}

@test "a process that is not Python is recorded as without --python-frames" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-symbolize
  sh -c 'while :; do :; done' &
  local pid=$!
  WORKLOADS+=("$pid")
  timeout -s KILL 60 gp-record -d 1 -F 199 -p "$pid" --python-frames -o "$OUT/rec.gpa" 2>"$OUT/record.err"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/folded"
  run -0 cat "$OUT/folded"
  assert_line --regexp '^sh;'
  refute_output --partial '_[p'
}

@test "gp-profile --python-mode pyperf gives PyPerf stacks from gp-record" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-profile
  PYTHONPATH="$PYFIX" /usr/bin/python3 "$PYFIX/gpyext_work.py" 120 ext &
  local pid=$!
  WORKLOADS+=("$pid")
  cd "$OUT"
  run --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$pid" \
    --python-mode pyperf --no-flamegraph -vv
  [ "$status" -eq 0 ] || fail "gp-profile failed: $stderr"
  [[ "$stderr" == *"--python-frames"* ]] || fail "gp-record ran without --python-frames: $stderr"
  # gp-runtime leaves Python to gp-record: no second set of Python stacks replaces these.
  grep -Eq ';ext_func_\[pn\];([^;]+_\[pn\];)*_PyEval_EvalFrameDefault_\[pn\];'"$PYMOD"'\.callback_py_func \([^;]*\)_\[p\]' out/last_profile.col ||
    fail "$(head -c 2000 out/last_profile.col)"
}

@test "gp-profile --python-mode auto keeps gp-record's PyPerf stacks of the processes it walked" {
  # bats test_tags=root,bpf
  require_root_bpf
  require_command gp-profile
  PYTHONPATH="$PYFIX" /usr/bin/python3 "$PYFIX/gpyext_work.py" 120 ext &
  local pid=$!
  WORKLOADS+=("$pid")
  cd "$OUT"
  run --separate-stderr timeout -s KILL 240 gp-profile -d 2 -f 99 -o out --pids "$pid" \
    --python-mode auto --no-flamegraph -vv
  [ "$status" -eq 0 ] || fail "gp-profile failed: $stderr"
  # gp-record walks where it can, and gp-runtime's sampler still runs for the processes it
  # cannot walk.
  [[ "$stderr" == *"--python-frames=auto"* ]] || fail "gp-record ran without --python-frames=auto: $stderr"
  [[ "$stderr" == *"--python-mode auto"* ]] || fail "gp-runtime ran without Python: $stderr"
  # The merge kept gp-record's stacks (native frames between Python frames), not the sampler's.
  grep -Eq ';ext_func_\[pn\];([^;]+_\[pn\];)*_PyEval_EvalFrameDefault_\[pn\];'"$PYMOD"'\.callback_py_func \([^;]*\)_\[p\]' out/last_profile.col ||
    fail "$(head -c 2000 out/last_profile.col)"
  ! grep -Eq '(^|;)callback_py_func \(' out/last_profile.col || fail "the sampler's stacks are there too"
}

@test "CPython 3.9, 3.13, 3.14 and 3.15 in containers get their Python frames too" {
  # bats test_tags=root,bpf
  require_root_bpf
  local p9 p13 p14 p15
  start_in_root bullseye /usr/bin/python3.9 >"$OUT/p9"
  start_in_root trixie /usr/bin/python3.13 >"$OUT/p13"
  start_in_root sid /usr/bin/python3.14 >"$OUT/p14"
  start_in_root sid /usr/bin/python3.15 >"$OUT/p15"
  p9=$(cat "$OUT/p9") p13=$(cat "$OUT/p13") p14=$(cat "$OUT/p14") p15=$(cat "$OUT/p15")
  WORKLOADS+=("$p9" "$p13" "$p14" "$p15")
  sleep 0.5
  timeout -s KILL 60 gp-record -d 2 -F 199 -p "$p9,$p13,$p14,$p15" --python-frames -o "$OUT/rec.gpa" \
    2>"$OUT/record.err" || fail "gp-record failed: $(cat "$OUT/record.err")"
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded --annotate >"$OUT/folded"
  run -0 cat "$OUT/folded"
  # 3.9's code objects have no qualified name: the method alone.
  assert_line --regexp '^python3\.9;_start_\[pn\];.*;_PyEval_EvalFrameDefault_\[pn\];tmp\.gp-pyframes-[A-Za-z0-9]{6}\.gpyext_work\.burner_method \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\]'
  assert_line --regexp '^python3\.13;_start_\[pn\];.*;_PyEval_EvalFrameDefault_\[pn\];([^;]+_\[p\];)*tmp\.gp-pyframes-[A-Za-z0-9]{6}\.gpyext_work\.Burner\.burner_method \([^;]*/gpyext_work\.py:[0-9]+\)_\[p\]'
  # 3.14 and 3.15 run the loop in its cold part (no symbol: named by the binary) under
  # PyEval_EvalCode.
  local v
  for v in 14 15; do
    assert_line --regexp "^python3\\.$v;_start_\\[pn\\];.*;PyEval_EvalCode_\\[pn\\];\\([^;]*/python3\\.$v\\)_\\[pn\\];tmp\\.gp-pyframes-[A-Za-z0-9]{6}\\.gpyext_work\\.<module> \\([^;]*\\)_\\[p\\];tmp\\.gp-pyframes-[A-Za-z0-9]{6}\\.gpyext_work\\.Burner\\.burner_method \\([^;]*/gpyext_work\\.py:[0-9]+\\)_\\[p\\]"
  done
}
