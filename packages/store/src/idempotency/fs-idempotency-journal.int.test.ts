import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '@trellis/testkit';
import { FsIdempotencyJournal } from './fs-idempotency-journal.js';

const HOUR = 60 * 60 * 1000;
let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entry = (key: string, clock: FakeClock) => ({
  key,
  fingerprint: `f-${key}`,
  request: 'POST /dags/a/start',
  name: 'a',
  dagRunId: `r-${key}`,
  createdAtMs: clock.now().getTime(),
});

describe('idempotency journal on disk', () => {
  it('keeps one file per key, read back by a new journal on the same folder', async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'trellis-idem-')), 'idempotency');
    const clock = new FakeClock();
    await new FsIdempotencyJournal({ dir, clock }).put(entry('a key / with "odd" chars', clock));
    const reopened = new FsIdempotencyJournal({ dir, clock });
    expect(await reopened.get('a key / with "odd" chars')).toMatchObject({
      dagRunId: 'r-a key / with "odd" chars',
    });
    expect(await reopened.get('other')).toBeUndefined();
    await reopened.remove('a key / with "odd" chars');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('sweeps expired entries and, when full, drops the oldest first', async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'trellis-idem-')), 'idempotency');
    const clock = new FakeClock();
    const journal = new FsIdempotencyJournal({ dir, clock, maxEntries: 3, ttlMs: 24 * HOUR });
    for (const k of ['k1', 'k2', 'k3']) {
      await journal.put(entry(k, clock));
      await clock.advanceBy(HOUR);
    }
    await journal.put(entry('k4', clock)); // full: k1, the oldest, goes
    expect(await journal.get('k1')).toBeUndefined();
    expect(await journal.get('k2')).toBeDefined();
    await clock.advanceBy(22 * HOUR); // k2 is 24 h old (expired), k3 23 h
    await journal.put(entry('k5', clock));
    expect(await journal.get('k2')).toBeUndefined();
    expect(await journal.get('k3')).toBeDefined();
    expect(readdirSync(dir)).toHaveLength(3);
  });
});
