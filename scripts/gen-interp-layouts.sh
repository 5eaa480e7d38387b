#!/usr/bin/env bash
# Generates gp's per-version interpreter layout tables from each version's own headers:
#   scripts/gen-interp-layouts.sh [FAMILY...]          rewrite the tables of FAMILY (php, ruby; all)
#   scripts/gen-interp-layouts.sh --check [FAMILY...]  regenerate into a temporary file; exit 1 on a
#                                                      difference
# For each version, a small C file (scripts/layouts/FAMILY_layout_probe.c) is compiled with the
# host's compiler against that version's headers and run on the host; it prints the offsets
# (offsetof) and constants gp's sampler reads.
# PHP (libcore/src/runtime/php/php_layouts.inc): the Zend headers of Debian's php-dev package of
# the version: the host's own for 8.2 (bookworm, php8.2-dev); for the others, the package of the
# suite that ships them, fetched with 'apt-get download' by the apt of that suite's root (the root
# the tests run the interpreter in: scripts/debian-root.sh, cached) and unpacked, not installed
# (its build tools would drag in the suite's perl and automake, and experimental's do not resolve).
# Ruby (libcore/src/runtime/ruby/ruby_layouts.inc): CRuby's internal headers (vm_core.h, iseq.h,
# method.h, ...), which no binary package ships, from the Debian source package of the ruby the
# root runs ('apt-get source', patches applied), with the ruby/config.h of its ruby-dev package;
# the host's own ruby for 3.1.
# Needs root (debian-root.sh). Environment: as scripts/debian-root.sh (GP_ROOT_CACHE, ...).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
check=0
families=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    php|ruby) families+=("$arg") ;;
    *) echo "gen-interp-layouts.sh: error: usage: gen-interp-layouts.sh [--check] [php|ruby]..." >&2; exit 2 ;;
  esac
