#!/usr/bin/env bats
# gp-record --unwind-cache: unwind tables kept on disk by build-id. A second recording of a
# process that maps libLLVM loads every table from the cache and builds none; a corrupted or
# planted entry (a flipped byte, another binary's table, a symlink, another user's file) and a
# cache directory that is a symlink are refused with a warning, never used, and the table is
# built again; a cache directory that is full or read-only is a warning, and the stacks are
# whole as without a cache. Recording tests need root with BPF and BTF (tagged root,bpf).
# bats file_tags=gp-record

load helpers
bats_require_minimum_version 1.5.0

setup() {
  OUT="$BATS_TEST_TMPDIR"
  CACHE="$OUT/cache"
  WORKLOADS=()
  LLVM=$(ls /usr/lib/x86_64-linux-gnu/libLLVM-*.so.1 2>/dev/null | head -n 1)
  [ -n "$LLVM" ] || fail "no libLLVM installed (scripts/install-deps.sh installs clang, which maps it)"
  # Entries are named <build-id>.v<format version>.gpuw; the version is the source's.
  local version
  version=$(sed -n 's/.*kTableEntryVersion = \([0-9]*\);.*/\1/p' "$GP_SOURCE_DIR/libcore/include/gp/unwind/table_cache.h")
  [ -n "$version" ] || fail "no kTableEntryVersion in table_cache.h"
  LLVM_ENTRY="$CACHE/$(readelf -n "$LLVM" | awk '/Build ID/ { print $3 }').v$version.gpuw"
  LIBC_ENTRY="$CACHE/$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/ { print $3 }').v$version.gpuw"
}

teardown() {
  kill_workloads
  [ -z "${MOUNTED:-}" ] || umount "$MOUNTED" 2>/dev/null || true
}

