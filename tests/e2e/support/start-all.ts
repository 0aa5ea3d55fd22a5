import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root and the built `trellis` binary the end-to-end tests drive. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'packages', 'cli', 'bin', 'trellis.js');

/** A running `trellis start-all`. */
export interface StartAll {
  readonly proc: ChildProcess;
  /** `http(s)://host:port[/basePath]` as the server printed it (the API is under `/api/v2`). */
  readonly url: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves once its output contains `text`; rejects when it exits first. */
  waitFor(text: string): Promise<void>;
  /** SIGTERM, and the exit code once it exited (null when a signal ended it). */
  stop(): Promise<number | null>;
}

/** A `trellis` other than the repository's built one: an executable file, run in `cwd`. */
export interface OtherBin {
  readonly file: string;
  readonly cwd: string;
}

/**
 * Starts the built `trellis start-all` (or `bin`) on a free loopback port (`--port 0` unless
 * `args` say otherwise) with exactly `env`, and resolves once it serves; rejects with its output
 * when it exits first.
 */
export const startAll = async (
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
  bin?: OtherBin,
): Promise<StartAll> => {
  const portGiven = args.includes('--port');
  const cmd = ['start-all', '--host', '127.0.0.1', ...(portGiven ? [] : ['--port', '0']), ...args];
  const proc = bin
    ? spawn(bin.file, cmd, { env, cwd: bin.cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [BIN, ...cmd], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (c: string): void => {
    output += c;
    for (const l of listeners) l();
  };
  proc.stdout?.setEncoding('utf8');
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', onData);
  proc.stdout?.on('data', onData);
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout?.on('data', () => {
      const m = /serving (https?:\/\/\S+)\/api\/v2/.exec(output);
      if (m?.[1]) resolve(m[1]);
    });
    proc.once('exit', (code) =>
      reject(new Error(`start-all exited with ${String(code)}:\n${output}`)),
    );
  });
  return {
    proc,
    url,
    output: () => output,
    waitFor: (text) =>
      new Promise<void>((resolve, reject) => {
        const seen = (): boolean => output.includes(text);
        if (seen()) return resolve();
        const l = (): void => {
          if (!seen()) return;
          listeners.delete(l);
          resolve();
        };
        listeners.add(l);
        proc.once('exit', () => reject(new Error(`exited before "${text}":\n${output}`)));
      }),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const [code] = (await once(proc, 'exit')) as [number | null];
      return code;
    },
  };
};

/**
 * A JSON call to the API under `base` (`.../api/v2`): status and parsed body (`{}` when empty);
 * `signal` aborts it (a bound on a server that never answers).
 */
export const callApi = async (
  base: string,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(`${base}${path}`, {
    method,
    ...(signal ? { signal } : {}),
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
};

/**
 * Polls a run over the API until it is final (the API is the only window into another process),
 * at most `attempts` times 20 ms; the error carries `context()` (a server's output).
 */
export const untilFinal = async (
  base: string,
  name: string,
  id: string,
  opts: { attempts?: number; context?: () => string } = {},
): Promise<Record<string, unknown>> => {
  for (let i = 0; i < (opts.attempts ?? 500); i++) {
    const r = await callApi(base, 'GET', `/dag-runs/${name}/${id}`);
    const d = r.body.dagRunDetails as { status: number } | undefined;
    if (d && [2, 3, 4, 6].includes(d.status)) return d;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(
    `run ${id} of ${name} did not finish${opts.context ? `:\n${opts.context()}` : ''}`,
  );
};