done
[ ${#families[@]} -gt 0 ] || families=(php ruby)

# version  suite  packages ("host": the host's own headers)
# (experimental's php-common is newer than its php8.5 allows: sid's is taken.)
php_versions=(
  "7.4 bullseye php7.4-cli ruby2.7"
  "8.2 host"
  "8.4 trixie php8.4-cli ruby3.3"
  "8.5 experimental php-common/sid php8.5-cli ruby3.4"
)
# The Ruby versions, in the same roots (one root per suite serves both families' tests).
ruby_versions=(
  "2.7 bullseye php7.4-cli ruby2.7"
  "3.1 host"
  "3.3 trixie php8.4-cli ruby3.3"
  "3.4 experimental php-common/sid php8.5-cli ruby3.4"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# suite_root SUITE [PACKAGE...]: the root of SUITE with PACKAGEs (scripts/debian-root.sh,
# cached); "/" for "host".
suite_root() {
  if [ "$1" = host ]; then echo /; else "$here/debian-root.sh" "$@"; fi
}

# in_root ROOT COMMAND: runs the shell COMMAND chrooted into ROOT ("/": on the host).
in_root() {
  if [ "$1" = / ]; then /bin/sh -c "$2"; else chroot "$1" /bin/sh -c "$2"; fi
}

# fetch_debs ROOT DEST PACKAGE...: downloads the PACKAGEs (NAME or NAME=VERSION) with ROOT's apt,
# unpacked (not installed) under DEST.
fetch_debs() {
  local root=$1 dest=$2 dl deb
  shift 2
  dl=$(mktemp -d "${root%/}/tmp/gp-headers-XXXXXX")
  if ! in_root "$root" "cd '${dl#"${root%/}"}' && apt-get download -qq -o APT::Sandbox::User=root $*" >&2 &&
    ! in_root "$root" "apt-get -o Acquire::Check-Valid-Until=false update -qq && cd '${dl#"${root%/}"}' && apt-get download -qq -o APT::Sandbox::User=root $*" >&2; then
    rm -rf "$dl"
    echo "gen-interp-layouts.sh: error: cannot download $* in the root '$root'" >&2
    exit 1
  fi
  mkdir -p "$dest"
  for deb in "$dl"/*.deb; do dpkg-deb -x "$deb" "$dest"; done
  rm -rf "$dl"
}

# fetch_source ROOT DEST PACKAGE VERSION: the Debian source package PACKAGE of ROOT's suite,
# unpacked (its patches applied) into DEST: VERSION if the mirror serves it, else the newest
# version of PACKAGE the mirror serves (the same series: a source package per minor version).
# ROOT's own apt fetches it, with deb-src twins of ROOT's sources in lists of its own (ROOT's
# apt state is left as it was).
fetch_source() {
  local root=$1 dest=$2 package=$3 version=$4 dl inner f o v got=""
  dl=$(mktemp -d "${root%/}/tmp/gp-source-XXXXXX")
  inner=${dl#"${root%/}"}
  mkdir -p "$dl/parts" "$dl/lists/partial" "$dl/cache/archives/partial" "$dl/get"
  sed -n 's/^deb /deb-src /p' "${root%/}/etc/apt/sources.list" >"$dl/sources.list" 2>/dev/null || true
  for f in "${root%/}"/etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && sed -n 's/^deb /deb-src /p' "$f" >>"$dl/sources.list"
  done
  for f in "${root%/}"/etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && sed 's/^Types: deb$/Types: deb-src/' "$f" >"$dl/parts/${f##*/}"
  done
  o="-o Dir::Etc::SourceList=$inner/sources.list -o Dir::Etc::SourceParts=$inner/parts"
  o="$o -o Dir::State::Lists=$inner/lists -o Dir::Cache=$inner/cache -o APT::Sandbox::User=root"
  o="$o -o Acquire::Check-Valid-Until=false"
  if ! in_root "$root" "apt-get $o update -qq" >&2; then
    rm -rf "$dl"
    echo "gen-interp-layouts.sh: error: cannot read the source lists in the root '$root'" >&2
    exit 1
  fi
  for v in "$version" $(in_root "$root" "apt-cache $o showsrc $package" | sed -n 's/^Version: //p' | sort -rV); do
    if in_root "$root" "cd '$inner/get' && apt-get $o source --download-only -qq $package=$v" >/dev/null 2>&1; then
      got=$v
      break
    fi
    rm -f "$dl/get"/*
  done
  if [ -z "$got" ]; then
    rm -rf "$dl"
    echo "gen-interp-layouts.sh: error: the mirror serves no source of $package" >&2
    exit 1
  fi
  [ "$got" = "$version" ] ||
    echo "gen-interp-layouts.sh: the mirror has no source of $package $version; using $got (same series)" >&2
  dpkg-source -x -q --no-check "$dl/get"/*.dsc "$dest" >/dev/null
  rm -rf "$dl"
}

# php_row VERSION SUITE [PACKAGE...]: the table row of one PHP version.
php_row() {
  local version=$1 suite=$2 root base="" inc
  shift 2
  if [ "$suite" != host ]; then
    root=$(suite_root "$suite" "$@")
    base="$work/php$version"
    fetch_debs "$root" "$base" "php$version-dev"
  fi
  inc=$(ls -d "$base"/usr/include/php/20*/ 2>/dev/null | head -1)
  inc=${inc%/}
  if [ -z "$inc" ] || [ ! -f "$inc/main/php.h" ]; then
    echo "gen-interp-layouts.sh: error: no PHP $version headers under '${base:-/}usr/include/php'" >&2
    exit 1
  fi
  gcc -w -I"$inc" -I"$inc/main" -I"$inc/Zend" -I"$inc/TSRM" -I"$inc/ext" \
    "$here/layouts/php_layout_probe.c" -o "$work/probe-$version"
  local row
  row=$("$work/probe-$version")
  case "$row" in
    *"// PHP $version") printf '%s\n' "$row" ;;
    *) echo "gen-interp-layouts.sh: error: the headers for PHP $version are of another version: $row" >&2; exit 1 ;;
  esac
}

