// Opens a gp-flame page in headless Chromium (the system's chromium, driven by playwright-core,
// from file://) and checks that it shows what a profile holds:
//   node page_shows.mjs PAGE.html [--kind KIND]... [--search TEXT]...
// --kind: the legend names that frame kind (kernel, python, ...): frames of it are drawn.
// --search: typing TEXT in the search box (a regular expression when it starts with '^')
// matches samples. Prints one line per check; exits 1 when one fails. GP_CHROMIUM: the browser.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [page_path, ...rest] = process.argv.slice(2);
const kinds = [], searches = [];
for (let i = 0; i < rest.length; i += 2) (rest[i] === '--kind' ? kinds : searches).push(rest[i + 1]);

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gp-page-shows-'));
const context = await chromium.launchPersistentContext(work, {
  executablePath: process.env.GP_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-extensions'],
});
let failed = 0;
try {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(pathToFileURL(page_path).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
  if (errors.length) { console.log('script errors: ' + errors.join('; ')); failed = 1; }
  const legend = await page.locator('#legend').textContent();
  for (const kind of kinds) {
    const ok = legend.includes(kind);
    console.log(`kind ${kind}: ${ok ? 'in the legend' : 'missing from the legend: ' + legend}`);
    if (!ok) failed = 1;
  }
  for (const text of searches) {
    await page.setChecked('#regex', text.startsWith('^'));
    await page.fill('#search', text);
    // The page searches on the next animation frame.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const match = await page.locator('#match').textContent();
    const ok = /^Matched: /.test(match) && !/^Matched: 0\.00%/.test(match);
    console.log(`search ${text}: ${match}`);
    if (!ok) failed = 1;
  }
} finally {
  await context.close();
  fs.rmSync(work, { recursive: true, force: true });
}
process.exit(failed);
