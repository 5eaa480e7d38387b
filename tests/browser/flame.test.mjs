// gp-flame pages in real headless Chromium (the system's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded and the pages load from file://).
//   node --test flame.test.mjs          (tests/cli/gp-flame.bats runs it after 'npm ci')
// Environment: GP_FLAME (the gp-flame binary, default: from PATH), GP_ARTIFACTS_DIR (where
// screenshots go), GP_CHROMIUM (browser path).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { generateStacks } from './gen_stacks.mjs';

const GP_FLAME = process.env.GP_FLAME || 'gp-flame';
const CHROMIUM = process.env.GP_CHROMIUM || '/usr/bin/chromium';
const ARTIFACTS = process.env.GP_ARTIFACTS_DIR || path.join(os.tmpdir(), 'gp-flame-artifacts');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gp-flame-browser-'));
fs.mkdirSync(ARTIFACTS, { recursive: true });

// 100 samples. Under the comm "app": main 95 = compute 60 (hash 40, sort 20) + io 10 (read, a
// kernel frame) + parse 25; "other" 5. Children are laid out sorted by name.
const PROFILE = ['app;main;compute;hash 40', 'app;main;compute;sort 20', 'app;main;io;read_[k] 10',
  'app;main;parse 25', 'other;run 5'].join('\n') + '\n';
// The base of the differential test: hash grows 10 -> 40, sort shrinks 50 -> 20.
const BASE = ['app;main;compute;hash 10', 'app;main;compute;sort 50', 'app;main;parse 40'].join('\n') + '\n';

// The share of samples whose stack has a frame matching `test` (names without their
// `_[x]` kind suffix), formatted as the page shows it: computed from the input text alone.
function expectedShare(folded, test) {
  let matched = 0, total = 0;
  for (const line of folded.split('\n')) {
    if (!line) continue;
    const space = line.lastIndexOf(' ');
    const count = Number(line.slice(space + 1));
    total += count;
    if (line.slice(0, space).split(';').slice(1).some((f) => test(f.replace(/_\[[a-z]+\]$/, '')))) matched += count;
  }
  return (100 * matched / total).toFixed(2) + '%';
}

const ROW = 18;
const BACKGROUND = [250, 250, 250];
let context;

function flame(name, input, args = []) {
  const inputPath = path.join(work, name + '.folded');
  const output = path.join(work, name + '.html');
  fs.writeFileSync(inputPath, input);
  const run = spawnSync(GP_FLAME, [inputPath, '-o', output, ...args], { encoding: 'utf8' });
  assert.equal(run.status, 0, `gp-flame failed: ${run.stderr}`);
  return output;
}

async function open(htmlPath, timeout = 30000) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(pathToFileURL(htmlPath).href);
  await page.waitForSelector('body[data-ready="1"]', { timeout });
  assert.deepEqual(errors, [], 'no script errors');
  return page;
}

// Canvas geometry in page pixels, and the colour of one canvas pixel.
const canvasBox = (page) => page.locator('#canvas').boundingBox();
async function pixel(page, px, py) {
  return page.evaluate(([x, y]) => {
    const c = document.getElementById('canvas');
    const r = c.getBoundingClientRect();
    const k = c.width / r.width;
    const d = c.getContext('2d').getImageData(Math.floor((x - r.left - window.scrollX) * k),
      Math.floor((y - r.top - window.scrollY) * k), 1, 1).data;
    return [d[0], d[1], d[2]];
  }, [px, py]);
}
// A point inside a frame that its label text does not cover.
async function frameColour(page, name) {
  const r = await page.evaluate((n) => window.gpFlame.frameRect(n), name);
  assert.ok(r, `frame ${name} is drawn`);
  return pixel(page, r.x + r.w - 4, r.y + 3);
}
function hue([r, g, b]) {
  const max = Math.max(r, g, b), min = Math.min(r, g, b);
  if (max === min) return 0;
  const d = max - min;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}
async function nonBackgroundPixels(page) {
  return page.evaluate((bg) => {
    const c = document.getElementById('canvas');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] !== bg[0] || d[i + 1] !== bg[1] || d[i + 2] !== bg[2]) n++;
    return n;
  }, BACKGROUND);
}
const text = (page, selector) => page.locator(selector).textContent();
const tooltip = (page) => page.locator('#tooltip').innerText();

