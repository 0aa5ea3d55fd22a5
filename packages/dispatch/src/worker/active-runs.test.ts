import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ActiveRuns } from './active-runs.js';

const running = (dagRunId: string) => {
  const ref = { name: 'd', dagRunId };
  return {
    ref,
    root: ref,
    parent: undefined,
    startedAt: '',
    stop: new AbortController(),
    dropped: false,
  };
};

describe('ActiveRuns.whenReported', () => {
  it('leaves no listener on the signal, however many times it is awaited', async () => {
    const runs = new ActiveRuns();
    const halt = new AbortController();
    for (let i = 0; i < 3; i++) {
      runs.add(`k${i}`, running(`r${i}`));
      runs.end(`k${i}`, Promise.resolve());
      await runs.whenReported(halt.signal);
      expect(getEventListeners(halt.signal, 'abort')).toHaveLength(0);
    }
    expect(runs.tasks()).toEqual([]);
  });

  it('resolves when the signal aborts, a report still undelivered', async () => {
    const runs = new ActiveRuns();
    const halt = new AbortController();
    runs.add('k', running('r1'));
    runs.end('k', new Promise<void>(() => undefined));
    const waited = runs.whenReported(halt.signal);
    halt.abort();
    await waited;
    expect(getEventListeners(halt.signal, 'abort')).toHaveLength(0);
    expect(runs.tasks()).toHaveLength(1); // still listed: its report never went
  });
});
