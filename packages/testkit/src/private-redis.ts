import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** A private redis-server for one test file, never the machine's Redis on 6379. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  /**
   * Kills it (SIGKILL) and starts it again on the same port and data dir: the append-only file
   * is kept, unless `wipe` (a Redis that lost its data).
   */
  restart(opts?: { wipe?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Resolves once the redis-server process `p` (stdout piped) says it accepts connections; rejects
 * with what it printed when it exits first.
 */
export const redisReady = async (p: ChildProcess): Promise<void> => {
  let out = '';
  await new Promise<void>((resolve, reject) => {
    p.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
    p.once('exit', (code) => reject(new Error(`redis-server exited with ${String(code)}: ${out}`)));
  });
};

/** How a private redis-server keeps its data. */
export interface RedisOptions {
  /**
   * An append-only file fsynced on every write, so a restart keeps the jobs; false: nothing on
   * disk at all (benchmarks, where an fsync per write would be measured too).
   * @default true
   */
  readonly appendOnly?: boolean;
}

const startProcess = async (
  port: number,
  dir: string,
  appendOnly: boolean,
): Promise<ChildProcess> => {
  const persistence = appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const p = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await redisReady(p);
  return p;
};

/**
 * Starts redis-server on a free loopback port in a temp folder, by default with an append-only
 * file (so a restart keeps the jobs).
 */
export const startRedis = async (opts: RedisOptions = {}): Promise<PrivateRedis> => {
  const appendOnly = opts.appendOnly ?? true;
  const dir = mkdtempSync(join(tmpdir(), 'trellis-redis-'));
  const port = await freePort();
  let proc = await startProcess(port, dir, appendOnly);
  const kill = async (): Promise<void> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGKILL');
    await once(proc, 'exit');
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    restart: async (opts = {}) => {
      await kill();
      if (opts.wipe === true) {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir);
      }
      proc = await startProcess(port, dir, appendOnly);
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
