import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { InMemoryRunEvents, RecordTransitions } from '@trellis/services';
import type { Dag } from '@trellis/spec';
import { makeRunRecord, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from '../db/pg-db.js';
import { migrate } from '../migrate/migrations.js';
import { PgRunStore } from './pg-run-store.js';

let pg: PrivatePostgres;
const pools: PgDb[] = [];
beforeAll(async () => {
  pg = await startPostgres();
  const db = new PgDb({ url: pg.url, poolSize: 2 });
  pools.push(db);
  await migrate(db);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await pg.stop();
});

/** One coordinator as the runtime wires it: its store's saves feed its own event bus. */
const instance = () => {
  const db = new PgDb({ url: pg.url, poolSize: 2 });
  pools.push(db);
  const events = new InMemoryRunEvents({ clock: systemClock });
  const transitions = new RecordTransitions(events);
  const seen: string[] = [];
  events.subscribe({}, (e) => seen.push(`${e.type}:${e.dagRunId ?? ''}`));
  const store = new PgRunStore({
    db,
    logDir: '/var/trellis/logs',
    clock: systemClock,
    onRecordSaved: (r) => transitions.recordSaved(r),
  });
  return { store, seen };
};

describe('run events on replicated coordinators', () => {
  // webhooks subscribe to this bus (docs/ha.md, "Known limits"): one delivery per run, by the
  // instance that wrote its final record, not one per instance
  it('are published by the instance that saved the record only, not through the change feed', async () => {
    const a = instance();
    const b = instance();
    const record = makeRunRecord({ name: 'etl', params: [] } as unknown as Dag, 'run-1');
    await a.store.createRun(record, { dag: {}, localDags: [] });
    const started = {
      ...record,
      status: RunStatus.Running,
      revision: 1,
      startedAt: record.createdAt,
    };
    await a.store.saveRun(started);
    await a.store.saveRun({ ...started, status: RunStatus.Succeeded, revision: 2 });
    // b reads the run through the change feed: its listing shows it ended, its bus says nothing
    const listed = await b.store.listRuns({ name: 'etl' });
    expect(listed.map((r) => [r.dagRunId, r.status])).toEqual([['run-1', RunStatus.Succeeded]]);
    expect(a.seen.filter((e) => e.startsWith('run:finished'))).toEqual(['run:finished:run-1']);
    expect(b.seen).toEqual([]);
  });
});
