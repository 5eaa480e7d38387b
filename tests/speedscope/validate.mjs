// Checks a speedscope file the way speedscope itself would need it:
//  1. JSON Schema validation against speedscope's published schema
//     (node_modules/speedscope/dist/release/file-format-schema.json, draft-07, via ajv);
//  2. what the schema cannot say: frame indices in range, one weight per sample, no negative
//     weights, endValue - startValue == sum of weights for "none" units.
// Then prints, for comparison with folded output:
//   profiles 1 frames N samples N total W
//   stack root;...;leaf W        (per sample, frame names root first, sorted)
// Usage: node validate.mjs FILE. Exit 1 with a reason on the first problem.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Ajv from 'ajv';

const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(require.resolve('speedscope/dist/release/file-format-schema.json'), 'utf8'));

function fail(message) {
  console.error(`validate.mjs: ${message}`);
  process.exit(1);
}

const file = process.argv[2];
if (!file) fail('usage: node validate.mjs FILE');
let doc;
try {
  doc = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  fail(`cannot parse '${file}': ${e.message}`);
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(doc)) fail(`schema: ${ajv.errorsText(validate.errors)}`);

const frames = doc.shared.frames;
const lines = [];
for (const [p, profile] of doc.profiles.entries()) {
  if (profile.type !== 'sampled') fail(`profile ${p}: type '${profile.type}', expected 'sampled'`);
  if (profile.samples.length !== profile.weights.length) {
    fail(`profile ${p}: ${profile.samples.length} samples but ${profile.weights.length} weights`);
  }
  let total = 0;
  profile.samples.forEach((stack, i) => {
    for (const f of stack) {
      if (!Number.isInteger(f) || f < 0 || f >= frames.length) fail(`profile ${p}: sample ${i}: bad frame index ${f}`);
    }
    const w = profile.weights[i];
    if (!(w >= 0)) fail(`profile ${p}: sample ${i}: bad weight ${w}`);
    total += w;
    lines.push(`stack ${stack.map((f) => frames[f].name).join(';')} ${w}`);
  });
  if (profile.unit === 'none' && profile.endValue - profile.startValue !== total) {
    fail(`profile ${p}: endValue - startValue = ${profile.endValue - profile.startValue}, weights sum to ${total}`);
  }
  console.log(`profiles ${doc.profiles.length} frames ${frames.length} samples ${profile.samples.length} total ${total}`);
}
lines.sort();
for (const l of lines) console.log(l);
