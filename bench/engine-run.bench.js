// The engine's speed on real parts (file store, /bin/sh). Targets on the 2-core machine (issue 21,
// item 3): a 200-step chain of `true` under 400 ms, 300 independent steps with maxActiveSteps 16
// under 400 ms, a one-step run from start to its final status under 8 ms; run start to first
// step under 20 ms (issue 3). Spawning `sh -c true` (~2 ms) is the floor. Measured three times:
// steps started by this process (NodeProcessRunner), as one-shot CLI commands run them (the first
// 8 by this process, the rest through a spawner: SwitchingProcessRunner), and through the spawner
// process (SpawnerProcessRunner, as the server, scheduler and workers run them). The
// main process's CPU time per run is printed too: it varies less with the machine's load than
// the wall-clock figures.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock, uuidv7Generator } from '../packages/core/dist/index.js';
import { EngineEvents } from '../packages/engine/dist/index.js';
import {
  NodeProcessRunner,
  ShellCommandRunner,
  ShellExecutor,
  SpawnerProcessRunner,
  SwitchingProcessRunner,
} from '../packages/executors/dist/index.js';
import { createLocalDispatcher } from '../packages/dispatch/dist/index.js';
import { RunService } from '../packages/services/dist/index.js';
import {
  DagFileLoader,
  FsRunStore,
  currentOwner,
  isOwnerAlive,
  processStartTime,
} from '../packages/store/dist/index.js';
import { cpuMs } from './util.js';

const setup = (processes) => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-'));
  const dags = join(home, 'dags');
  mkdirSync(dags);
  const events = new EngineEvents();
  const store = new FsRunStore({
    dataDir: join(home, 'data'),
    logDir: join(home, 'logs'),
    clock: systemClock,
  });
  const runs = new RunService({
    store,
    dags: new DagFileLoader(dags),
    clock: systemClock,
    ids: uuidv7Generator(() => Date.now()),
    processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
    local: createLocalDispatcher({
      clock: systemClock,
      executors: { shell: new ShellExecutor({ processes }) },
      commands: new ShellCommandRunner(),
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
      defaultShell: 'sh',
      events,
      store,
      children: () => runs,
    }),
  });
  return { home, dags, runs, events, processes };
};

const timeRun = async (env, name, yaml) => {
  writeFileSync(join(env.dags, `${name}.yaml`), yaml);
  let firstStepAt;
  const onStatus = (_r, _n, status) => {
    if (status === 1 && firstStepAt === undefined) firstStepAt = performance.now();
  };
  env.events.on('node:statusChanged', onStatus);
  env.processes.renew?.();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const spawner0 = spawnerCpu(env.processes);
  const started = await env.runs.start({ dag: name });
  const final = await started.done;
  const total = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const spawner = spawnerCpu(env.processes) - spawner0;
  env.events.off('node:statusChanged', onStatus);
  if (final.status !== 4)
    throw new Error(`${name} ended with status ${final.status}: ${final.error}`);
  return {
    total,
    firstStep: (firstStepAt ?? t0) - t0,
    cpu: (cpu.user + cpu.system) / 1000,
    spawner,
  };
};

const best = async (n, f) => {
  const results = [];
  for (let i = 0; i < n; i++) results.push(await f());
  const cpu = results.map((r) => r.cpu).sort((a, b) => a - b);
  const spawner = results.map((r) => r.spawner).sort((a, b) => a - b);
  results.sort((a, b) => a.total - b.total);
  const mid = Math.floor(results.length / 2);
  return { best: results[0], median: results[mid], cpu: cpu[mid], spawner: spawner[mid] };
};

/** The spawner process's CPU time so far in ms (/proc, 10 ms ticks), 0 without one. */
const spawnerCpu = (processes) => {
  const pid = processes.spawnerPid;
  if (pid === undefined) return 0;
  try {
    return cpuMs(pid);
  } catch {
    return 0;
  }
};

/**
 * A runner made anew by `make` for every run (`renew`), as every one-shot CLI command starts
 * with a new one: its first 8 steps start directly, then a spawner comes up. The previous
 * runner's spawner is ended, not left to its idle exit (one Node process each).
 */
