#!/usr/bin/env bash
# JSON objects with many keys: a .col whose header's application metadata holds one object of
# N keys (default 40,000; a hostile or very large header), read by gp-fold, beside Python's
# json.loads of the same header. gp's parser finds duplicate keys through a hash index, so the
# time grows linearly with N (it was quadratic: 1.6 s for 40,000 keys).
#   tests/bench/json_objects_bench.sh [BUILD_DIR] [N]
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build}
count=${2:-40000}
fold=$build/bin/gp-fold
[ -x "$fold" ] || { echo "json_objects_bench.sh: error: no '$fold': build gp-fold first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$count" > "$work/wide.col" <<'PY'
import json, sys
n = int(sys.argv[1])
md = {f"key{i}": i for i in range(n)}
print("# " + json.dumps({"application_metadata": [None, md], "metadata": {"hostname": "h"},
                         "application_metadata_enabled": True}))
print("1;;python;main 1")
PY

cpu() {  # CPU seconds (user + sys) of a command
  local TIMEFORMAT='%U %S' u s
  { time "$@" > /dev/null 2>&1; } 2> "$work/time"
  read -r u s < "$work/time"
  awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f s CPU", u + s }'
}
for n in "$count" "$((count * 4))"; do
  [ "$n" = "$count" ] || python3 - "$n" > "$work/wide.col" <<'PY'
import json, sys
n = int(sys.argv[1])
md = {f"key{i}": i for i in range(n)}
print("# " + json.dumps({"application_metadata": [None, md], "metadata": {"hostname": "h"},
                         "application_metadata_enabled": True}))
print("1;;python;main 1")
PY
  echo "$n keys: gp-fold $(cpu "$fold" -f col "$work/wide.col"), python3 json.loads $(cpu python3 -c 'import json,sys; json.loads(open(sys.argv[1]).readline()[2:])' "$work/wide.col")"
done
