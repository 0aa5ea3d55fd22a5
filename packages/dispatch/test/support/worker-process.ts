import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `trellis` binary (tests run after `pnpm build`, as `pnpm test` does). */
export const TRELLIS_BIN = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'cli',
  'bin',
  'trellis.js',
);

/** A `trellis worker` child process. */
export interface WorkerProcess {
  readonly id: string;
  readonly proc: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once its output contains `text`. */
  waitFor(text: string | RegExp): Promise<void>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

/** Starts `trellis worker` with the given labels against a coordinator and Redis. */
export const spawnWorker = async (opts: {
  id: string;
  labels: Record<string, string>;
  coordinator: string;
  redisUrl: string;
  concurrency?: number;
  graceSec?: number;
  home: string;
  /** More environment (a token, TLS files). */
  env?: Record<string, string>;
  /** Resolve at once, without waiting for "started" (a worker expected to be refused). */
  noWait?: boolean;
  /**
   * Another `trellis` to run, in `cwd` (an installed one, with its PATH in `env`); else the
   * repository's built one.
   */
  bin?: { readonly file: string; readonly cwd: string };
}): Promise<WorkerProcess> => {
  if (!opts.bin && !existsSync(join(dirname(TRELLIS_BIN), '..', 'dist', 'main.js')))
    throw new Error('packages/cli/dist is missing: run "pnpm build" before these tests');
  const labels = Object.entries(opts.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const proc = spawn(
    opts.bin?.file ?? process.execPath,
    [
      ...(opts.bin ? [] : [TRELLIS_BIN]),
      'worker',
      '--coordinator',
      opts.coordinator,
      '--id',
      opts.id,
      '--concurrency',
      String(opts.concurrency ?? 2),
      '--grace-sec',
      String(opts.graceSec ?? 5),
      ...(labels ? ['--labels', labels] : []),
    ],
    {
      ...(opts.bin ? { cwd: opts.bin.cwd } : {}),
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        HOME: opts.home,
        SVC_HOME: opts.home,
        SVC_REDIS_URL: opts.redisUrl,
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (c: Buffer): void => {
    out += c.toString();
    for (const l of listeners) l();
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  const w: WorkerProcess = {
    id: opts.id,
    proc,
    output: () => out,
    waitFor: (text) =>
      new Promise<void>((resolve, reject) => {
        const test = (): boolean =>
          typeof text === 'string' ? out.includes(text) : text.test(out);
        if (test()) return resolve();
        const l = (): void => {
          if (test()) {
            listeners.delete(l);
            resolve();
          }
        };
        listeners.add(l);
        proc.once('exit', (code) =>
          reject(
            new Error(
              `worker ${opts.id} exited (${String(code)}) before "${String(text)}":\n${out}`,
            ),
          ),
        );
      }),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const [code] = (await once(proc, 'exit')) as [number | null];
      return code;
    },
    kill: (signal) => proc.kill(signal),
  };
  if (opts.noWait !== true) await w.waitFor('started');
  return w;
};
