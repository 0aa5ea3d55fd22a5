import type { ApiLogChunk, ApiNode, ApiRunDetails } from '@trellis/contract';
import { describe, expect, it } from 'vitest';
import { LogFollower } from './follow-logs.js';
import type { LogWindow, RunSource } from './run-source.js';

/** A step log that grows as the test writes to it, read the way the API reads it. */
const growingLog = () => {
  let text = '';
  const chunk = (w: LogWindow): ApiLogChunk => {
    const all = text === '' ? [] : text.replace(/\n$/, '').split('\n');
    const from = (w.offset ?? 1) - 1;
    const lines = all.slice(from, from + (w.limit ?? 10_000));
    return {
      content: lines.join('\n'),
      lineCount: lines.length,
      totalLines: all.length,
      hasMore: from + lines.length < all.length,
      isEstimate: false,
    };
  };
  return { write: (t: string) => (text += t), chunk };
};

const details = (status: number): ApiRunDetails =>
  ({
    nodes: [{ status, step: { name: 'build' }, stdout: '/logs/build.out', stderr: '' } as ApiNode],
    onSuccess: null,
    onFailure: null,
    onCancel: null,
    onExit: null,
  }) as unknown as ApiRunDetails;

describe('LogFollower', () => {
  it('prints each line once, in order, holding back a running step’s last line until it is whole', async () => {
    const log = growingLog();
    const src: RunSource = {
      details: () => Promise.reject(new Error('unused')),
      stepLog: (_r, _s, stream, w) =>
        Promise.resolve(stream === 'stdout' ? log.chunk(w) : undefined),
    };
    const printed: string[] = [];
    const f = new LogFollower(
      src,
      { name: 'd', dagRunId: 'r' },
      {
        stdout: (l) => printed.push(l),
        stderr: (l) => printed.push(`ERR ${l}`),
      },
    );
    log.write('one\ntw');
    expect(await f.poll(details(1))).toBe(true);
    expect(printed).toEqual(['build | one']);
    log.write('o\nthree');
    await f.poll(details(1));
    expect(printed).toEqual(['build | one', 'build | two']);
    await f.poll(details(4)); // finished: the last line is whole
    expect(printed).toEqual(['build | one', 'build | two', 'build | three']);
    expect(await f.poll(details(4))).toBe(false);
  });
});
