#!/usr/bin/env bash
# gp-flame on a large profile: N unique stacks (default 100k, depth 6-36, several runtimes'
# frame kinds) as folded text -> HTML. Prints the time, the frames and the page size, the same
# with --min-width, a differential page, and - when the browser tests' node_modules exist in
# the build tree (ctest cli.gp-flame installs them) - the page's load and search time in
# headless Chromium.
#   tests/bench/flame_bench.sh [BUILD_DIR] [N]
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$src/build}
count=${2:-100000}
flame=$build/bin/gp-flame
[ -x "$flame" ] || { echo "flame_bench.sh: error: no '$flame': build gp-flame first" >&2; exit 1; }
command -v node >/dev/null || { echo "flame_bench.sh: error: needs node (scripts/install-deps.sh --test)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$src/tests/browser/gen_stacks.mjs" "$count" 1 > "$work/new.folded"
node "$src/tests/browser/gen_stacks.mjs" "$count" 2 > "$work/base.folded"

# Runs gp-flame with the given arguments; prints wall and CPU seconds (CPU = user + sys,
# the honest figure on a busy machine).
timed() {
  local TIMEFORMAT='%R %U %S' real user sys
  { time "$flame" "$@" 2> "$work/stderr"; } 2> "$work/time"
  read -r real user sys < "$work/time"
  awk -v r="$real" -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f s wall, %.2f s CPU", r, u + s }'
}
size_mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

echo "gp-flame benchmark: $count unique stacks ($(size_mb "$work/new.folded") of folded text)"
t=$(timed -v --deterministic "$work/new.folded" -o "$work/page.html")
frames=$(sed -n 's/^gp-flame: \([0-9]*\) frames.*/\1/p' "$work/stderr")
printf '  %-22s %s -> %s frames, page %s\n' "full page:" "$t" "$frames" "$(size_mb "$work/page.html")"
t=$(timed -v --deterministic --min-width 0.1 "$work/new.folded" -o "$work/pruned.html")
frames=$(sed -n 's/^gp-flame: \([0-9]*\) frames.*/\1/p' "$work/stderr")
printf '  %-22s %s -> %s frames, page %s\n' "--min-width 0.1:" "$t" "$frames" "$(size_mb "$work/pruned.html")"
t=$(timed --deterministic --diff "$work/base.folded" "$work/new.folded" -o "$work/diff.html")
printf '  %-22s %s -> page %s\n' "--diff (2 x $count):" "$t" "$(size_mb "$work/diff.html")"

modules=$build/browser-tests/node_modules
if [ -d "$modules/playwright-core" ] && [ -x /usr/bin/chromium ]; then
  (cd "$build/browser-tests" && node --input-type=module -e '
    import { chromium } from "playwright-core";
    import fs from "node:fs"; import os from "node:os"; import path from "node:path";
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), "gp-bench-chromium-"));
    const ctx = await chromium.launchPersistentContext(profile, { executablePath: "/usr/bin/chromium",
      headless: true, viewport: { width: 1280, height: 800 }, args: ["--no-sandbox", "--disable-gpu",
      "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
      "--disable-sync"] });
    for (const name of ["page.html", "pruned.html"]) {
      const page = await ctx.newPage();
      const t0 = Date.now();
      await page.goto("file://" + process.argv[1] + "/" + name);
      await page.waitForSelector("body[data-ready=\"1\"]", { timeout: 120000 });
      const load = Date.now() - t0;
      const inPage = await page.evaluate(() => window.gpFlame.renderMs);
      const t1 = Date.now();
      await page.fill("#search", "sys_");
      await page.waitForFunction(() => document.getElementById("match").textContent.startsWith("Matched"));
      const search = Date.now() - t1;
      const draw = await page.evaluate(() => window.gpFlame.lastDrawMs);
      console.log(`  chromium ${name.padEnd(12)} load ${load} ms (script ${inPage.toFixed(0)} ms), ` +
                  `search ${search} ms, redraw ${draw.toFixed(1)} ms`);
      await page.close();
    }
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
  ' "$work")
else
  echo "  (no browser timing: run ctest -R cli.gp-flame once to install playwright-core into $build/browser-tests)"
fi
