// The main job's Node demo (run with --perf-basic-prof, so gp-record names its JIT frames):
// main -> checksum -> mix, for argv[2] seconds (default 10).
'use strict';

function mix(h, i) {
  h ^= i;
  h = Math.imul(h, 16777619);
  return h >>> 0;
}

function checksum(n) {
  let h = 2166136261;
  for (let i = 0; i < n; i++) h = mix(h, i);
  return h;
}

function main() {
  const seconds = Number(process.argv[2] || 10);
  const end = Date.now() + seconds * 1000;
  let sink = 0;
  while (Date.now() < end) sink ^= checksum(100000);
  return sink;
}

main();
