import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, startAll, untilFinal, type StartAll } from '../e2e/support/start-all.js';

/**
 * Issue 15 (nothing lost, nothing silent): `trellis start-all` with its log folder on a private
 * 1 MiB tmpfs, filled by a step's output.
 */
let home: string;
let logDir: string;
let server: StartAll;
let base: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'trellis-e2e-full-'));
  logDir = join(home, 'logs');
  mkdirSync(logDir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', logDir]);
  server = await startAll({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home });
  base = `${server.url}/api/v2`;
});

afterAll(async () => {
  await server.stop();
  execFileSync('umount', ['-l', logDir]);
  rmSync(home, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);
const final = (name: string, id: string) =>
  untilFinal(base, name, id, { context: () => server.output() });

describe('a full log disk under a serving process', { timeout: 60_000 }, () => {
  it('fails the step naming the file and ENOSPC, says the log is truncated, shows it in /health and /metrics, and stays up', async () => {
    expect((await call('GET', '/health')).status).toBe(200);
    const spec = `steps:\n  - name: fill\n    command: 'head -c 2097152 /dev/zero | tr "\\\\0" x'\n`;
    expect((await call('POST', '/dags', { name: 'fill', spec })).status).toBe(201);
    const id = (await call('POST', '/dags/fill/start', {})).body.dagRunId as string;
    const run = await final('fill', id);
    expect(run.status).toBe(2);
    const node = (run.nodes as { status: number; error: string; stdout: string }[])[0];
    expect(node?.status).toBe(2);
    expect(node?.error).toContain(node?.stdout);
    expect(node?.error).toContain('ENOSPC');

    const log = await call('GET', `/dag-runs/fill/${id}/steps/fill/log?head=1`);
    expect(log.status).toBe(200);
    expect(log.body).toMatchObject({ truncated: true });
    expect(log.body.truncatedReason).toContain('ENOSPC');

    const health = await call('GET', '/health');
    expect(health.status).toBe(503);
    expect(health.body.error).toContain('ENOSPC');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const count = /^svc_store_write_errors_total\{kind="log"\} (\d+)$/m.exec(metrics)?.[1];
    expect(Number(count)).toBeGreaterThanOrEqual(1);

    // room again: the same server records the next run whole
    rmSync(join(logDir, 'fill'), { recursive: true });
    const small = 'steps:\n  - name: ok\n    command: echo fine\n';
    expect((await call('POST', '/dags', { name: 'small', spec: small })).status).toBe(201);
    const id2 = (await call('POST', '/dags/small/start', {})).body.dagRunId as string;
    expect((await final('small', id2)).status).toBe(4);
    const ok = await call('GET', `/dag-runs/small/${id2}/steps/ok/log`);
    expect(ok.body).toMatchObject({ content: 'fine' });
    expect(ok.body.truncated).toBeUndefined();
  });
});
