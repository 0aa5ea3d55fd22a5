// Distributed mode (issue #6 targets, 2-core machine, two workers): enqueue-to-running latency
// p50 < 30 ms and p99 < 150 ms at 20 runs/s; 500 one-step runs through two workers in < 15 s;
// 1,000 simulated workers heartbeating every second held by one coordinator at < 25% of one core.
// A private redis-server, the coordinator and BullMQ dispatcher in this process over a file store,
// and two `trellis worker` processes (the built binary; run `tsc -b` first, as `pnpm bench` does).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../packages/core/dist/index.js';
import { Coordinator } from '../packages/coordinator/dist/index.js';
import { BullmqDispatcher, createRedis } from '../packages/dispatch/dist/remote.js';
import { parseDagFile } from '../packages/spec/dist/index.js';
import { FsRunStore } from '../packages/store/dist/index.js';
import { startRedis } from '../packages/testkit/dist/index.js';
import { pct, sleep, startWorker } from './util.js';

const DAG = parseDagFile('name: bench-one\nworkerSelector:\n  bench: "yes"\nsteps:\n  - "true"\n')
  .main.dag;

export default async function run() {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-fleet-'));
  const redis = await startRedis({ appendOnly: false });
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  const claimed = new Map(); // run id -> ms when the coordinator granted its claim
  const finals = new Map();
  let onFinal = () => undefined;
  const coordinator = new Coordinator({
    store,
    clock: systemClock,
    logDir: join(home, 'logs'),
    port: 0,
    onRunUpdate: (r) => {
      if (r.status === 1 && !claimed.has(r.dagRunId)) claimed.set(r.dagRunId, performance.now());
      if ([2, 3, 4, 6].includes(r.status)) {
        finals.set(r.dagRunId, r.status);
        onFinal();
      }
    },
  });
  await coordinator.start();
  const conn = createRedis(redis.url);
  const dispatcher = new BullmqDispatcher({ redis: conn, coordinator, clock: systemClock });
  await dispatcher.start();
  const address = `127.0.0.1:${coordinator.port}`;
  const workers = await Promise.all([
    startWorker('bench-1', address, redis.url, home, 8),
    startWorker('bench-2', address, redis.url, home, 8),
  ]);
  let n = 0;
  const submit = async () => {
    const id = `b-${++n}`;
    const now = new Date().toISOString();
    const record = {
      name: DAG.name,
      dagRunId: id,
      root: { name: DAG.name, dagRunId: id },
      status: 5,
      createdAt: now,
      queuedAt: now,
      startedAt: '',
      finishedAt: '',
      log: store.runLogPath({ name: DAG.name, dagRunId: id }),
      params: [],
      nodes: [],
      preconditions: [],
      error: '',
      queue: DAG.name,
      revision: 0,
    };
    await store.createRun(record, { dag: DAG, localDags: [] });
    const t0 = performance.now();
    await dispatcher.dispatch({ record, dag: DAG, localDags: [] });
    return { id, t0, t1: performance.now() };
  };
  const allFinal = (ids) =>
    new Promise((resolve) => {
      const check = () => ids.every((id) => finals.has(id)) && resolve();
      onFinal = check;
      check();
    });

  // Workers join and learn the queue (first dispatch makes it known).
  for (let i = 0; i < 200 && coordinator.workers().length < 2; i++) await sleep(50);
  const warm = await submit();
  await allFinal([warm.id]);
  await sleep(1_500); // both workers consume the queue

  // 1. enqueue-to-running latency at 20 runs/s for 10 s
  const sent = [];
  const start = performance.now();
  for (let i = 0; i < 200; i++) {
    const due = start + i * 50;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(await submit());
  }
  await allFinal(sent.map((s) => s.id));
  const lat = sent.map((s) => claimed.get(s.id) - s.t0);
  const put = sent.map((s) => s.t1 - s.t0);
  console.log(
    `enqueue-to-running at 20 runs/s, 200 runs, two workers: p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms (target p50 < 30, p99 < 150); of which putting the job on its queue p50 ${pct(put, 50).toFixed(1)} ms`,
  );

  // 2. 500 one-step runs through two workers
  const t500 = performance.now();
  const batch = [];
  for (let i = 0; i < 500; i++) batch.push((await submit()).id);
  await allFinal(batch);
  const secs = (performance.now() - t500) / 1000;
  const ok = batch.filter((id) => finals.get(id) === 4).length;
  console.log(
    `500 one-step runs through two workers: ${secs.toFixed(2)} s, ${ok} succeeded (target < 15 s)`,
  );

  await Promise.all(workers.map((w) => w.stop()));
  await dispatcher.close();
  await coordinator.stop();
  conn.disconnect();

  // 3. 1,000 simulated workers heartbeating every second, in a child process
  const lone = new Coordinator({ store, clock: systemClock, logDir: join(home, 'logs'), port: 0 });
  await lone.start();
  const sim = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const { CoordinatorClient } = await import(${JSON.stringify(new URL('../packages/coordinator/dist/index.js', import.meta.url).href)});
    const clock = { now: () => new Date(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
    const clients = Array.from({ length: 4 }, () => new CoordinatorClient({ address: '127.0.0.1:${lone.port}', clock }));
    const beat = (i) => clients[i % 4].heartbeat({ workerId: 'sim-' + i, labels: { pool: 'p' + (i % 10) }, capacity: 4, runningTasks: [], incarnation: 'x', accepting: true }).catch(() => undefined);
    for (let i = 0; i < 1000; i++) setTimeout(() => { beat(i); setInterval(() => beat(i), 1000); }, i);
    process.stdout.write('up\\n');
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(sim.stdout, 'data');
  await sleep(3_000); // all 1,000 are beating
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  await sleep(10_000);
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - w0;
  const share = ((cpu.user + cpu.system) / 1000 / wall) * 100;
  const healthy = lone.workers().filter((w) => w.health === 'healthy').length;
  console.log(
    `1,000 simulated workers, heartbeat every 1 s: coordinator CPU ${share.toFixed(1)}% of one core over ${(wall / 1000).toFixed(1)} s, ${healthy} healthy in the registry (target < 25%)`,
  );
  sim.kill('SIGKILL');
  await lone.stop();
  await redis.stop();
  rmSync(home, { recursive: true, force: true });
}
