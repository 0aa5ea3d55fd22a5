import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { ErrorBody, RunDetailsSchema } from '@trellis/contract';
import { useEventsServer } from '../support/events-fixture.js';

/** GET /dag-runs/{name}/{dagRunId}?waitFor=final: the long-poll on a run. */
const t = useEventsServer();

const details = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const statusOf = (body: Record<string, unknown>): number =>
  RunDetailsSchema.parse(body.dagRunDetails).status;

/** Starts DAG `name` with run id `id` over the API. */
const start = async (name: string, id: string, params?: string): Promise<void> => {
  const res = await fetch(`${t.base}/dags/${name}/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dagRunId: id, ...(params !== undefined ? { params } : {}) }),
  });
  expect(res.status).toBe(200);
};

describe('waiting for a run', () => {
  it('answers as soon as the run is final, before the timeout', async () => {
    const gate = t.gate('g');
    t.h.dag('blocked', `steps:\n  - {name: hold, command: "${gate.wait}"}\n`);
    const running = t.published((e) => e.type === 'step:started');
    await start('blocked', 'r1');
    await running;
    const subscribed = t.h.runEvents.subscriberCount;
    const waiting = details(`${t.base}/dag-runs/blocked/r1?waitFor=final&timeout=300`);
    await until(() => t.h.runEvents.subscriberCount > subscribed);
    await gate.open();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(statusOf(answer.body)).toBe(4);
    expect(t.h.runEvents.subscriberCount).toBe(subscribed);
  });

  it('answers a run that is final already at once, and without waitFor as the spec says', async () => {
    t.h.dag('quick', 'steps:\n  - "false"\n');
    await start('quick', 'q1');
    await t.h.finished('quick', 'q1');
    const waited = await details(`${t.base}/dag-runs/quick/q1?waitFor=final&timeout=300`);
    const plain = await details(`${t.base}/dag-runs/quick/q1`);
    expect(statusOf(waited.body)).toBe(2);
    expect(waited.body).toEqual(plain.body);
  });

  it('answers with the current state at the timeout while the run still runs', async () => {
    const gate = t.gate('g');
    t.h.dag('blocked', `steps:\n  - {name: hold, command: "${gate.wait}"}\n`);
    const running = t.published((e) => e.type === 'step:started');
    await start('blocked', 'r2');
    await running;
    const answer = await details(`${t.base}/dag-runs/blocked/r2?waitFor=final&timeout=1`);
    expect(answer.status).toBe(200);
    expect(statusOf(answer.body)).toBe(1);
    await gate.open();
    await t.h.finished('blocked', 'r2');
  });

  it('refuses bad waitFor and timeout values naming the value and the allowed range', async () => {
    t.h.dag('quick', 'steps:\n  - "true"\n');
    await start('quick', 'q2');
    await t.h.finished('quick', 'q2');
    const cases: [string, RegExp][] = [
      ['waitFor=done', /waitFor: "done" is not a wait condition: .*final/],
      ['waitFor=final&timeout=301', /timeout: "301" is not allowed: .*0 to 300/],
      ['waitFor=final&timeout=-1', /timeout: "-1" is not allowed: .*0 to 300/],
      ['waitFor=final&timeout=abc', /timeout: "abc" is not allowed/],
      ['timeout=5', /timeout: applies only with waitFor=final/],
    ];
    for (const [query, message] of cases) {
      const res = await details(`${t.base}/dag-runs/quick/q2?${query}`);
      expect(res.status, query).toBe(400);
      const body = ErrorBody.parse(res.body);
      expect(body.code).toBe('bad_request');
      expect(body.message, query).toMatch(message);
    }
    const missing = await details(`${t.base}/dag-runs/quick/nope?waitFor=final&timeout=5`);
    expect(missing.status).toBe(404);
  });

  it('frees the waiter when the client goes away', async () => {
    const gate = t.gate('g');
    t.h.dag('blocked', `steps:\n  - {name: hold, command: "${gate.wait}"}\n`);
    const running = t.published((e) => e.type === 'step:started');
    await start('blocked', 'r3');
    await running;
    const before = t.h.runEvents.subscriberCount;
    const req = http.get(`${t.base}/dag-runs/blocked/r3?waitFor=final&timeout=300`);
    req.on('error', () => undefined);
    await until(() => t.h.runEvents.subscriberCount === before + 1);
    req.destroy();
    await until(() => t.h.runEvents.subscriberCount === before);
    await gate.open();
    await t.h.finished('blocked', 'r3');
  });

  it('answers 200 waiters, each once with its run status, while 200 runs complete', async () => {
    const gates = [0, 1, 2, 3].map((i) => t.gate(`hold${i}`));
    t.h.dag('holder', 'params: G=x\nsteps:\n  - {name: hold, command: "read line < $G"}\n');
    t.h.dag('many', 'params: CODE=0\nsteps:\n  - {name: exit, command: "exit $CODE"}\n');
    // four holders fill the queue's four slots; the 200 runs wait behind them
    for (const [i, g] of gates.entries()) {
      const enq = await fetch(`${t.base}/dags/holder/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          dagRunId: `h${i}`,
          queue: 'batch',
          params: `G=${g.wait.split('< ')[1]}`,
        }),
      });
      expect(enq.status).toBe(200);
    }
    const ids = Array.from({ length: 200 }, (_, i) => `m${i}`);
    for (const [i, id] of ids.entries()) {
      const enq = await fetch(`${t.base}/dags/many/enqueue`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ dagRunId: id, queue: 'batch', params: `CODE=${i % 2}` }),
      });
      expect(enq.status).toBe(200);
    }
    const before = t.h.runEvents.subscriberCount;
    const answers = ids.map((id) =>
      details(`${t.base}/dag-runs/many/${id}?waitFor=final&timeout=300`),
    );
    await until(() => t.h.runEvents.subscriberCount === before + 200);
    await Promise.all(gates.map((g) => g.open()));
    const got = await Promise.all(answers);
    got.forEach((a, i) => {
      expect(a.status).toBe(200);
      const run = RunDetailsSchema.parse(a.body.dagRunDetails);
      expect(run.dagRunId).toBe(ids[i]);
      expect(run.status).toBe(i % 2 === 0 ? 4 : 2);
    });
    expect(t.h.runEvents.subscriberCount).toBe(before);
  }, 120_000);
});

/**
 * Resolves once `cond` holds, checked after each event the bus publishes and each macrotask
 * (subscribing happens inside request handlers, which publish nothing).
 */
const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((r) => setImmediate(r));
};
