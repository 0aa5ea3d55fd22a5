// Shared pieces of the benchmarks: percentiles, and a `trellis start-all` server process with a
// small JSON client (the server runs as its own process, as in production).
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The p-th percentile of `xs` (nearest rank). */
export const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `trellis start-all` on a free port over `home` and resolves with `{base, get, post,
 * stop}` once it serves. Needs `tsc -b` (the bench runs the built binary).
 */
export const startServer = async (home, env = {}) => {
  const bin = fileURLToPath(new URL('../packages/cli/bin/trellis.js', import.meta.url));
  const server = spawn(process.execPath, [bin, 'start-all', '--host', '127.0.0.1', '--port', '0'], {
    env: { SVC_HOME: home, PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (c) => {
      out += c;
      const m = /serving (http:\/\/\S+)\/api\/v2/.exec(out);
      if (m) resolve(`${m[1]}/api/v2`);
    });
    server.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  const get = async (path) => (await fetch(`${base}${path}`)).json();
  const post = async (path, body) =>
    (
      await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json();
  const stop = async () => {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  };
  return { base, get, post, stop };
};

/**
 * Writes a finished run of DAG `name` the way the store writes it (record and snapshot; the
 * index is rebuilt on first read), created, started and finished at `at` (ISO).
 */
export const writeFinishedRun = (home, name, id, at) => {
  const dir = join(home, 'data', 'runs', name, id);
  mkdirSync(dir, { recursive: true });
  const record = {
    revision: 3,
    name,
    dagRunId: id,
    root: { name, dagRunId: id },
    status: 4,
    createdAt: at,
    queuedAt: '',
    startedAt: at,
    finishedAt: at,
    log: '',
    params: [],
    nodes: [],
    preconditions: [],
    error: '',
    queue: name,
  };
  writeFileSync(join(dir, 'status.json'), JSON.stringify(record));
  writeFileSync(join(dir, 'dag.json'), JSON.stringify({ dag: { name, steps: [] }, localDags: [] }));
};
