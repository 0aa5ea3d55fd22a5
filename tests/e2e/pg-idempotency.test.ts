import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { fingerprintOf } from '@trellis/services';
import { PgDb } from '@trellis/store-pg';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { startListedInstance } from './support/pg-instance.js';
import { callApi, untilFinal, type StartAll } from './support/start-all.js';

/**
 * Idempotency keys on replicated instances (issue 20, docs/ha.md): a CI retry that the load
 * balancer sends to the other instance gets the first run, not a second one.
 */
let postgres: PrivatePostgres;
let root: string;
let databaseUrl: string;
const instances: StartAll[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_idem');
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-idem-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(join(root, 'dags', 'build.yaml'), 'steps:\n  - name: s\n    command: echo hi\n');
  // runs until the test writes its `release` file
  const hold = `sh -c 'while [ ! -f ${join(root, 'release')} ]; do sleep 0.05; done'`;
  writeFileSync(join(root, 'dags', 'hold.yaml'), `steps:\n  - name: s\n    command: ${hold}\n`);
  for (const n of [1, 2]) await startListedInstance(instances, { root, databaseUrl, n });
});

afterAll(async () => {
  for (const s of instances) await s.stop().catch(() => undefined);
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

const start = async (s: StartAll, key: string, body: unknown, dag = 'build') => {
  const res = await fetch(`${s.url}/api/v2/dags/${dag}/start`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { dagRunId?: string; code?: string; message?: string };
  return { status: res.status, replayed: res.headers.get('Idempotent-Replayed'), ...json };
};

describe('Idempotency-Key on two instances sharing PostgreSQL', () => {
  it('starts one run for the same request sent to both at once, and refuses another body', async () => {
    const [a, b] = instances as [StartAll, StartAll];
    const [x, y] = await Promise.all([
      start(a, 'ci-42-build', { params: 'REF=main' }),
      start(b, 'ci-42-build', { params: 'REF=main' }),
    ]);
    expect([x.status, y.status]).toEqual([200, 200]);
    expect(x.dagRunId).toBeDefined();
    expect(y.dagRunId).toBe(x.dagRunId);
    expect([x.replayed, y.replayed].filter((r) => r === 'true')).toHaveLength(1);
    const other = await start(b, 'ci-42-build', { params: 'REF=dev' });
    expect(other.status).toBe(409);
    expect(other.code).toBe('already_exists');
    expect(other.message).toContain('ci-42-build');
  });

  it('answers the run a dead instance created under the key, not a second run', async () => {
    const [a] = instances as [StartAll, StartAll];
    // an instance claimed "ci-43", created its run under the claim's id and died before it
    // recorded the run: the key stays pending, past its bound
    const made = await fetch(`${a.url}/api/v2/dags/build/start`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ dagRunId: 'made-by-the-dead-one' }),
    });
    expect(made.status).toBe(200);
    const db = new PgDb({ url: databaseUrl, poolSize: 1 });
    try {
      await db.query(
        `INSERT INTO trellis_idempotency_keys
           (key, fingerprint, request, created_at_ms, claim, pending_until, run_id)
         VALUES ('ci-43', $1, 'POST /dags/build/start', $2, 'dead', now() - interval '1 second', $3)`,
        [fingerprintOf('POST /dags/build/start', {}), Date.now(), 'made-by-the-dead-one'],
      );
      const runs = async () =>
        (await db.query("SELECT 1 FROM trellis_runs WHERE name = 'build'")).rowCount;
      const before = await runs();
      // the client, never answered, sends the request again: it gets that run
      const again = await start(a, 'ci-43', {});
      expect(again).toMatchObject({
        status: 200,
        dagRunId: 'made-by-the-dead-one',
        replayed: 'true',
      });
      expect(await runs()).toBe(before);
      expect(await start(a, 'ci-43', {})).toMatchObject({ dagRunId: 'made-by-the-dead-one' });
    } finally {
      await db.end();
    }
  });

  it("answers the dead instance's singleton run, still running, not already_running", async () => {
    const [a] = instances as [StartAll, StartAll];
    const made = await start(a, 'ci-44-made', { dagRunId: 'singleton-of-the-dead-one' }, 'hold');
    expect(made.status).toBe(200);
    const db = new PgDb({ url: databaseUrl, poolSize: 1 });
    try {
      const request = 'POST /dags/hold/start';
      await db.query(
        `INSERT INTO trellis_idempotency_keys
           (key, fingerprint, request, created_at_ms, claim, pending_until, run_id)
         VALUES ('ci-44', $1, $2, $3, 'dead', now() - interval '1 second', $4)`,
        [fingerprintOf(request, { singleton: true }), request, Date.now(), made.dagRunId],
      );
      const runs = async () =>
        (await db.query("SELECT 1 FROM trellis_runs WHERE name = 'hold'")).rowCount;
      // the resent singleton start finds its own run running: that run is its answer
      const again = await start(a, 'ci-44', { singleton: true }, 'hold');
      expect(again).toMatchObject({ status: 200, dagRunId: made.dagRunId, replayed: 'true' });
      expect(await runs()).toBe(1);
      const held = await callApi(`${a.url}/api/v2`, 'GET', `/dag-runs/hold/${made.dagRunId ?? ''}`);
      expect((held.body.dagRunDetails as { status: number }).status).toBe(RunStatus.Running);
      writeFileSync(join(root, 'release'), '');
      await untilFinal(`${a.url}/api/v2`, 'hold', made.dagRunId ?? '');
      // the key holds that run: no second run once it ended
      expect(await start(a, 'ci-44', { singleton: true }, 'hold')).toMatchObject({
        status: 200,
        dagRunId: made.dagRunId,
      });
      expect(await runs()).toBe(1);
    } finally {
      writeFileSync(join(root, 'release'), '');
      await db.end();
    }
  });
});
