import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BIN, callApi } from './start-all.js';

/** A worker as `GET /api/v2/workers` shows it (the spec's fields and the lifecycle ones). */
export type ListedWorker = {
  id: string;
  state: string;
  slots_busy: number;
  slots_total: number;
} & Record<string, unknown>;

/** The workers the coordinator under `base` (`.../api/v2`) lists. */
export const listWorkers = async (base: string): Promise<ListedWorker[]> =>
  (await callApi(base, 'GET', '/workers')).body.workers as ListedWorker[];

/**
 * Polls GET /workers until `ok` holds, 20 ms apart, at most `attempts` times (an upper bound
 * against hangs: processes start slowly on a loaded machine); the error shows the last list.
 */
export const untilWorkers = async (
  base: string,
  ok: (ws: ListedWorker[]) => boolean,
  what: string,
  attempts = 3000,
): Promise<ListedWorker[]> => {
  for (let i = 0; i < attempts; i++) {
    const ws = await listWorkers(base);
    if (ok(ws)) return ws;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`GET /workers never showed ${what}: ${JSON.stringify(await listWorkers(base))}`);
};

/** Runs the built CLI to its end with exactly `env`: exit code and output (stdout and stderr). */
export const runCli = async (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string }> => {
  const p = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  p.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = (await once(p, 'exit')) as [number | null];
  return { code, out };
};
