import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../runs/run-summary.js';
import { decodeIndexLine, encodeIndexLine, keyOfSummary } from './index-line.js';
import { IndexState } from './index-state.js';

const summary = (id: string, over: Partial<RunSummary> = {}): RunSummary => ({
  name: 'one',
  dagRunId: id,
  root: { name: 'one', dagRunId: id },
  status: 4,
  createdAt: '2026-11-29T22:34:34.822Z',
  queuedAt: '',
  startedAt: '2026-11-29T22:34:34.822Z',
  finishedAt: '2026-11-29T22:34:35.644Z',
  log: `/home/logs/one/${id}/run.log`,
  params: [],
  error: '',
  queue: 'one',
  revision: 4,
  owner: { pid: 4158, host: 'vm', processStart: '2026-11-29T22:23:14.360Z', workerId: 'local' },
  ...over,
});

/** `s` without an owner (a run no process has claimed yet). */
const unowned = (s: RunSummary): RunSummary => {
  const { owner: _, ...rest } = s;
  return rest;
};

/** Applies `s` as the store reads it back: one line of `index.jsonl`, parsed. */
const applyParsed = (state: IndexState, s: RunSummary): void => {
  const line = decodeIndexLine(
    encodeIndexLine({ kind: 'put', key: keyOfSummary(s), summary: s }).trimEnd(),
  );
  if (line === undefined) throw new Error('undecodable');
  state.apply(line);
};

describe('IndexState', () => {
  it('keeps each summary as written, field for field and in order', () => {
    const state = new IndexState();
    const written = [
      summary('a'),
      unowned(summary('b', { startedAt: '2026-11-29T22:35:00.000Z' })),
      summary('c', {
        parent: { name: 'one', dagRunId: 'a' },
        root: { name: 'one', dagRunId: 'a' },
      }),
    ];
    for (const s of written) applyParsed(state, s);
    for (const s of written)
      expect(JSON.stringify(state.entries.get(keyOfSummary(s))?.summary)).toBe(JSON.stringify(s));
  });

  it("shares the owner of one process's runs, and a top-level run's id with its root", () => {
    const state = new IndexState();
    for (const id of ['a', 'b']) applyParsed(state, summary(id));
    applyParsed(
      state,
      summary('c', { owner: { pid: 9, host: 'vm', processStart: 'x', workerId: 'w' } }),
    );
    const [a, b, c] = ['a', 'b', 'c'].map((k) => state.entries.get(k)?.summary);
    expect(a?.owner).toBe(b?.owner);
    expect(c?.owner).not.toBe(a?.owner);
    expect(c?.owner).toEqual({ pid: 9, host: 'vm', processStart: 'x', workerId: 'w' });
    expect(a?.root).toEqual({ name: 'one', dagRunId: 'a' });
    expect(a?.root).not.toBe(b?.root);
  });

  it('keeps a root with a key beyond name and dagRunId as it was read', () => {
    const state = new IndexState();
    const root = { name: 'one', dagRunId: 'a', extra: 1 } as RunSummary['root'];
    applyParsed(state, summary('a', { root }));
    expect(state.entries.get('a')?.summary.root).toEqual({ name: 'one', dagRunId: 'a', extra: 1 });
  });

  it('shares at most 256 owners, and still keeps every run whole past them', () => {
    const state = new IndexState();
    const owner = (pid: number) => ({ pid, host: 'vm', processStart: 'x', workerId: 'local' });
    for (let pid = 0; pid < 600; pid++)
      applyParsed(state, summary(`r${pid}`, { owner: owner(pid) }));
    expect(state.entries.size).toBe(600);
    for (let pid = 0; pid < 600; pid++)
      expect(state.entries.get(`r${pid}`)?.summary.owner).toEqual(owner(pid));
  });
});
