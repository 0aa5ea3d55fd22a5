// Shared pieces of the benchmarks: percentiles, and a `trellis start-all` server process with a
// small JSON client (the server runs as its own process, as in production).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** The p-th percentile of `xs` (nearest rank). */
export const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A small JSON client of the API at `base` (`http://host:port/api/v2`): `get(path)` and
 * `post(path, body)` resolve with the parsed body and reject on a status of 400 or more. Plain
 * node:http with keep-alive connections, as a CI client would hold them: the figures are the
 * server's, not a heavier client's (fetch costs about 1 ms more per request on this machine).
 */
export const jsonClient = (base) => {
  const agent = new Agent({ keepAlive: true });
  // `timed`: resolves `{ body, ms, parseMs }`, `ms` from the request to the answer's last byte
  // (what the server and the wire cost), `parseMs` the client's JSON.parse apart
  const call = (method, path, body, timed = false) =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(
        `${base}${path}`,
        {
          method,
          agent,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const ms = performance.now() - t0;
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode >= 400)
              reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
            else if (!timed) resolve(JSON.parse(text));
            else {
              const p0 = performance.now();
              const parsed = JSON.parse(text);
              resolve({ body: parsed, ms, parseMs: performance.now() - p0 });
            }
          });
        },
      );
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  return {
    get: (path) => call('GET', path),
    timedGet: (path) => call('GET', path, undefined, true),
    post: (path, body) => call('POST', path, body),
    close: () => agent.destroy(),
  };
};

/**
 * Starts `trellis start-all` (this tree's build, or `bin`: another build an A/B script compares)
 * on a free port over `home` and resolves with `{base, get, post, stop, pid}` once it serves.
 * Needs `tsc -b` (the bench runs the built binary).
 */
export const startServer = async (
  home,
  env = {},
  bin = fileURLToPath(new URL('../packages/cli/bin/trellis.js', import.meta.url)),
) => {
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
  const { get, timedGet, post, close } = jsonClient(base);
  const stop = async () => {
    close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  };
  return { base, get, timedGet, post, stop, pid: server.pid };
};

/**
 * Writes dirty pages to disk (`sync`): seeded history is old data, already on disk in the
 * situation measured; left dirty, its write-back would land inside the first measured fsyncs.
 */
export const flushToDisk = () => {
  spawnSync('sync');
};

/**
 * Starts a `trellis worker` process (labels `bench=yes`) and resolves with `{pid, stop}` once it
 * says it started. Needs `tsc -b`.
 */
export const startWorker = async (id, coordinator, redisUrl, home, concurrency, env = {}) => {
  const p = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('../packages/cli/bin/trellis.js', import.meta.url)),
      'worker',
      '--coordinator',
      coordinator,
      '--id',
      id,
      '--concurrency',
      String(concurrency),
      '--labels',
      'bench=yes',
    ],
    {
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: home,
        SVC_HOME: home,
        SVC_REDIS_URL: redisUrl,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  let out = '';
  await new Promise((resolve, reject) => {
    p.stdout.on('data', (c) => {
      out += c;
      if (out.includes('started')) resolve();
    });
    p.once('exit', () => reject(new Error(`worker exited: ${out}`)));
  });
  return {
    pid: p.pid,
    stop: async () => {
      p.kill('SIGTERM');
      await once(p, 'exit');
    },
  };
};

/** RSS of process `pid` in MB (0 once it is gone), from /proc. */
export const rssMb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return 0; // gone meanwhile
  }
};

/**
 * Memory of process `pid` no other process shares, in MB (Private_Clean + Private_Dirty of
 * /proc/<pid>/smaps_rollup; 0 once it is gone): its RSS without the pages of the node binary and
 * libraries that every Node process on the machine maps once for all (about 35-40 MB of each
 * Node process's RSS).
 */
export const privateMb = (pid) => {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
    return (kb('Private_Clean') + kb('Private_Dirty')) / 1024;
  } catch {
    return 0; // gone meanwhile
  }
};

/** The pids of `pid` and every process below it. */
export const treeOf = (pid) => {
  const parents = new Map();
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      parents.set(Number(p), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++)
    for (const [p, pp] of parents) if (pp === tree[i]) tree.push(p);
  return tree;
};

/** RSS summed over `pid` and every process below it, in MB. */
export const treeMb = (pid) => treeOf(pid).reduce((sum, p) => sum + rssMb(p), 0);

/**
 * CPU time (user + system) of process `pid` so far, in ms: less sensitive to load than latency.
 * With `children`, also that of its children it has reaped (cutime, cstime: the steps).
 */
export const cpuMs = (pid, { children = false } = {}) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return (ticks * 1000) / 100; // clock ticks (100 Hz)
};
