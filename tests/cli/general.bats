#!/usr/bin/env bats
# Suite-wide conventions, checked for every gp-* tool in $GP_BUILD_DIR/bin (STYLE.md §B, §C, §J,
# §K): --help with EXAMPLES, --version, coreutils-style usage errors, a man page that lists
# every option and lints clean, and committed completions equal to freshly generated ones.
# Each test checks all tools and names every tool that breaks the rule.

load helpers

# The gp tools of this build, one per line.
gp_tools() {
  local f
  for f in "$GP_BUILD_DIR"/bin/gp-*; do
    [ -x "$f" ] && basename "$f"
  done
}

# Runs `$1 TOOL` for every tool; fails listing each tool whose check failed, with its message.
for_each_tool() {
  local check=$1 tool msg failures=()
  local tools
  tools=$(gp_tools)
  [ -n "$tools" ] || fail "no gp-* tools in '$GP_BUILD_DIR/bin': build first"
  for tool in $tools; do
    if ! msg=$("$check" "$tool" 2>&1); then
      failures+=("$tool: $msg")
    fi
  done
  if [ ${#failures[@]} -gt 0 ]; then
    printf '%s\n' "${failures[@]}" >&2
    return 1
  fi
}

# The long options a tool's --help lists (hidden ones are not listed, so not required).
long_options() {
  "$1" --help | grep -E '^\s+-' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

check_help() {
  local out
  out=$("$1" --help) || { echo "--help exited $?"; return 1; }
  grep -q '^EXAMPLES' <<<"$out" || { echo "--help has no EXAMPLES section"; return 1; }
  grep -qE "^  +$1( |$)" <<<"$out" || { echo "the EXAMPLES do not show '$1' being run"; return 1; }
}

# Help text a user reads without tripping: no CLI11 artefacts such as a doubled value text
# ("TEXT:{a,b}:{a,b}") or a constraint run into the description ("...defaultExcludes: -x").
check_help_text() {
  local out
  out=$("$1" --help) || { echo "--help exited $?"; return 1; }
  if grep -E ':\{[^}]*\}:\{' <<<"$out"; then echo "doubled value text"; return 1; fi
  if grep -E '[^ ]Excludes:|[^ ]Needs:' <<<"$out"; then echo "run-together constraint"; return 1; fi
  return 0
}

check_version() {
  local out
  out=$("$1" --version) || { echo "--version exited $?"; return 1; }
  grep -qE "^$1 \(gp\) [0-9]+\.[0-9]+" <<<"$out" || { echo "--version printed '$out'"; return 1; }
}

check_unknown_option() {
  local err status=0
  err=$("$1" --bogus 2>&1 >/dev/null) || status=$?
  [ "$status" -eq 2 ] || { echo "--bogus exited $status, expected 2"; return 1; }
  grep -qxF "$1: error: unknown option '--bogus'" <<<"$err" || { echo "stderr was: $err"; return 1; }
  grep -qxF "Try '$1 --help' for more information." <<<"$err" || { echo "no Try line in: $err"; return 1; }
}

check_man_page() {
  local page="$GP_SOURCE_DIR/man/$1.1" text opt missing=()
  [ -f "$page" ] || { echo "no man page man/$1.1"; return 1; }
  # Rendered text, so the check does not depend on how the roff escapes dashes.
  text=$(mandoc -T ascii "$page" | col -b)
  for opt in $(long_options "$1"); do
    # Whole option names only: '--tid' must not be found inside '--with-tid'.
    grep -qE -- "(^|[^a-z0-9-])$opt([^a-z0-9-]|\$)" <<<"$text" || missing+=("$opt")
  done
  [ ${#missing[@]} -eq 0 ] || { echo "man/$1.1 does not document: ${missing[*]}"; return 1; }
}

check_man_sections() {
  local page="$GP_SOURCE_DIR/man/$1.1" text section missing=()
  [ -f "$page" ] || { echo "no man page man/$1.1"; return 1; }
  text=$(mandoc -T ascii "$page" | col -b)
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES \
    REQUIREMENTS OVERHEAD DEBUGGING "SEE ALSO"; do
    grep -qx "$section" <<<"$text" || missing+=("$section")
  done
  [ ${#missing[@]} -eq 0 ] || { echo "man/$1.1 lacks sections: ${missing[*]}"; return 1; }
}

lint_man_page() {
  local out
  out=$(mandoc -T lint -W warning "$1" 2>&1)
  [ -z "$out" ] || { echo "$out"; return 1; }
}

check_man_lint() {
  [ -f "$GP_SOURCE_DIR/man/$1.1" ] || { echo "no man page man/$1.1"; return 1; }
  lint_man_page "$GP_SOURCE_DIR/man/$1.1"
}

# Committed completion file of a tool for a shell.
completion_file() {
  case "$2" in
    bash) echo "$GP_SOURCE_DIR/completions/bash/$1" ;;
    zsh) echo "$GP_SOURCE_DIR/completions/zsh/_$1" ;;
    fish) echo "$GP_SOURCE_DIR/completions/fish/$1.fish" ;;
  esac
}

check_completions_current() {
  local shell file fresh
  for shell in bash zsh fish; do
    file=$(completion_file "$1" "$shell")
    [ -f "$file" ] || { echo "missing ${file#"$GP_SOURCE_DIR"/}"; return 1; }
    fresh=$("$1" --generate-completion="$shell") || { echo "--generate-completion=$shell failed"; return 1; }
    diff -u "$file" - <<<"$fresh" >/dev/null || {
      echo "${file#"$GP_SOURCE_DIR"/} is stale: run '$1 --generate-completion=$shell > ${file#"$GP_SOURCE_DIR"/}'"
      return 1
    }
  done
}

check_completions_parse() {
  local bash_file zsh_file fish_file
  bash_file=$(completion_file "$1" bash)
  zsh_file=$(completion_file "$1" zsh)
  fish_file=$(completion_file "$1" fish)
  bash -n "$bash_file" || return 1
  zsh -n "$zsh_file" || return 1
  fish --no-execute "$fish_file" || return 1
}

# The bash completion, loaded in a real bash, registers itself and offers the tool's options.
check_bash_completion_loads() {
  local file
  file=$(completion_file "$1" bash)
  bash -c '
    source "$1" || exit 1
    spec=$(complete -p "$2" 2>/dev/null) || { echo "no completion registered for $2"; exit 1; }
    fn=$(sed -n "s/.*-F \([^ ]*\) .*/\1/p" <<<"$spec")
    [ -n "$fn" ] || { echo "completion for $2 is not a function: $spec"; exit 1; }
    COMP_WORDS=("$2" "--"); COMP_CWORD=1; COMP_LINE="$2 --"; COMP_POINT=${#COMP_LINE}
    "$fn" "$2" "--" "$2"
    printf "%s\n" "${COMPREPLY[@]}" | grep -qx -- "--help" || { echo "completing \"--\" does not offer --help"; exit 1; }
  ' _ "$file" "$1"
}

@test "the build has a binary for every tool directory" {
  local dir tool missing=()
  for dir in "$GP_SOURCE_DIR"/tools/gp-*/; do
    tool=$(basename "$dir")
    [ -f "$dir/CMakeLists.txt" ] || continue
    [ -x "$GP_BUILD_DIR/bin/$tool" ] || missing+=("$tool")
  done
  [ ${#missing[@]} -eq 0 ] || fail "not built: ${missing[*]}"
  [ -n "$(gp_tools)" ] || fail "no gp-* tools in '$GP_BUILD_DIR/bin'"
}

@test "every tool's --help exits 0 and ends with EXAMPLES" {
  for_each_tool check_help
}

@test "every tool's --help reads cleanly: no doubled value lists, no run-together constraints" {
  for_each_tool check_help_text
}

@test "the README and man pages speak to users: no issue numbers or team notes" {
  run grep -nE -i '\bissues? [0-9]+|shared notes|reference notes' "$GP_SOURCE_DIR/README.md" \
    "$GP_SOURCE_DIR"/man/*.1 "$GP_SOURCE_DIR"/man/gp.7
  assert_failure
}

@test "gp(7), gp-profile(1) and the tools' help describe the same user-stack unwinding" {
  require_command mandoc
  local profile overview
  profile=$(mandoc -T ascii "$GP_SOURCE_DIR/man/gp-profile.1" | col -bx | tr -s ' \n' ' ')
  overview=$(mandoc -T ascii "$GP_SOURCE_DIR/man/gp.7" | col -bx | tr -s ' \n' ' ')
  # What the tools do: gp-record unwinds with .eh_frame tables (dwarf, auto) or frame pointers,
  # and gp-profile's --perf-mode dwarf and smart run it.
  run gp-record --help
  assert_success
  assert_output --partial '--unwind MODE:{auto,dwarf,fp}'
  run gp-profile --help
  assert_success
  assert_output --regexp '--perf-mode CHOICE=smart +System profiler: smart \(default: whole stacks, unwound with \.eh_frame tables[^)]*\), dwarf \(the same\)'
  # What the pages say.
  [[ "$overview" == *"unwound in the kernel with tables compiled from each binary's .eh_frame, or frame pointers"* ]] ||
    fail "gp.7 does not describe gp-record's unwinding: $overview"
  [[ "$profile" == *"smart and dwarf run gp-record --unwind auto and dwarf"* ]] ||
    fail "gp-profile.1 does not say what --perf-mode dwarf runs"
  [[ "$profile$overview" != *"dwarf is refused"* && "$profile$overview" != *"no DWARF"* ]] ||
    fail "a page still says DWARF unwinding is refused"
}

@test "the README folds and draws symbolized archives only, never a raw gp-record one" {
  # Shell lines that fold or draw what gp-record wrote (a raw archive names no frames).
  run awk '/^```sh/ { code = 1; next } /^```/ { code = 0 }
    code && /gp-(fold|flame)/ && /gp-record|sys\.gpa|run\.gpa/ && !/gp-symbolize/ { print NR ": " $0 }' \
    "$GP_SOURCE_DIR/README.md"
  assert_success
  assert_output ""
}

@test "every tool's --version exits 0 and names the tool and version" {
  for_each_tool check_version
}

@test "every tool rejects an unknown option with status 2 and a Try line" {
  for_each_tool check_unknown_option
}

@test "every tool has a man page that documents each long option of its --help" {
  require_command mandoc
  for_each_tool check_man_page
}

@test "every tool's man page has the house sections" {
  require_command mandoc
  for_each_tool check_man_sections
}

@test "every tool's man page passes mandoc -T lint" {
  require_command mandoc
  for_each_tool check_man_lint
}

@test "gp.7 passes mandoc -T lint" {
  require_command mandoc
  lint_man_page "$GP_SOURCE_DIR/man/gp.7"
}

@test "committed completions equal freshly generated ones" {
  for_each_tool check_completions_current
}

@test "committed completions parse in bash, zsh and fish" {
  require_command zsh
  require_command fish
  for_each_tool check_completions_parse
}

@test "the bash completion loads in bash and offers the tool's options" {
  for_each_tool check_bash_completion_loads
}

# The README's first screen has one fenced block of two lines, the first fenced block that starts
# with 'bash scripts/': the main job, then the test command.
readme_command() {
  awk -v want="$1" '/^```/ { inside = !inside; if (inside) { n++; first = 1 } next }
                    inside && NF && first { first = 0; if ($0 ~ /^bash scripts\//) block = n }
                    inside && NF && n == block { if (++line == want) { print; exit } }' \
    "$GP_SOURCE_DIR/README.md"
}

@test ".ci/run runs the README's test command" {
  local cmd
  cmd=$(readme_command 2)
  [ "$cmd" = "bash scripts/install-deps.sh --test && bash scripts/build.sh && bash scripts/test.sh" ] ||
    fail "the README's second command is '$cmd'"
  # The command itself, on a line of its own (not in a comment), after a cd to the root.
  grep -qxF "$cmd" "$GP_SOURCE_DIR/.ci/run" || fail ".ci/run does not run '$cmd'"
}

@test "scripts/test.sh without a test build says what to run first" {
  run -1 env GP_BUILD_DIR="$BATS_TEST_TMPDIR/none" bash "$GP_SOURCE_DIR/scripts/test.sh"
  assert_output --partial "test.sh: error: '$BATS_TEST_TMPDIR/none' has no test build: run 'bash scripts/install-deps.sh --test && bash scripts/build.sh' first"
}

@test "the README's first command runs the main job" {
  local cmd
  cmd=$(readme_command 1)
  [[ "$cmd" == *"scripts/install-deps.sh"* ]] || fail "first command does not install: '$cmd'"
  [[ "$cmd" == *"scripts/build.sh"* ]] || fail "first command does not build: '$cmd'"
  [[ "$cmd" == *"scripts/main-job.sh"* ]] || fail "first command does not run the main job: '$cmd'"
}