before(async () => {
  context = await chromium.launchPersistentContext(fs.mkdtempSync(path.join(work, 'profile-')), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 1,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-extensions'],
  });
});
after(async () => {
  await context?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

test('the page renders frames, counts, title and legend', async () => {
  const page = await open(flame('basic', PROFILE, ['--inverted', '--deterministic', '--title', 'gp <test> & co',
    '--subtitle', 'a subtitle']));
  assert.ok(await nonBackgroundPixels(page) > 20000, 'the canvas is drawn');
  assert.equal(await text(page, '#frames'), '10 frames, 100 samples');
  assert.equal(await text(page, '#title'), 'gp <test> & co');
  assert.equal(await page.title(), 'gp <test> & co');
  assert.equal(await text(page, '#subtitle'), 'a subtitle');
  const legend = await text(page, '#legend');
  assert.match(legend, /kernel/);
  assert.match(legend, /pseudo/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-basic.png'), fullPage: true });
  await page.close();
});

test('the tooltip names the frame under the mouse with its samples and share', async () => {
  const page = await open(flame('tooltip', PROFILE, ['--inverted', '--deterministic']));
  const box = await canvasBox(page);
  // parse: depth 3 (root, app, main, parse), after compute (60) and io (10) under main.
  await page.mouse.move(box.x + box.width * 0.825, box.y + 3 * ROW + ROW / 2);
  const tip = await tooltip(page);
  assert.match(tip, /^parse\n/);
  assert.match(tip, /samples: 25 \(25\.00% of all\)/);
  // The kernel frame: read, depth 4, under io.
  await page.mouse.move(box.x + box.width * 0.65, box.y + 4 * ROW + ROW / 2);
  assert.match(await tooltip(page), /^read\nkind: kernel\nsamples: 10 \(10\.00% of all\)/);
  await page.mouse.move(box.x + 5, box.y + box.height + 50);
  assert.equal(await page.locator('#tooltip').isVisible(), false);
  await page.close();
});

test('frames are coloured by kind: the kernel frame is orange', async () => {
  const page = await open(flame('kinds', PROFILE, ['--inverted', '--deterministic']));
  const h = hue(await frameColour(page, 'read'));
  assert.ok(h >= 25 && h <= 50, `kernel hue ${h}`);
  const pseudo = await frameColour(page, 'app');
  assert.ok(Math.max(...pseudo) - Math.min(...pseudo) < 8, `pseudo frames are grey: ${pseudo}`);
  await page.close();
});

test('search highlights matches and shows their share of the samples', async () => {
  const page = await open(flame('search', PROFILE, ['--inverted', '--deterministic']));
  await page.keyboard.press('Control+f');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'search');
  await page.keyboard.type('COMP');  // substring search ignores case
  await page.waitForFunction(() => document.getElementById('match').textContent !== '');
  assert.equal(await text(page, '#match'), 'Matched: ' + expectedShare(PROFILE, (f) => /comp/i.test(f)));
  assert.deepEqual(await frameColour(page, 'compute'), [230, 0, 230]);
  assert.notDeepEqual(await frameColour(page, 'parse'), [230, 0, 230]);
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-search.png'), fullPage: true });

  await page.fill('#search', '^(hash|parse)$');
  await page.check('#regex');
  const want = 'Matched: ' + expectedShare(PROFILE, (f) => /^(hash|parse)$/.test(f));
  assert.equal(want, 'Matched: 65.00%');
  await page.waitForFunction((w) => document.getElementById('match').textContent === w, want);
  await page.fill('#search', '(');
  await page.waitForFunction(() => document.getElementById('match').textContent.startsWith('invalid regex'));
  await page.click('#clear');
  assert.equal(await text(page, '#match'), '');
  assert.notDeepEqual(await frameColour(page, 'compute'), [230, 0, 230]);
  await page.close();
});

test('a click zooms into the frame; reset and Esc zoom back out', async () => {
  const page = await open(flame('zoom', PROFILE, ['--inverted', '--deterministic']));
  const box = await canvasBox(page);
  const full = await page.evaluate(() => window.gpFlame.frameRect('hash'));
  assert.ok(Math.abs(full.w - box.width * 0.4) < 1, `hash is 40% wide: ${full.w}`);
  // compute: depth 3, the first 60% of the width.
  await page.mouse.click(box.x + box.width * 0.3, box.y + 3 * ROW + ROW / 2);
  assert.equal(await text(page, '#zoomed'), 'Zoomed to: compute (60.00% of all)');
  const zoomed = await page.evaluate(() => window.gpFlame.frameRect('hash'));
  assert.ok(Math.abs(zoomed.w - box.width * 40 / 60) < 1, `hash fills 2/3 of the zoomed width: ${zoomed.w}`);
  assert.equal(await page.evaluate(() => window.gpFlame.frameRect('parse')), null, 'parse is outside the zoom');
  await page.mouse.move(zoomed.x + 10, zoomed.y + 5);
  assert.match(await tooltip(page), /samples: 40 \(40\.00% of all, 66\.67% of zoomed\)/);
  await page.fill('#search', 'sort');
  await page.waitForFunction(() => document.getElementById('match').textContent.includes('of zoomed'));
  assert.equal(await text(page, '#match'), 'Matched: 20.00% (33.33% of zoomed)');
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-zoomed.png'), fullPage: true });

  await page.click('#reset');
  assert.equal(await text(page, '#zoomed'), '');
  assert.equal(await page.locator('#reset').isDisabled(), true);
  const again = await page.evaluate(() => window.gpFlame.frameRect('hash'));
  assert.ok(Math.abs(again.w - full.w) < 0.01);

  await page.mouse.click(box.x + box.width * 0.3, box.y + 3 * ROW + ROW / 2);
  assert.equal(await page.evaluate(() => window.gpFlame.zoomed()), 'compute');
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => window.gpFlame.zoomed()), 'root');
  assert.equal(await text(page, '#match'), '');
  await page.close();
});