stderr_has() {
  [[ "$stderr" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $stderr"
}

# Starts python3 with libLLVM loaded, spinning; its pid in PID.
start_llvm_process() {
  /usr/bin/python3 -c "import ctypes, time
ctypes.CDLL('$LLVM')
t = time.time()
while time.time() - t < 600: pass" &
  PID=$!
  WORKLOADS+=("$PID")
  # Until libLLVM is mapped.
  for _ in $(seq 100); do grep -q libLLVM "/proc/$PID/maps" 2>/dev/null && return 0; sleep 0.05; done
  fail "python3 did not map $LLVM"
}

# Records PID for half a second with the cache in $1 (default $CACHE); stderr in $stderr.
record_cached() {
  run -0 --separate-stderr timeout -s KILL 60 gp-record -d 0.5 -p "$PID" -v \
    --unwind-cache "${1:-$CACHE}" -o "$OUT/rec.gpa"
}

# The value of counter $1 in $stderr (0 when absent).
counter() {
  if [[ "$stderr" =~ $1=([0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; else echo 0; fi
}

expect_counter() {
  local v
  v=$(counter "$1")
  [ "$v" "$2" "$3" ] || fail "$1=$v, expected $2 $3; stderr: $stderr"
}

@test "a second recording loads libLLVM's table from the cache and builds none" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_llvm_process
  record_cached
  expect_counter unwind.tables.built -ge 5
  expect_counter unwind.tables.cache_written -ge 5
  [ -f "$LLVM_ENTRY" ] || fail "no entry for libLLVM ($LLVM_ENTRY): $(ls -la "$CACHE")"
  [ "$(stat -c '%a %U' "$CACHE")" = "700 root" ] || fail "cache directory: $(stat -c '%a %U' "$CACHE")"
  [ "$(stat -c '%a' "$LLVM_ENTRY")" = 600 ] || fail "entry mode $(stat -c '%a' "$LLVM_ENTRY")"
  record_cached
  expect_counter unwind.tables.built -eq 0
  expect_counter unwind.tables.cache_hits -ge 5
  expect_counter unwind.tables.cache_refused -eq 0
  expect_counter unwind.tables.loaded -ge 5
  [[ "$stderr" != *warning* ]] || fail "warnings: $stderr"
  # With the cache off, every table is built again.
  record_cached none
  expect_counter unwind.tables.built -ge 5
  expect_counter unwind.tables.cache_hits -eq 0
}

@test "a corrupted or planted cache entry is refused, rebuilt and never used" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_llvm_process
  record_cached
  [ -f "$LLVM_ENTRY" ] && [ -f "$LIBC_ENTRY" ] || fail "entries missing: $(ls "$CACHE")"
  local good
  good=$(sha256sum <"$LLVM_ENTRY")
  # A flipped byte in libLLVM's rows.
  printf '\x5a' | dd of="$LLVM_ENTRY" bs=1 seek=100000 conv=notrunc status=none
  record_cached
  stderr_has "refused '$LLVM_ENTRY' (bad checksum)"
  expect_counter unwind.tables.cache_refused -eq 1
  expect_counter unwind.tables.built -eq 1
  [ "$(sha256sum <"$LLVM_ENTRY")" = "$good" ] || fail "the entry was not rebuilt as it was"
  # libc's table planted under libLLVM's build-id.
  cp "$LIBC_ENTRY" "$LLVM_ENTRY"
  record_cached
  stderr_has "refused '$LLVM_ENTRY' (entry is for another build-id)"
  expect_counter unwind.tables.built -eq 1
  # A symlink to libc's entry.
  rm "$LLVM_ENTRY"
  ln -s "$LIBC_ENTRY" "$LLVM_ENTRY"
  record_cached
  stderr_has "refused '$LLVM_ENTRY' (a symlink)"
  expect_counter unwind.tables.built -eq 1
  [ -f "$LIBC_ENTRY" ] || fail "the symlink's target was removed"
  # Another user's file, and one anyone can write.
  chown nobody "$LLVM_ENTRY"
  record_cached
  stderr_has "refused '$LLVM_ENTRY' (owned by uid $(id -u nobody))"
  chmod 666 "$LLVM_ENTRY"
  record_cached
  stderr_has "refused '$LLVM_ENTRY' (writable by other users)"
  expect_counter unwind.tables.built -eq 1
  # Rebuilt each time: the entry is good again.
  record_cached
  expect_counter unwind.tables.built -eq 0
  expect_counter unwind.tables.cache_refused -eq 0
}

@test "a cache directory that is a symlink or writable by others is not used" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_llvm_process
  mkdir -m 700 "$OUT/real"
  ln -s "$OUT/real" "$CACHE"
  record_cached
  stderr_has "unwind table cache '$CACHE' not used: it is a symlink"
  expect_counter unwind.tables.built -ge 5
  [ -z "$(ls -A "$OUT/real")" ] || fail "written through the symlink: $(ls "$OUT/real")"
  rm "$CACHE"
  mkdir -m 777 "$CACHE"
  record_cached
  stderr_has "unwind table cache '$CACHE' not used: writable by other users"
  [ -z "$(ls -A "$CACHE")" ] || fail "written into a world-writable directory: $(ls "$CACHE")"
}

# Records PID for a second at 999 Hz with the cache in $CACHE; stderr in $stderr.
record_sampled() {
  run -0 --separate-stderr timeout -s KILL 60 gp-record -d 1 -F 999 -p "$PID" -v \
    --unwind-cache "$CACHE" -o "$OUT/rec.gpa"
}

# Permille of the samples of $OUT/rec.gpa (symbolized, folded) whose stack reaches _start.
whole_permille_of_recording() {
  gp-symbolize "$OUT/rec.gpa" 2>/dev/null | gp-fold -f folded |
    awk '{ n = $NF; total += n; split($1, f, ";"); if (f[2] == "_start") whole += n }
         END { if (total == 0) print 0; else print int(1000 * whole / total) }'
}

@test "a cache directory that is full or read-only: a warning, tables built, stacks whole" {
  # bats test_tags=root,bpf
  require_root_bpf
  start_llvm_process
  mkdir -m 700 "$CACHE"
  # 64 KiB: libLLVM's table (megabytes) cannot be written.
  mount -t tmpfs -o size=64k,mode=700 gp-test-cache "$CACHE" || fail "cannot mount a tmpfs"
  MOUNTED=$CACHE
  record_sampled
  stderr_has "unwind table cache '$CACHE': cannot write entries"
  expect_counter unwind.tables.cache_write_failed -ge 1
  expect_counter unwind.tables.built -ge 5
  local whole
  whole=$(whole_permille_of_recording)
  [ "$whole" -ge 990 ] || fail "only $whole per mille of the stacks are whole with a full cache"
  [ -z "$(find "$CACHE" -name '*.tmp*')" ] || fail "half-written entries left: $(ls -la "$CACHE")"
  mount -o remount,ro "$CACHE"
  record_sampled
  stderr_has "unwind table cache '$CACHE': cannot write entries (Read-only file system)"
  expect_counter unwind.tables.built -ge 5
  whole=$(whole_permille_of_recording)
  [ "$whole" -ge 990 ] || fail "only $whole per mille of the stacks are whole with a read-only cache"
}
