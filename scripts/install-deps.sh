#!/usr/bin/env bash
# Installs everything gp needs from Debian 12's packages.
#   scripts/install-deps.sh          build + run dependencies
#   scripts/install-deps.sh --test   also what the test suites and benchmarks use
set -euo pipefail

want_test=0
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1 ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: error: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: error: must run as root (it calls apt-get)" >&2
  exit 1
fi

build_pkgs=(
  build-essential cmake pkg-config git
  capnproto libcapnp-dev liblz4-dev zlib1g-dev libcli11-dev
  libelf-dev libdw-dev libdebuginfod-dev elfutils
  libbpf-dev bpftool clang llvm
  libcurl4-openssl-dev
  libiberty-dev        # the demangler of binutils and gdb (C++, Rust legacy and v0)
  linux-perf
)
test_pkgs=(
  libgtest-dev libgmock-dev googletest
  bats bats-assert bats-support
  chromium
  golang-go golang-github-google-pprof-dev
  python3 jq
  debootstrap          # tests: interpreters of other Debian suites run in cached roots (scripts/debian-root.sh)
  debuginfod
  mandoc
  libclang-rt-14-dev   # libFuzzer + sanitizer runtimes (clang-14 only recommends them)
  zsh fish             # the completion tests parse the generated scripts for real
  clang-format         # scripts/format.sh --check
  lld                  # links the cross-arch/big-endian build-id fixtures (tests/unit/elf.cmake)
  nodejs               # tests/browser: gp-flame pages in headless chromium via playwright-core
  bpftrace             # tests/bench/record_overhead.sh compares gp-record with bpftrace profile:hz
  openjdk-17-jdk-headless  # gp-runtime: real JVMs profiled through jcmd/JFR
  python3-dev          # gp-runtime: the Python test builds a C extension
  python3-venv         # gp-runtime: the package-version test runs a script in a real venv
  python3-numpy        # gp-record --python-frames: NumPy's native frames under the Python line that called them
  ruby                 # gp-runtime: Ruby discovery and appids
  php8.2-cli           # gp-runtime: gp's PHP sampler profiles real php processes
  php8.2-dev           # gp-runtime: the PHP layout test checks offsets against the Zend headers
)

pkgs=("${build_pkgs[@]}")
if [ "$want_test" -eq 1 ]; then pkgs+=("${test_pkgs[@]}"); fi
# npm for tests/browser ('npm ci'); a nodejs build that bundles its own npm needs no package.
if [ "$want_test" -eq 1 ] && ! command -v npm >/dev/null 2>&1; then pkgs+=(npm); fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#pkgs[@]} packages already installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
