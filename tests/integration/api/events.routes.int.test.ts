import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { RunEventSchema, LogLinesEventSchema } from '@trellis/contract';
import { useEventsServer } from '../support/events-fixture.js';
import { openSse, type SseEvent } from '../support/sse-client.js';

/** GET /events and the live step log stream, over a real API server. */
const t = useEventsServer({ heartbeatMs: 50, maxBufferedBytes: 64 * 1024 });

const start = async (name: string, id: string): Promise<void> => {
  const res = await fetch(`${t.base}/dags/${name}/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dagRunId: id }),
  });
  expect(res.status).toBe(200);
};
const parsed = (e: SseEvent) => RunEventSchema.parse(JSON.parse(e.data));
const isFinished = (id: string) => (e: SseEvent) =>
  e.event === 'run:finished' && parsed(e).dagRunId === id;

describe('the event stream', () => {
  it('sends run and step transitions in id order, filtered by DAG, run and type', async () => {
    t.h.dag(
      'a',
      'steps:\n  - {name: one, command: "true"}\n  - {name: two, command: "false", depends: [one]}\n',
    );
    t.h.dag('b', 'steps:\n  - "true"\n');
    const all = await openSse(`${t.base}/events`);
    const runsOfA = await openSse(`${t.base}/events?dag=a&type=run`);
    const stepsOfA1 = await openSse(`${t.base}/events?dagRunId=a1&type=step:finished`);
    expect(all.status).toBe(200);
    await start('b', 'b1');
    await start('a', 'a1');
    await all.next(isFinished('a1'));
    await all.next(isFinished('b1'));
    await runsOfA.next(isFinished('a1'));
    await stepsOfA1.next((e) => parsed(e).data.stepName === 'two');
    const ids = all.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of all.events) expect(parsed(e).id).toBe(Number(e.id));
    expect(runsOfA.events.map((e) => e.event)).toEqual(['run:started', 'run:finished']);
    expect(runsOfA.events.every((e) => parsed(e).dag === 'a')).toBe(true);
    expect(parsed(runsOfA.events[1]!).data).toMatchObject({ status: 2, statusLabel: 'failed' });
    expect(
      stepsOfA1.events.map((e) => [e.event, parsed(e).data.stepName, parsed(e).data.status]),
    ).toEqual([
      ['step:finished', 'one', 4],
      ['step:finished', 'two', 2],
    ]);
    for (const c of [all, runsOfA, stepsOfA1]) c.close();
  });

  it('refuses an unknown type or a bad Last-Event-ID, naming it', async () => {
    const bad = await fetch(`${t.base}/events?type=run,nap`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(
      /"nap" is not an event type: use run, step/,
    );
    const badId = await fetch(`${t.base}/events`, { headers: { 'Last-Event-ID': 'x1' } });
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as { message: string }).message).toMatch(/Last-Event-ID "x1"/);
  });

  it('resumes after a disconnect with Last-Event-ID: no gap, no duplicate', async () => {
    t.h.dag(
      'r',
      'steps:\n  - {name: s1, command: "true"}\n  - {name: s2, command: "true", depends: [s1]}\n',
    );
    const witness = await openSse(`${t.base}/events?dag=r`);
    const first = await openSse(`${t.base}/events?dag=r`);
    await start('r', 'r1');
    await first.next(isFinished('r1'));
    first.close();
    const lastSeen = first.events.at(-1)!.id!;
    await start('r', 'r2'); // while the client is away
    await witness.next(isFinished('r2'));
    const resumed = await openSse(`${t.base}/events?dag=r`, { 'Last-Event-ID': lastSeen });
    await start('r', 'r3');
    await resumed.next(isFinished('r3'));
    await witness.next(isFinished('r3'));
    const got = [...first.events, ...resumed.events].map((e) => e.id);
    expect(got).toEqual(witness.events.map((e) => e.id));
    expect(resumed.events.some((e) => e.event === 'gap')).toBe(false);
    witness.close();
    resumed.close();
  });

  it('says so with a gap event when the events asked for are no longer kept', async () => {
    const resumed = await openSse(`${t.base}/events`, { 'Last-Event-ID': '999999' });
    const gap = await resumed.next((e) => e.event === 'gap');
    expect(JSON.parse(gap.data)).toMatchObject({ lastEventId: 999999 });
    resumed.close();
  });

  it('sends heartbeat comments while idle', async () => {
    const idle = await openSse(`${t.base}/events`);
    expect(await idle.comment()).toBe('heartbeat');
    idle.close();
  });

  it('drops a client that does not read with an overflow event; the others get every event', async () => {
    const port = new URL(t.base).port;
    const slow = net.connect(Number(port), '127.0.0.1');
    slow.write(`GET /api/v2/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`);
    const subscribed = t.h.runEvents.subscriberCount;
    await new Promise<void>((r) => slow.once('data', () => r())); // headers arrived
    slow.pause(); // and now it stops reading
    const fast = await openSse(`${t.base}/events?type=worker`);
    const n = 10_000;
    const filler = 'x'.repeat(2000);
    // in batches the fast client reads between (it lives in this process too); the slow one
    // reads nothing, so its socket and then its bounded buffer fill
    for (let i = 0; i < n; i += 20) {
      for (let j = i; j < i + 20; j++)
        t.h.runEvents.publish({ type: 'worker:joined', data: { workerId: `w${j}`, filler } });
      await fast.count(i + 20);
    }
    const got = fast.events;
    expect(got.map((e) => parsed(e).data.workerId)).toEqual(
      Array.from({ length: n }, (_, i) => `w${i}`),
    );
    // the slow one was dropped: its subscription is gone, and its stream ends with overflow
    expect(t.h.runEvents.subscriberCount).toBe(subscribed + 1);
    const rest: Buffer[] = [];
    slow.on('data', (b: Buffer) => rest.push(b));
    const ended = new Promise<void>((r) => slow.once('end', () => r()));
    slow.resume();
    await ended;
    const text = Buffer.concat(rest).toString('utf8');
    expect(text).toMatch(
      /event: overflow\ndata: \{"message":"this client read too slowly.*"lastEventId":\d+\}/,
    );
    fast.close();
  });
});

describe('the live step log stream', () => {
  it('sends the lines there, then new ones as they are written, then end', async () => {
    const gate = t.gate('g');
    t.h.dag(
      'logs',
      `steps:\n  - {name: talk, command: "echo one; echo two; ${gate.wait}; echo three"}\n`,
    );
    const started = t.published((e) => e.type === 'step:started');
    await start('logs', 'l1');
    await started;
    const follow = await openSse(`${t.base}/dag-runs/logs/l1/steps/talk/log/stream`);
    expect(follow.status).toBe(200);
    const lines = (upTo: number) => (e: SseEvent) => e.event === 'log' && Number(e.id) >= upTo;
    await follow.next(lines(2));
    await gate.open();
    await follow.next((e) => e.event === 'end');
    const text = follow.events
      .filter((e) => e.event === 'log')
      .map((e) => LogLinesEventSchema.parse(JSON.parse(e.data)).content)
      .join('\n');
    expect(text).toBe('one\ntwo\nthree');
    // from an offset, and resuming with Last-Event-ID (the last line number received)
    const fromTwo = await openSse(`${t.base}/dag-runs/logs/l1/steps/talk/log/stream?offset=2`);
    await fromTwo.ended;
    expect(
      fromTwo.events.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data) as unknown),
    ).toEqual([{ from: 2, to: 3, content: 'two\nthree' }]);
    const resumed = await openSse(`${t.base}/dag-runs/logs/l1/steps/talk/log/stream`, {
      'Last-Event-ID': '2',
    });
    await resumed.ended;
    expect(resumed.events.map((e) => e.event)).toEqual(['log', 'end']);
    expect(JSON.parse(resumed.events[0]!.data)).toEqual({ from: 3, to: 3, content: 'three' });
  });

  it('answers 404 for an unknown step before any stream opens', async () => {
    t.h.dag('q', 'steps:\n  - "true"\n');
    await start('q', 'q1');
    await t.h.finished('q', 'q1');
    const res = await fetch(`${t.base}/dag-runs/q/q1/steps/nope/log/stream`);
    expect(res.status).toBe(404);
  });
});
