// Writes N unique folded stacks (FlameGraph text, with gProfiler kind suffixes) for the
// browser smoke test and tests/bench/flame_bench.sh. Deterministic for a given seed.
//   node gen_stacks.mjs [N=100000] [SEED=1] > stacks.folded
import { pathToFileURL } from 'node:url';

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMS = ['java', 'python3', 'nginx', 'postgres', 'node', 'ruby', 'php-fpm', 'dotnet'];
const SUFFIX = { java: '_[j]', python3: '_[p]', ruby: '_[rb]', 'php-fpm': '_[php]', dotnet: '_[net]' };

// Call paths look like real programs: a few entry points, fan-out growing with depth, a
// runtime-specific middle and kernel frames at the leaf.
export function generateStacks(count, seed = 1) {
  const random = mulberry32(seed);
  const pick = (n) => Math.floor(random() * n);
  const seen = new Set();
  const lines = [];
  while (lines.length < count) {
    const comm = COMMS[pick(COMMS.length)];
    const depth = 6 + pick(28);
    const frames = [comm, '_start', 'main'];
    let fn = pick(16);
    for (let level = 3; level < depth; level++) {
      fn = (fn * 7 + 1 + pick(2 + level)) % 4000;
      const suffix = level > 5 && SUFFIX[comm] ? SUFFIX[comm] : '';
      frames.push('module' + (fn % 97) + '::function_' + fn + suffix);
    }
    if (random() < 0.4) frames.push('entry_SYSCALL_64_[k]', 'do_syscall_64_[k]', 'sys_' + pick(40) + '_[k]');
    const stack = frames.join(';');
    if (seen.has(stack)) continue;
    seen.add(stack);
    lines.push(stack + ' ' + (1 + pick(100)));
  }
  return lines.join('\n') + '\n';
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(process.argv[2] || 100000);
  const seed = Number(process.argv[3] || 1);
  process.stdout.write(generateStacks(count, seed));
}