# ruby_row VERSION SUITE [PACKAGE...]: the table entry of one Ruby version. CRuby's internal
# headers (vm_core.h, iseq.h, method.h, ...) are not in ruby-dev: they come from the Debian
# source package of the interpreter the root runs (ruby2.7, ruby3.1, ...); its ruby/config.h
# (made by configure) from ruby-dev. Both are cached under GP_ROOT_CACHE, per installed version.
ruby_row() {
  local version=$1 suite=$2 root base installed arch unit
  local cache="${GP_ROOT_CACHE:-/var/cache/gp/roots}"
  shift 2
  root=$(suite_root "$suite" "$@")
  installed=$(in_root "$root" "dpkg-query -W -f '\${Version}' libruby$version" 2>/dev/null) || {
    echo "gen-interp-layouts.sh: error: libruby$version is not installed in the root '$root'" >&2
    exit 1
  }
  # The headers are kept beside the roots (per installed version: fetching and unpacking a
  # source package takes minutes), only what the probe reads: *.h and symbol.c.
  base="$cache/headers-ruby$version-$installed"
  exec 7>"$base.lock"
  flock 7
  if [ ! -f "$base/.gp-complete" ]; then
    rm -rf "$base" "$base.tmp"
    echo "gen-interp-layouts.sh: fetching Ruby $version's headers into '$base' (once; cached)" >&2
    fetch_debs "$root" "$base.tmp/dev" "ruby$version-dev=$installed"
    fetch_source "$root" "$work/ruby$version-src" "ruby$version" "$installed"
    mkdir -p "$base.tmp/src"
    (cd "$work/ruby$version-src" && find . \( -name '*.h' -o -name symbol.c \) -print0 |
      tar --null -cf - -T -) | tar -xf - -C "$base.tmp/src"
    rm -rf "$work/ruby$version-src"
    touch "$base.tmp/.gp-complete"
    mv "$base.tmp" "$base"
  fi
  exec 7>&-
  arch=$(ls -d "$base"/dev/usr/include/*-linux-gnu/ruby-*/ 2>/dev/null | head -1)
  if [ -z "$arch" ] || [ ! -f "$base/src/vm_core.h" ]; then
    echo "gen-interp-layouts.sh: error: no Ruby $version headers in '$base'" >&2
    exit 1
  fi
  # ID_ENTRY_UNIT (symbols per chunk of the symbol table) is a constant of symbol.c.
  unit=$(sed -n 's/^.*ID_ENTRY_UNIT = \([0-9][0-9]*\);.*$/\1/p' "$base/src/symbol.c" | head -1)
  [ -n "$unit" ] || { echo "gen-interp-layouts.sh: error: no ID_ENTRY_UNIT in Ruby $version's symbol.c" >&2; exit 1; }
  gcc -w -DGP_ID_ENTRY_UNIT="$unit" -I"${arch%/}" -I"$base/src/include" -I"$base/src" \
    "$here/layouts/ruby_layout_probe.c" -o "$work/ruby-probe-$version"
  local entry
  entry=$("$work/ruby-probe-$version")
  case "$entry" in
    "    // Ruby $version"*) printf '%s\n' "$entry" ;;
    *) echo "gen-interp-layouts.sh: error: the headers for Ruby $version are of another version" >&2; exit 1 ;;
  esac
}

# generate FAMILY: the table of FAMILY into $work/FILE.
generate() {
  local entry
  case "$1" in
    php)
      echo "// generated by scripts/gen-interp-layouts.sh from each version's Zend headers; do not edit."
      echo "// {major, minor, api_no, eg_current_execute_data, ex_opline, ex_func, ex_prev, ex_size,"
      echo "//  fn_type, fn_name, fn_scope, fn_filename, fn_line_start, fn_size, op_lineno, str_len,"
      echo "//  str_val, ce_name}"
      for entry in "${php_versions[@]}"; do
        # shellcheck disable=SC2086
        php_row $entry
      done
      ;;
    ruby)
      echo "// generated by scripts/gen-interp-layouts.sh from each version's CRuby headers (its Debian"
      echo "// source package and ruby-dev); do not edit. One RubyLayout per version (ruby_layout.h)."
      for entry in "${ruby_versions[@]}"; do
        # shellcheck disable=SC2086
        ruby_row $entry
      done
      ;;
  esac
}

status=0
for family in "${families[@]}"; do
  case "$family" in
    php) out="$src/libcore/src/runtime/php/php_layouts.inc" ;;
    ruby) out="$src/libcore/src/runtime/ruby/ruby_layouts.inc" ;;
  esac
  generate "$family" >"$work/$family.inc"
  if [ "$check" = 1 ]; then
    if ! diff -u "$out" "$work/$family.inc"; then
      echo "gen-interp-layouts.sh: error: '$out' differs from what the headers give; run scripts/gen-interp-layouts.sh $family" >&2
      status=1
    else
      echo "gen-interp-layouts.sh: '$out' matches the headers"
    fi
  else
    cp "$work/$family.inc" "$out"
    echo "gen-interp-layouts.sh: wrote '$out'"
  fi
done
exit "$status"
