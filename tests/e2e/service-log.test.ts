import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort, startRedis, type PrivateRedis } from '@trellis/dispatch/testing';
import { BIN } from './support/start-all.js';

/*
 * The service log (issue 19 item 7): a real coordinator and worker lose their Redis and get it
 * back. Each event is one line (no stack trace), Redis's outage is said once and its return
 * once, and `--log-format json` / SVC_LOG_FORMAT=json give records with the same fields on both.
 */

// Real processes losing and regaining Redis on a shared 2-core machine: room to spare.
vi.setConfig({ testTimeout: 150_000 });

interface Proc {
  readonly proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout+stderr match `re`; rejects when the process exits first. */
  waitFor(re: RegExp): Promise<void>;
  stop(): Promise<void>;
}

const run = (args: string[], env: NodeJS.ProcessEnv): Proc => {
  const proc = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  proc.stdout?.setEncoding('utf8');
  proc.stderr?.setEncoding('utf8');
  proc.stdout?.on('data', (c: string) => {
    out += c;
    for (const l of listeners) l();
  });
  proc.stderr?.on('data', (c: string) => {
    err += c;
    for (const l of listeners) l();
  });
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    waitFor: (re) =>
      new Promise<void>((resolve, reject) => {
        const l = (): void => {
          if (!re.test(out + err)) return;
          listeners.delete(l);
          resolve();
        };
        listeners.add(l);
        l();
        proc.once('exit', () => reject(new Error(`exited before ${String(re)}:\n${out}${err}`)));
        // an upper bound against a hang, so the failure shows what the process said
        setTimeout(
          () => reject(new Error(`no ${String(re)} within 50s:\n${out}${err}`)),
          50_000,
        ).unref();
      }),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
};

const FIELDS = ['component', 'host', 'level', 'msg', 'pid', 'time'];

/** Every line of `text` as a JSON record with exactly the shared fields. */
const records = (text: string): Record<string, unknown>[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => {
      const r = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(r).sort(), line).toEqual(FIELDS);
      expect(Number.isNaN(Date.parse(String(r.time))), line).toBe(false);
      return r;
    });

const NO_STACK = /^\s+at\s|^\S*Error: .*\n\s+at /m;

let redis: PrivateRedis;
let home: string;
const procs: Proc[] = [];

beforeAll(async () => {
  redis = await startRedis();
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-log-'));
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await redis?.stop();
  rmSync(home, { recursive: true, force: true });
});

const baseEnv = (): NodeJS.ProcessEnv => ({
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  SVC_HOME: home,
  SVC_REDIS_URL: redis.url,
});

describe('coordinator and worker logs', () => {
  it('say a Redis outage and its end in one line each, as JSON with the same fields', async () => {
    const port = await freePort();
    const coordinator = run(
      ['coordinator', '--coordinator-port', String(port), '--log-format', 'json'],
      baseEnv(),
    );
    procs.push(coordinator);
    await coordinator.waitFor(/Trellis coordinator serving gRPC/);
    const worker = run(['worker', '--coordinator', `127.0.0.1:${port}`, '--id', 'log-w1'], {
      ...baseEnv(),
      SVC_LOG_FORMAT: 'json',
    });
    procs.push(worker);
    await worker.waitFor(/Trellis worker \\"log-w1\\" started/);

    await redis.stop();
    await Promise.all([
      coordinator.waitFor(/redis redis:\/\/127\.0\.0\.1:\d+ is unreachable/),
      worker.waitFor(/redis redis:\/\/127\.0\.0\.1:\d+ is unreachable/),
    ]);
    await redis.restart({ wipe: true }); // stop() removed its folder
    await Promise.all([
      coordinator.waitFor(/is reachable (again )?after/),
      worker.waitFor(/is reachable (again )?after/),
    ]);
    await Promise.all([coordinator.stop(), worker.stop()]);

    for (const p of [coordinator, worker]) {
      expect(p.stderr()).not.toMatch(NO_STACK);
      const recs = [...records(p.stdout()), ...records(p.stderr())];
      const outage = recs.filter((r) => String(r.msg).includes('is unreachable'));
      expect(outage).toHaveLength(1);
      expect(outage[0]?.level).toBe('warn');
      expect(recs.filter((r) => /is reachable (again )?after/.test(String(r.msg)))).toHaveLength(1);
    }
    expect(records(coordinator.stdout())[0]).toMatchObject({ component: 'coordinator' });
    expect(records(worker.stdout())[0]).toMatchObject({ component: 'worker', level: 'info' });
  });

  it('keeps the text log to one line per event while Redis is away', async () => {
    await redis.stop();
    const worker = run(['worker', '--coordinator', '127.0.0.1:9', '--id', 'log-w2'], baseEnv());
    procs.push(worker);
    await worker.waitFor(/is unreachable/);
    await worker.waitFor(/coordinator unreachable/);
    await worker.stop();
    await redis.restart({ wipe: true }); // stop() removed its folder
    expect(worker.stderr()).not.toMatch(NO_STACK);
    const lines = worker.stderr().trimEnd().split('\n');
    expect(lines.filter((l) => l.includes('is unreachable'))).toHaveLength(1);
    for (const l of lines) expect(l).toMatch(/^(worker log-w2: |received SIGTERM)/);
  });

  it('refuses an unknown log format, naming it and the fix', async () => {
    const p = run(['worker', '--log-format', 'xml'], baseEnv());
    const [code] = (await once(p.proc, 'exit')) as [number];
    expect(code).toBe(2);
    expect(p.stderr()).toContain('trellis worker: invalid --log-format "xml": use text or json');
  });
});
