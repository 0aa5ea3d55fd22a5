// The spawner helper's memory and CPU under V8 flag sets, measured side by side (see
// packages/executors/src/process-runner/spawner-process-runner.ts): for each set, a spawner
// process runs the built spawner program (dist) with those flags, starts N `sh` steps that each
// write a line to stdout and one to stderr, 8 at a time, and 3 s after the last one its RSS
// (anonymous and file-backed) and its own CPU time are read from /proc. The sets alternate, so a
// change of the machine's load hits them alike. Not a `*.bench.js`: it compares flags.
// Usage: node bench/spawner-flags-ab.js [steps, default 300] [rounds, default 3] ['[["--flag"],…]']
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { SPAWNER_FLAGS } from '../packages/executors/dist/process-runner/spawner-process-runner.js';
import { SPAWNER_SOURCE } from '../packages/executors/dist/process-runner/spawner.source.js';
import { cpuMs, sleep } from './util.js';

const [stepsArg, roundsArg, setsArg] = process.argv.slice(2);
const STEPS = Number(stepsArg ?? 300);
const ROUNDS = Number(roundsArg ?? 3);
const SETS = setsArg ? JSON.parse(setsArg) : [['--max-semi-space-size=1'], SPAWNER_FLAGS];

const statusKb = (pid) => {
  const lines = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n');
  const kb = (key) => Number(/(\d+)/.exec(lines.find((l) => l.startsWith(key)) ?? '')?.[1]);
  return { rss: kb('VmRSS:'), anon: kb('RssAnon:'), file: kb('RssFile:') };
};

const measure = async (flags) => {
  const h = spawn(process.execPath, [...flags, '-e', SPAWNER_SOURCE], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
    env: {},
  });
  const waiting = new Map();
  h.on('message', (m) => (m.t === 'exit' ? waiting.get(m.id)() : undefined));
  let id = 0;
  const step = () =>
    new Promise((resolve) => {
      waiting.set(++id, resolve);
      const args = ['-c', 'echo out; echo err >&2'];
      const env = { PATH: '/usr/bin:/bin' };
      h.send({ t: 'spawn', id, command: 'sh', args, cwd: '/', env, drainMs: 2000 });
    });
  let left = STEPS;
  const client = async () => {
    while (left-- > 0) await step();
  };
  await Promise.all(Array.from({ length: 8 }, client));
  await sleep(3000);
  const figures = { ...statusKb(h.pid), cpu: cpuMs(h.pid) };
  h.disconnect();
  return figures;
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = SETS.map(() => []);
for (let r = 0; r < ROUNDS; r++)
  for (const [i, flags] of SETS.entries()) results[i].push(await measure(flags));
console.log(
  `spawner, ${STEPS} steps, median of ${ROUNDS} (load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
for (const [i, flags] of SETS.entries()) {
  const m = (k) => median(results[i].map((x) => x[k]));
  console.log(
    `${flags.join(' ')}: RSS ${(m('rss') / 1024).toFixed(1)} MB (anon ${(m('anon') / 1024).toFixed(1)}, file ${(m('file') / 1024).toFixed(1)}), CPU ${m('cpu')} ms`,
  );
}
