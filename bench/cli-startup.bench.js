// Start-up of the `trellis` binary, unbundled (packages/cli/bin/trellis.js over the tsc output
// and node_modules) against the bundled one of the packed package (scripts/package.mjs; issue
// 21: `trellis --help` under 80 ms; issue 19: the tarball's CLI "also faster to start"):
// `--help` and `--version` spawn to exit, and `start-all` with no DAG, spawn to /health
// answering. Medians of several runs, each printed beside its target and the load average, in
// the machine's environment and with NODE_EXTRA_CA_CERTS unset, each after the `node -e 0` floor
// of the same environment (startup-env.js).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startupEnvs } from './startup-env.js';
import { cpuMs, pct, sleep } from './util.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const UNBUNDLED = join(ROOT, 'packages/cli/bin/trellis.js');
const RUNS = 15;
const START_RUNS = 5;

const load = () => `load ${loadavg()[0].toFixed(2)}`;
const line = (what, figure, target) =>
  console.log(`${what}: ${figure} (target ${target}; ${load()})`);

/**
 * Prints the process's CPU time (user + system, ms) on stderr as it exits: a figure less
 * sensitive than wall time to the other work on a shared machine. Preloaded in every run alike.
 */
const CPU_PRELOAD = `process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('cpu-ms:' + (u.user + u.system) / 1000 + '\\n'); });`;

/**
 * Medians of `node <bin> <args>` (no bin: `node -e 0`) in `env` to exit, after one warm-up run:
 * wall time and the child's own CPU time, in ms.
 */
const timeCommand = (env, preload, bin, args = []) => {
  const argv = ['-r', preload, ...(bin ? [bin, ...args] : ['-e', '0'])];
  spawnSync(process.execPath, argv, { env });
  const wall = [];
  const cpu = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = spawnSync(process.execPath, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    wall.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.status}`);
    cpu.push(Number(/cpu-ms:([\d.]+)/.exec(r.stderr.toString())?.[1]));
  }
  return { wall: pct(wall, 50), cpu: pct(cpu, 50) };
};

const fmt = (t) => `${t.wall.toFixed(0)} ms (CPU ${t.cpu.toFixed(0)} ms)`;

const healthy = (port) =>
  new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/api/v2/health' }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });

/** A port free on loopback right now. */
const freePort = () =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

/**
 * From spawning `start-all` in `env` over an empty home to /health answering 200: the ms, and
 * the server's CPU ms by then (less sensitive to the other work on a shared machine).
 */
const coldStart = async (bin, port, env) => {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-start-'));
  const t0 = performance.now();
  const proc = spawn(
    process.execPath,
    [bin, 'start-all', '--host', '127.0.0.1', '--port', String(port)],
    {
      env: { ...env, HOME: home, SVC_HOME: home },
      stdio: 'ignore',
    },
  );
  try {
    while (!(await healthy(port))) {
      if (proc.exitCode !== null) throw new Error(`start-all exited ${proc.exitCode}`);
      await sleep(2);
    }
    return { wall: performance.now() - t0, cpu: cpuMs(proc.pid) };
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r()));
    rmSync(home, { recursive: true, force: true });
  }
};

const medianColdStart = async (bin, env) => {
  const times = [];
  for (let i = 0; i < START_RUNS; i++) times.push(await coldStart(bin, await freePort(), env));
  return {
    wall: pct(
      times.map((t) => t.wall),
      50,
    ),
    cpu: pct(
      times.map((t) => t.cpu),
      50,
    ),
  };
};

export default async () => {
  const out = mkdtempSync(join(tmpdir(), 'trellis-bench-pack-'));
  try {
    execFileSync(process.execPath, [join(ROOT, 'scripts/package.mjs'), '--out', out], {
      stdio: 'ignore',
    });
    const bundled = join(out, 'package', 'dist', 'trellis.js');
    const preload = join(out, 'cpu-preload.cjs');
    writeFileSync(preload, CPU_PRELOAD);
    for (const [label, env] of startupEnvs({ PATH: '/usr/local/bin:/usr/bin:/bin' })) {
      console.log(`### ${label}`);
      const floor = timeCommand(env, preload);
      line(`node -e 0, spawn to exit, median of ${RUNS}`, fmt(floor), 'the floor');
      for (const args of [['--help'], ['--version']]) {
        const before = timeCommand(env, preload, UNBUNDLED, args);
        const after = timeCommand(env, preload, bundled, args);
        line(
          `trellis ${args[0]}, spawn to exit, median of ${RUNS}`,
          `unbundled ${fmt(before)}, bundled ${fmt(after)}; floor ${fmt(floor)}`,
          '< 80 ms',
        );
      }
      const before = await medianColdStart(UNBUNDLED, env);
      const after = await medianColdStart(bundled, env);
      line(
        `start-all with no DAG, spawn to /health 200, median of ${START_RUNS}`,
        `unbundled ${fmt(before)}, bundled ${fmt(after)}; floor ${fmt(floor)}`,
        '< 200 ms',
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
};
