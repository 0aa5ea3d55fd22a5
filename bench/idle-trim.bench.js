// The daemon heap trim (packages/cli/src/wiring/daemon-heap.ts) in a process allocating slowly
// (~100 KiB of short-lived objects a check, a worker's heartbeats): full GCs over 600 checks
// (10 minutes of a daemon) when it arms on the whole used heap against the old generation only.
// The young generation is set to 2 x 8 MB (a process whose young generation grew before
// `--semi-space-growth-factor=1`); checks run back to back, the timing is not what is measured.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '../packages/cli/dist/wiring');
const module = pathToFileURL(join(dist, 'daemon-heap.js')).href;

const child = (mode) => `
import { setFlagsFromString } from 'node:v8';
import { IdleHeapTrim, v8Heap } from '${module}';
setFlagsFromString('--semi-space-growth-factor=1');
const real = v8Heap();
const trim = new IdleHeapTrim(${mode === 'total' ? '{ ...real, old: real.used }' : 'real'});
const keep = [];
let n = 0;
for (let i = 0; i < 600; i++) {
  let junk = [];
  for (let j = 0; j < 400; j++) junk.push({ j, s: 'x'.repeat(64) + j });
  if (i % 10 === 0) keep.push({ i });
  junk = null;
  if (trim.check()) n++;
}
console.log(n);`;

const gcs = (mode) =>
  execFileSync(
    process.execPath,
    ['--min-semi-space-size=8', '--input-type=module', '-e', child(mode)],
    { encoding: 'utf8' },
  ).trim();

export default async function run() {
  for (let i = 0; i < 3; i++) {
    console.log(
      `slow allocator, full GCs over 600 checks: armed on the whole used heap ${gcs('total')},` +
        ` on the old generation ${gcs('old')} (target: 0)`,
    );
  }
}
