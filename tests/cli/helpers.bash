# Shared setup for gp's bats suites. CTest sets GP_BUILD_DIR and GP_SOURCE_DIR; when a suite
# is run by hand, they default to ./build and the repository root.
: "${GP_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${GP_BUILD_DIR:=$GP_SOURCE_DIR/build}"
export GP_SOURCE_DIR GP_BUILD_DIR
export PATH="$GP_BUILD_DIR/bin:$PATH"
export BATS_LIB_PATH="${BATS_LIB_PATH:-/usr/lib/bats}"
bats_load_library bats-support
bats_load_library bats-assert

# Skips a test (with the reason) unless running as root with BPF and BTF available.
require_root_bpf() {
  [ "$(id -u)" -eq 0 ] || skip "needs root"
  [ -r /sys/kernel/btf/vmlinux ] || skip "needs kernel BTF (/sys/kernel/btf/vmlinux)"
}

# Fails the test unless a command exists.
require_command() {
  command -v "$1" >/dev/null 2>&1 || fail "missing command '$1' (scripts/install-deps.sh --test installs it)"
}
