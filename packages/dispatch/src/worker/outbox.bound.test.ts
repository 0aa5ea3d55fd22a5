import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, flushMicrotasks } from '@trellis/testkit';
import { Outbox } from './outbox.js';
import {
  chunkOf as chunk,
  fakeCoordinatorClient as fakeClient,
  reportOf as report,
} from './testing/fake-coordinator-client.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('worker outbox size limit', () => {
  it('holds step output back at the limit and lets it in once deliveries free room', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-outbox-'));
    const { client, sent, state } = fakeClient();
    const clock = new FakeClock(0);
    const box = new Outbox({
      client: () => client,
      clock,
      dir,
      maxBytes: 1_000,
      log: () => undefined,
      warn: () => undefined,
      onDropped: () => undefined,
      random: () => 0,
    });
    box.start();
    state.away = true;
    const line = (i: number): string => `${String(i).padStart(3, '0')} ${'x'.repeat(295)}\n`;
    // each chunk goes to its own file: no joins, one journal line (about 550 bytes) each
    const out = (i: number) => ({ ...chunk('r1', 0, line(i)), path: `/logs/r1.${i}.out` });
    const accepted: number[] = [];
    const writes = [0, 1, 2, 3].map((i) => box.output('r1', out(i)).then(() => accepted.push(i)));
    await flushMicrotasks();
    expect(accepted).toEqual([0, 1]); // the third found the outbox full
    expect(box.heldBytes).toBeGreaterThanOrEqual(1_000);
    // a status report never waits, even at the limit
    box.status('r1', report('r1', 1), true);
    expect(box.size).toBe(3);

    state.away = false;
    await clock.advanceBy(100); // the retry after the failed delivery
    await Promise.all(writes);
    await box.drained();
    expect(accepted).toEqual([0, 1, 2, 3]);
    const delivered = sent.flatMap((s) => (s.kind === 'logs' ? s.data : [`status ${s.seq}`]));
    // nothing lost; the waiting output went after the report queued while it waited
    expect(delivered).toEqual([line(0), line(1), 'status 1', line(2), line(3)]);
    await box.stop();
  });
});
