#!/usr/bin/env bash
# Makes (once) and prints the path of a Debian root of another suite, for tests that profile
# interpreters as they run in containers: their own libc, their own mount namespace.
#   scripts/debian-root.sh SUITE [PACKAGE...]
#   scripts/debian-root.sh sid python3.14 python3.15
#   scripts/debian-root.sh experimental ruby3.4      (a sid root, PACKAGEs taken from experimental)
# SUITE is bullseye, bookworm, trixie, sid or experimental. The root is built with
# 'debootstrap --variant=minbase' from Debian's archive and kept under
# ${GP_ROOT_CACHE:-/var/cache/gp/roots}/SUITE-HASH (HASH: of the package list), so later runs
# reuse it (the suite's debootstrap base is kept too, as base-SUITE); a root missing or half-made
# is rebuilt. Prints the root's path on stdout; progress goes to stderr.
# Environment: GP_ROOT_CACHE (cache directory), GP_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "debian-root.sh: error: usage: debian-root.sh SUITE [PACKAGE...]" >&2
  exit 2
fi
suite="$1"; shift
case "$suite" in
  bullseye|bookworm|trixie|sid|experimental) ;;
  *) echo "debian-root.sh: error: unknown suite '$suite' (bullseye, bookworm, trixie, sid, experimental)" >&2; exit 2 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
  echo "debian-root.sh: error: must run as root (debootstrap, chroot)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2 ||
    { echo "debian-root.sh: error: cannot install debootstrap" >&2; exit 1; }
fi

mirror="${GP_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="${GP_ROOT_CACHE:-/var/cache/gp/roots}"
hash=$(printf '%s\n' "$suite" "$@" | sha256sum | cut -c1-12)
root="$cache/$suite-$hash"
mkdir -p "$cache"
chmod 0700 "$cache"

# One builder at a time per root: parallel tests wait for the first to finish it.
exec 9>"$root.lock"
flock 9
if [ -f "$root/.gp-root-complete" ]; then
  echo "$root"
  exit 0
fi

base_suite="$suite"
[ "$suite" = experimental ] && base_suite=sid

# The debootstrap base of a suite (the slow part, a few minutes) is kept once, beside the roots:
# every package set of that suite starts from a copy of it.
base="$cache/base-$base_suite"
exec 8>"$base.lock"
flock 8
if [ ! -f "$base/.gp-root-complete" ]; then
  rm -rf "$base.tmp" "$base"
  echo "debian-root.sh: bootstrapping a $base_suite base in '$base' (once; cached)" >&2
  if ! debootstrap --variant=minbase "$base_suite" "$base.tmp" "$mirror" >"$base.log" 2>&1; then
    echo "debian-root.sh: error: debootstrap $base_suite failed; see '$base.log'" >&2
    exit 1
  fi
  touch "$base.tmp/.gp-root-complete"
  mv "$base.tmp" "$base"
fi
exec 8>&-

work="$root.tmp"
rm -rf "$work" "$root"
cp -a "$base" "$work"
rm -f "$work/.gp-root-complete"
if [ "$suite" = experimental ]; then
  echo "deb $mirror experimental main" >"$work/etc/apt/sources.list.d/experimental.list"
fi
if [ $# -gt 0 ]; then
  echo "debian-root.sh: installing $* in a $suite root '$root' (once; cached)" >&2
  target=()
  [ "$suite" = experimental ] && target=(-t experimental)
  # Check-Valid-Until off: a mirror that serves a fixed snapshot of the archive has a sid
  # Release file past its Valid-Until date (apt refuses it otherwise: "is expired").
  # A /proc of its own (a private mount and pid namespace, gone with the command): the JDKs'
  # postinst runs java, which refuses to start without one.
  if ! unshare --mount --pid --fork --mount-proc="$work/proc" chroot "$work" /bin/sh -c 'apt-get update -qq -o Acquire::Check-Valid-Until=false && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"' \
       sh "${target[@]}" "$@" >"$root.log" 2>&1; then
    echo "debian-root.sh: error: cannot install '$*' in the $suite root; see '$root.log'" >&2
    exit 1
  fi
  chroot "$work" apt-get clean >/dev/null 2>&1 || true
fi
touch "$work/.gp-root-complete"
mv "$work" "$root"
echo "$root"