test('without --inverted the root is at the bottom', async () => {
  const page = await open(flame('upright', PROFILE, ['--deterministic']));
  const root = await page.evaluate(() => window.gpFlame.frameRect('root'));
  const leaf = await page.evaluate(() => window.gpFlame.frameRect('hash'));
  assert.ok(root.y > leaf.y, 'root below its callees');
  assert.equal(leaf.y - root.y, -4 * ROW);
  await page.close();
});

test('the differential page colours grown frames red and shrunk ones blue', async () => {
  const basePath = path.join(work, 'diff-base.folded');
  fs.writeFileSync(basePath, BASE);
  const page = await open(flame('diff', PROFILE, ['--inverted', '--deterministic', '--diff', basePath]));
  assert.equal(await text(page, '#frames'), '10 frames, 100 samples (base: 100 samples)');
  const [r1, g1, b1] = await frameColour(page, 'hash');  // 10% -> 40%
  assert.ok(r1 > 200 && g1 < 80 && b1 < 80, `hash is red: ${[r1, g1, b1]}`);
  const [r2, g2, b2] = await frameColour(page, 'sort');  // 50% -> 20%
  assert.ok(b2 > 200 && r2 < 80 && g2 < 80, `sort is blue: ${[r2, g2, b2]}`);
  const [r3, g3, b3] = await frameColour(page, 'compute');  // 60% -> 60%
  assert.ok(Math.abs(r3 - b3) < 10 && Math.abs(g3 - b3) < 10, `compute is neutral: ${[r3, g3, b3]}`);
  const hash = await page.evaluate(() => window.gpFlame.frameRect('hash'));
  await page.mouse.move(hash.x + 10, hash.y + 5);
  const tip = await tooltip(page);
  assert.match(tip, /samples: 40 \(40\.00% of all\)/);
  assert.match(tip, /base: 10 \(10\.00% of base\)/);
  assert.match(tip, /delta: \+30 samples, \+30\.00 points of share/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-diff.png'), fullPage: true });
  await page.close();
});

test('very deep stacks still fit the canvas', async () => {
  const frames = Array.from({ length: 3000 }, (_, i) => 'f' + i);
  const page = await open(flame('deep', 'app;' + frames.join(';') + ' 5\napp;other 5\n', ['--deterministic']));
  const size = await page.evaluate(() => [document.getElementById('canvas').height, window.gpFlame.rowHeight]);
  assert.ok(size[0] <= 32000 && size[1] >= 4, `canvas ${size[0]} px high, rows of ${size[1]} px`);
  assert.ok(await nonBackgroundPixels(page) > 1000);
  const leaf = await page.evaluate(() => window.gpFlame.frameRect('f2999'));
  // The page opens scrolled down to the root: bring the leaf back into view first.
  await page.evaluate((y) => window.scrollTo(0, y - 100), leaf.y);
  const scrollY = await page.evaluate(() => window.scrollY);
  await page.mouse.move(leaf.x + 5, leaf.y - scrollY + 1);
  assert.match(await tooltip(page), /^f2999\n/);
  await page.close();
});

test('a 136-deep stack: the first view shows the root and the widest frames', async () => {
  // The main job's page: root at the bottom. One deep Java stack beside shallow wide ones.
  const deep = Array.from({ length: 134 }, (_, i) => `java/util/concurrent/Worker${i}.run()V_[j]`);
  const input = 'java;' + deep.join(';') + ' 3\n' +
    'java;java/lang/Thread.run()V_[j];app/Server.handle()V_[j] 60\n' +
    'java;java/lang/Thread.run()V_[j];app/Server.parse()V_[j] 37\n';
  const page = await open(flame('deep136', input, ['--deterministic']));
  const view = await page.evaluate(() => ({ h: window.innerHeight, y: window.scrollY }));
  for (const name of ['java', 'java/lang/Thread.run()V', 'app/Server.handle()V']) {
    const r = await page.evaluate((n) => window.gpFlame.frameRect(n), name);
    assert.ok(r, `${name} is drawn`);
    const top = r.y - view.y;
    assert.ok(top >= 0 && top + r.h <= view.h, `${name} is in the first view (top ${top} px of ${view.h})`);
    // Nothing covers it: the canvas is what is on screen there, drawn in the frame's colour.
    const onTop = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.id, [r.x + r.w / 2, top + r.h / 2]);
    assert.equal(onTop, 'canvas');
    assert.notDeepEqual(await pixel(page, r.x + r.w - 4, r.y + 3), BACKGROUND);
  }
  const root = await page.evaluate(() => {
    const c = document.getElementById('canvas').getBoundingClientRect();
    return c.bottom;  // the root row is the canvas's last
  });
  assert.ok(root > 0 && root <= view.h, `the root row ends at ${root} px, within the ${view.h} px window`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-deep136.png') });
  // Narrow frames get a short name or none, never a stub such as "Thre..".
  const labels = await page.evaluate(() => [
    window.gpFlame.labelText('java/lang/Thread.run()V', 40), window.gpFlame.labelText('java/lang/Thread.run()V', 16),
    window.gpFlame.labelText('java/lang/Thread.run()V', 6), window.gpFlame.labelText('java/lang/Thread.run()V', 12)]);
  assert.deepEqual(labels, ['java/lang/Thread.run()V', 'Thread.run()V', '', 'Thread.run..']);
  await page.close();
});

test('a page of 100k unique stacks renders (smoke check, generous bound)', async () => {
  const folded = generateStacks(100000, 7);
  const html = flame('big', folded, ['--deterministic']);
  const size = fs.statSync(html).size;
  const started = Date.now();
  const page = await open(html, 120000);
  const loadMs = Date.now() - started;
  assert.ok(await nonBackgroundPixels(page) > 100000);
  const frames = Number((await text(page, '#frames')).split(' ')[0].replace(/,/g, ''));
  assert.ok(frames > 100000, `frames: ${frames}`);
  const t0 = Date.now();
  await page.fill('#search', 'sys_');
  await page.waitForFunction(() => document.getElementById('match').textContent.startsWith('Matched: '));
  const searchMs = Date.now() - t0;
  assert.equal(await text(page, '#match'), 'Matched: ' + expectedShare(folded, (f) => f.includes('sys_')));
  const box = await canvasBox(page);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height - 1.5 * ROW);  // a comm frame
  assert.notEqual(await page.evaluate(() => window.gpFlame.zoomed()), 'root');
  const drawMs = await page.evaluate(() => window.gpFlame.lastDrawMs);
  await page.screenshot({ path: path.join(ARTIFACTS, 'flame-100k.png') });
  console.log(`100k stacks: ${frames} frames, ${(size / 1e6).toFixed(1)} MB page, load ${loadMs} ms, ` +
    `search ${searchMs} ms, zoomed redraw ${drawMs.toFixed(1)} ms`);
  assert.ok(loadMs < 60000, `loads within 60 s (took ${loadMs} ms)`);
  await page.close();
});
