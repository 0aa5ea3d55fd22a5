import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { Outbox } from './outbox.js';
import {
  chunkOf as chunk,
  fakeCoordinatorClient as fakeClient,
  reportOf as report,
  type Sent,
} from './testing/fake-coordinator-client.js';

const logs = (data: string): Sent => ({ kind: 'logs', data: [data] });

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const outboxOn = (client: ReturnType<typeof fakeClient>['client'], clock = new FakeClock(0)) =>
  new Outbox({
    client: () => client,
    clock,
    dir,
    log: () => undefined,
    warn: () => undefined,
    onDropped: () => undefined,
    random: () => 0,
  });

describe('worker outbox across a worker restart', () => {
  it('replays what was not delivered, in order, with the original sequence numbers', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-outbox-'));
    const before = fakeClient();
    before.state.away = true;
    const first = outboxOn(before.client);
    first.start();
    first.log('r1', chunk('r1', 0, 'one\n'));
    first.status('r1', report('r1', 7), true);
    first.log('r2', chunk('r2', 0, 'two\n'));
    first.status('r2', report('r2', 3));
    await first.stop(); // the worker process ends with all of it undelivered
    expect(before.sent).toEqual([]);

    const after = fakeClient();
    const second = outboxOn(after.client, new FakeClock(0, { autoAdvance: true }));
    expect(second.size).toBe(4);
    second.start();
    await second.drained();
    // each run's lane in its order (the runs' lanes go independently of each other)
    const at = (s: Sent): number =>
      after.sent.findIndex((x) => JSON.stringify(x) === JSON.stringify(s));
    const r1 = [logs('one\n'), { kind: 'status', seq: 7, run: 'r1' } as const].map(at);
    const r2 = [logs('two\n'), { kind: 'status', seq: 3, run: 'r2' } as const].map(at);
    expect(after.sent).toHaveLength(4);
    expect([r1[0]! >= 0 && r1[0]! < r1[1]!, r2[0]! >= 0 && r2[0]! < r2[1]!]).toEqual([true, true]);
    // byte for byte what the first process was given
    expect(after.reports).toEqual([report('r1', 7), report('r2', 3)]);
    await second.stop();
  });

  it('does not replay what the coordinator took before the restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-outbox-'));
    const before = fakeClient();
    const first = outboxOn(before.client);
    first.start();
    first.status('r1', report('r1', 1), true);
    await first.drained();
    before.state.away = true;
    first.status('r2', report('r2', 1), true);
    await first.stop();

    const after = fakeClient();
    const second = outboxOn(after.client);
    second.start();
    await second.drained();
    expect(after.sent).toEqual([{ kind: 'status', seq: 1, run: 'r2' }]);
    await second.stop();
    // everything acknowledged: the journal is empty again
    expect(readFileSync(join(dir, 'outbox.jsonl'), 'utf8')).toBe('');
  });

  it('ignores a last line cut short by a crash', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-outbox-'));
    const before = fakeClient();
    before.state.away = true;
    const first = outboxOn(before.client);
    first.status('r1', report('r1', 4), true);
    await first.stop();
    appendFileSync(join(dir, 'outbox.jsonl'), '{"n":2,"k":"r1","f":tr');

    const after = fakeClient();
    const second = outboxOn(after.client);
    second.start();
    await second.drained();
    expect(after.sent).toEqual([{ kind: 'status', seq: 4, run: 'r1' }]);
    await second.stop();
  });
});
