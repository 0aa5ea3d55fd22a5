import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerProcess } from '@trellis/dispatch/testing';
import { untilWorkers } from '../e2e/support/fleet.js';
import { callApi } from '../e2e/support/start-all.js';
import { FleetFixture } from './support/fleet-fixture.js';
import { expectNothingLost, untilAllFinal } from './support/ledger.js';

/**
 * Issue 19: a rolling restart of two workers with the same labels while runs keep coming
 * (`trellis start-all` on a private Redis, a run enqueued every 400 ms). Worker A gets SIGTERM,
 * exits, starts again and is back in GET /workers; then worker B the same way. Once the stream
 * stops, every accepted run succeeded, none lost, none executed twice (the ledger), none stuck.
 */

let fx: FleetFixture;

const base = (): string => fx.base();

const startWorker = (id: string): Promise<WorkerProcess> =>
  // a drain lets every run finish
  fx.startWorker(id, { labels: { pool: 'roll' }, concurrency: 2, graceSec: 120 });

/** Enqueues a run every `everyMs` until stopped; `ids` are the accepted ones, in order. */
const stream = (everyMs: number) => {
  const ids: string[] = [];
  const refused: string[] = [];
  let on = true;
  const done = (async () => {
    while (on) {
      const r = await callApi(base(), 'POST', '/dags/ledger/enqueue', {});
      if (r.status === 200) ids.push(r.body.dagRunId as string);
      else refused.push(`${r.status} ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, everyMs)); // the stream's pace, not a wait
    }
  })();
  return {
    ids,
    refused,
    stop: async () => {
      on = false;
      await done;
    },
  };
};

/** SIGTERM to `id`, its exit, a new process with the same id, back and active in GET /workers. */
const restart = async (id: string): Promise<void> => {
  const old = fx.workers.get(id)!;
  const before = await untilWorkers(base(), (ws) => ws.some((w) => w.id === id), id);
  const startedAt = before.find((w) => w.id === id)!.started_at;
  const exited = once(old.proc, 'exit');
  old.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  expect(code, old.output()).toBe(0);
  await startWorker(id);
  await untilWorkers(
    base(),
    (ws) => ws.some((w) => w.id === id && w.state === 'active' && w.started_at !== startedAt),
    `${id} back`,
  );
};

beforeAll(async () => {
  fx = await FleetFixture.create();
  // each run records itself, then works a little, so the restarts meet runs in flight
  const spec = [
    'workerSelector:',
    '  pool: roll',
    'steps:',
    '  - name: work',
    `    command: ${JSON.stringify(`${fx.ledger.command(false)}; sleep 0.3`)}`,
    '',
  ].join('\n');
  expect((await callApi(base(), 'POST', '/dags', { name: 'ledger', spec })).status).toBe(201);
  await Promise.all([startWorker('roll-a'), startWorker('roll-b')]);
}, 180_000);

afterAll(() => fx.dispose(), 180_000);

describe('a rolling restart of two workers under a stream of runs', { timeout: 900_000 }, () => {
  it('loses no run and executes none twice', async () => {
    await untilWorkers(base(), (ws) => ws.length === 2, 'both workers');
    const runs = stream(400);
    await fx.ledger.untilLines(3); // runs flow before the first restart
    await restart('roll-a');
    await fx.ledger.untilLines(fx.ledger.lines().length + 3); // and between the restarts
    await restart('roll-b');
    // runs flow after them, on both new processes
    await Promise.all(['roll-a', 'roll-b'].map((id) => fx.workers.get(id)!.waitFor(/running run/)));
    await runs.stop();
    expect(runs.refused).toEqual([]);
    const final = await untilAllFinal(base, 'ledger', runs.ids, fx.context, 30_000);
    expectNothingLost(fx.ledger, final);
    expect(final.filter((r) => r.status !== 4)).toEqual([]);
    expect(fx.ledger.lines()).toHaveLength(runs.ids.length);
  });
});