const perRun = (make) => {
  let current = make();
  return {
    renew() {
      try {
        if (current.spawnerPid !== undefined) process.kill(current.spawnerPid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
      current = make();
    },
    start: (spec, io) => current.start(spec, io),
    get spawnerPid() {
      return current.spawnerPid;
    },
  };
};

const cpuOf = (r, steps) =>
  `main-process CPU ${r.cpu.toFixed(0)} ms median (${(r.cpu / steps).toFixed(2)} a step)` +
  (r.spawner > 0 ? `, spawner CPU ${(r.spawner / steps).toFixed(2)} ms a spawn` : '');

const measure = async (label, processes) => {
  const env = setup(processes);
  try {
    const chain = `steps:\n${Array.from({ length: 200 }, () => '  - "true"').join('\n')}\n`;
    const wide = `type: graph\nmaxActiveSteps: 16\nsteps:\n${Array.from({ length: 300 }, (_, i) => `  - {name: s${i}, command: "true"}`).join('\n')}\n`;
    const one = 'steps:\n  - "true"\n';
    await timeRun(env, 'warm', one);
    const c = await best(3, () => timeRun(env, 'chain200', chain));
    console.log(
      `[${label}] 200-step chain of true: ${c.best.total.toFixed(0)} ms best, ${c.median.total.toFixed(0)} ms median, ${cpuOf(c, 200)} (target < 400 ms)`,
    );
    const w = await best(3, () => timeRun(env, 'wide300', wide));
    console.log(
      `[${label}] 300 independent steps, maxActiveSteps 16: ${w.best.total.toFixed(0)} ms best, ${w.median.total.toFixed(0)} ms median, ${cpuOf(w, 300)} (target < 400 ms)`,
    );
    const f = await best(10, () => timeRun(env, 'one', one));
    const firsts = [];
    for (let i = 0; i < 10; i++) firsts.push((await timeRun(env, 'one', one)).firstStep);
    firsts.sort((a, b) => a - b);
    console.log(
      `[${label}] run start to first step: ${firsts[0].toFixed(1)} ms best, ${firsts[5].toFixed(1)} ms median (target < 20 ms); one-step run total ${f.median.total.toFixed(1)} ms median, ${f.cpu.toFixed(1)} ms CPU median (target < 8 ms)`,
    );
  } finally {
    rmSync(env.home, { recursive: true, force: true });
  }
};

/**
 * The floor the same minute: `/bin/sh -c true` spawned by a bare Node process (as small as the
 * spawner), 200 one after another and 300 with 16 at a time, stdout and stderr piped; what a
 * step cannot cost less than on this machine (its fork and exec cost varies with the host).
 */
const SPAWN_FLOOR = `
const { spawn } = require('node:child_process');
const one = () => new Promise((r) => {
  const c = spawn('/bin/sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: '/usr/bin:/bin' } });
  c.stdout.resume(); c.stderr.resume(); c.on('close', r);
});
(async () => {
  let t = performance.now();
  for (let i = 0; i < 200; i++) await one();
  const chain = performance.now() - t;
  t = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => { while (next++ < 300) await one(); }));
  console.log(JSON.stringify({ chain, wide: performance.now() - t }));
})();`;

const spawnFloor = () => {
  const { chain, wide } = JSON.parse(
    execFileSync(process.execPath, ['-e', SPAWN_FLOOR]).toString(),
  );
  console.log(
    `[floor] bare Node spawning sh -c true: 200 one after another ${chain.toFixed(0)} ms (${(chain / 200).toFixed(1)} ms each), 300 with 16 at a time ${wide.toFixed(0)} ms (the targets assume ~2 ms a spawn)`,
  );
};

export default async function run() {
  spawnFloor();
  await measure('in process', new NodeProcessRunner());
  await measure(
    'one-shot CLI',
    perRun(() => new SwitchingProcessRunner()),
  );
  const spawner = new SpawnerProcessRunner();
  await measure('spawner', spawner);
}
