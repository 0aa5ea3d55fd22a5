import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAll, type StartAll } from './support/start-all.js';

/**
 * Idempotency-Key through `trellis start-all` (issue 17 item 4): a key used before the server was
 * stopped answers the same run after it started again on the same SVC_HOME.
 */

let home = '';
let server: StartAll | undefined;

afterEach(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, SVC_HOME: home });

const startWithKey = async (key: string, body: object) => {
  const res = await fetch(`${server?.url ?? ''}/api/v2/dags/deploy/start`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed'),
    body: (await res.json()) as { dagRunId?: string; code?: string; message?: string },
  };
};

describe('idempotency keys of trellis start-all', { timeout: 60_000 }, () => {
  it('answer the same run after a restart on the same home, and refuse another body', async () => {
    home = mkdtempSync(join(tmpdir(), 'trellis-e2e-idem-'));
    mkdirSync(join(home, 'dags'));
    writeFileSync(join(home, 'dags', 'deploy.yaml'), 'params: REF=main\nsteps:\n  - "true"\n');
    server = await startAll(env());
    const first = await startWithKey('pipeline-42', { params: 'REF=v1' });
    expect(first.status).toBe(200);
    expect(first.replayed).toBeNull();
    await server.stop();
    expect(readdirSync(join(home, 'data', 'idempotency'))).toHaveLength(1);

    server = await startAll(env());
    const again = await startWithKey('pipeline-42', { params: 'REF=v1' });
    expect(again).toEqual({
      status: 200,
      replayed: 'true',
      body: { dagRunId: first.body.dagRunId },
    });
    const other = await startWithKey('pipeline-42', { params: 'REF=v2' });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: 'already_exists' });
    expect(other.body.message).toContain('Idempotency-Key "pipeline-42"');
    const runs = await (await fetch(`${server.url}/api/v2/dag-runs/deploy`)).json();
    expect((runs as { dagRuns: unknown[] }).dagRuns).toHaveLength(1);
  });
});
