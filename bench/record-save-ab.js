// CPU of one run record save (issue 21), before and after a change, measured side by side: the
// record text of packages/store/src/runs/record-json.ts, with the copy `onRecordSaved` gets, and
// a whole `FsRunStore.saveRun` (to a temporary folder, with an `onRecordSaved` as the server's), from another built worktree (the "before") and from this one, in rounds that
// alternate between them, so the machine's load hits both alike. A 200-node record of a chain,
// one node changed before each save as the engine changes it (fields assigned, outputs replaced).
// Not a `*.bench.js`: it needs the other worktree, built (`tsc -b`).
// Usage: node bench/record-save-ab.js <before worktree> [saves per round, default 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [before, savesArg] = process.argv.slice(2);
if (!before) throw new Error('usage: node bench/record-save-ab.js <before worktree> [saves]');
const SAVES = Number(savesArg ?? 2000);
const NODES = 200;
const ROUNDS = 6;
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const load = (root, file) => import(pathToFileURL(join(root, 'packages', file)).href);
const { parseDagFile } = await load(here, 'spec/dist/index.js');
const { newNodeRecord } = await load(here, 'engine/dist/run/node-state.js');
const clock = { now: () => new Date(), sleep: () => Promise.resolve() };

/** A fresh running record of a 200-step chain (the engine's node shape, node-state.ts). */
const chain = () => {
  const steps = Array.from({ length: NODES }, (_, i) =>
    i === 0
      ? `  - {name: s${i}, command: "echo ${i}", output: OUT${i}}`
      : `  - {name: s${i}, command: "echo ${i}", depends: [s${i - 1}], output: OUT${i}}`,
  );
  const parsed = parseDagFile(`name: chain\nsteps:\n${steps.join('\n')}\n`, {
    location: '/tmp/chain.yaml',
    cwd: '/tmp',
  });
  if (!parsed.valid) throw new Error(parsed.errors.join('\n'));
  const dag = parsed.main.dag;
  const id = `run-${Math.random().toString(36).slice(2, 10)}`;
  return {
    name: dag.name,
    dagRunId: id,
    root: { name: dag.name, dagRunId: id },
    status: 1,
    createdAt: '2026-01-02T03:04:05.000Z',
    queuedAt: '',
    startedAt: '2026-01-02T03:04:05.000Z',
    finishedAt: '',
    log: '',
    params: [],
    nodes: dag.steps.map(newNodeRecord),
    preconditions: [],
    error: '',
    queue: dag.name,
    revision: 0,
  };
};

/** Changes the record for save `i`: a node starts (even saves) or ends (odd saves). */
const step = (r, i) => {
  const n = r.nodes[Math.floor(i / 2) % NODES];
  const at = new Date(1_800_000_000_000 + i).toISOString();
  if (i % 2 === 0) {
    n.status = 1;
    n.startedAt = at;
    n.stdout = `/logs/chain/${r.dagRunId}/${n.step.name}.out`;
    n.stderr = `/logs/chain/${r.dagRunId}/${n.step.name}.err`;
    n.pid = 10_000 + i;
  } else {
    n.status = 4;
    n.finishedAt = at;
    n.doneCount = 1;
    n.outputs = { [`OUT${i}`]: String(i) };
  }
  r.revision++;
};

/** One side: `text()` and `save()` each give the CPU µs per save of a round of SAVES saves. */
const side = async (root) => {
  const { recordText } = await load(root, 'store/dist/runs/record-json.js');
  const { FsRunStore } = await load(root, 'store/dist/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'trellis-recsave-ab-'));
  // as the server's (packages/cli/src/wiring/runtime.ts): a copy of each record for its events
  const store = new FsRunStore({
    dataDir: join(dir, 'data'),
    logDir: join(dir, 'logs'),
    clock,
    onRecordSaved: () => undefined,
  });
  const cpu = async (fn) => {
    const t = process.cpuUsage();
    await fn();
    const d = process.cpuUsage(t);
    return { cpu: (d.user + d.system) / SAVES, user: d.user / SAVES };
  };
  /** The record's text, and with `copy` the copy `onRecordSaved` is given too. */
  const text = (copy) => {
    const r = chain();
    return cpu(() => {
      for (let i = 0; i < SAVES; i++) {
        step(r, i);
        const t = recordText(r);
        if (copy) t.copy();
      }
    });
  };
  const save = async () => {
    const r = chain();
    await store.createRun(r, { dag: {} });
    return cpu(async () => {
      for (let i = 0; i < SAVES; i++) {
        step(r, i);
        await store.saveRun(r);
      }
    });
  };
  return {
    text: () => text(false),
    copy: () => text(true),
    save,
    stop: () => rmSync(dir, { recursive: true, force: true }),
  };
};

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const a = await side(resolve(before));
const b = await side(here);
const KINDS = ['text', 'copy', 'save'];
const got = { a: { text: [], copy: [], save: [] }, b: { text: [], copy: [], save: [] } };
try {
  for (let round = 0; round <= ROUNDS; round++) {
    for (const kind of KINDS) {
      const pair =
        round % 2 === 0
          ? [
              ['a', a],
              ['b', b],
            ]
          : [
              ['b', b],
              ['a', a],
            ];
      for (const [k, s] of pair) {
        const us = await s[kind]();
        if (round > 0) got[k][kind].push(us); // round 0 warms up
      }
    }
  }
} finally {
  a.stop();
  b.stop();
}
const [l1, l5] = loadavg();
console.log(
  `record save of a ${NODES}-node record, CPU µs per save (median of ${ROUNDS} rounds of ${SAVES})`,
);
for (const kind of KINDS)
  for (const part of ['cpu', 'user']) {
    const [x, y] = [a, b].map((_, j) => median(got[j === 0 ? 'a' : 'b'][kind].map((u) => u[part])));
    console.log(
      `${`${kind} ${part}`.padEnd(10)} before ${x.toFixed(1)}  after ${y.toFixed(1)}  (${((y / x - 1) * 100).toFixed(0)}%, target: lower)`,
    );
  }
console.log(`load ${l1.toFixed(2)} ${l5.toFixed(2)}`);
