import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboxJournal, outboxDirOf } from './outbox-journal.js';
import { chunkOf, reportOf } from './testing/fake-coordinator-client.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const fresh = (): string => (dir = mkdtempSync(join(tmpdir(), 'trellis-journal-')));
const fileSize = (): number => statSync(join(dir, 'outbox.jsonl')).size;

describe('outbox journal', () => {
  it('rewrites the file without the acknowledged messages once three quarters are acknowledged', () => {
    const { journal } = OutboxJournal.open(fresh());
    const big = 'x'.repeat(400 * 1024);
    const ns = [0, 1, 2, 3, 4].map((i) =>
      journal.append('r1', { kind: 'log', chunk: chunkOf('r1', i * big.length, big) }, false),
    );
    const oneLine = fileSize() / 5;
    journal.ack(ns.slice(0, 3));
    expect(fileSize()).toBeGreaterThan(oneLine * 5); // not yet: 2 of 5 still pending
    journal.ack([ns[3]!]);
    expect(fileSize()).toBeLessThan(oneLine * 1.1); // only the pending line is left
    expect(journal.liveBytes).toBe(fileSize());
    journal.close();
    const { pending } = OutboxJournal.open(dir);
    expect(pending.map((e) => e.n)).toEqual([ns[4]]);
  });

  it('continues numbering after the messages it replays', () => {
    const { journal } = OutboxJournal.open(fresh());
    journal.append('r1', { kind: 'status', report: reportOf('r1', 1), final: false }, true);
    journal.close();
    const again = OutboxJournal.open(dir);
    expect(again.pending).toHaveLength(1);
    expect(
      again.journal.append('r1', { kind: 'status', report: reportOf('r1', 2), final: true }, true),
    ).toBe(2);
    again.journal.close();
  });

  it('refuses a directory another live process uses, naming the fix', () => {
    fresh();
    writeFileSync(join(dir, 'outbox.lock'), String(process.ppid));
    expect(() => OutboxJournal.open(dir)).toThrow(
      /in use by process \d+: give each worker sharing a home directory its own worker id/,
    );
  });

  it('takes over the directory of a process that is gone', () => {
    fresh();
    writeFileSync(join(dir, 'outbox.lock'), '2147483646');
    const { journal } = OutboxJournal.open(dir);
    journal.close();
  });

  it('gives every worker id its own directory name', () => {
    expect(outboxDirOf('/h', 'box@123')).toBe('/h/worker-outbox/box%40123');
    expect(outboxDirOf('/h', '..')).toBe('/h/worker-outbox/%2e%2e');
    expect(outboxDirOf('/h', 'a_b')).not.toBe(outboxDirOf('/h', 'a.b'));
  });
});
