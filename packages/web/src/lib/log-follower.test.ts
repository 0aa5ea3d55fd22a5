import { describe, expect, it } from 'vitest';
import type { ApiLogChunk } from '@trellis/contract';
import { LogFollower, splitLines } from './log-follower';

/** A log file as the API serves it: `offset`/`limit` windows over its text. */
class FakeLog {
  text = '';
  reads: { offset: number; limit: number }[] = [];
  read = (offset: number, limit: number): Promise<ApiLogChunk> => {
    this.reads.push({ offset, limit });
    const all = this.text === '' ? [] : this.text.replace(/\n$/, '').split('\n');
    const lines = all.slice(offset - 1, offset - 1 + limit);
    return Promise.resolve({
      content: lines.join('\n'),
      lineCount: lines.length,
      totalLines: all.length,
      hasMore: offset - 1 + lines.length < all.length,
      isEstimate: false,
    });
  };
}

describe('splitLines', () => {
  it('splits on newlines and drops the empty piece after a final newline', () => {
    expect(splitLines('a\nb', 2)).toEqual(['a', 'b']);
    expect(splitLines('a\nb\n', 2)).toEqual(['a', 'b']);
    expect(splitLines('', 0)).toEqual([]);
    expect(splitLines('a\n\nb', 3)).toEqual(['a', '', 'b']);
  });
});

describe('LogFollower', () => {
  it('reads an empty log, then the lines as they are appended', async () => {
    const log = new FakeLog();
    const f = new LogFollower(log.read);
    expect(await f.poll()).toBe(0);
    expect(f.lines).toEqual([]);
    log.text = 'one\ntwo\n';
    expect(await f.poll()).toBe(2);
    log.text += 'three\n';
    expect(await f.poll()).toBe(1);
    expect(f.lines).toEqual(['one', 'two', 'three']);
    // each read starts at the last line held
    expect(log.reads.map((r) => r.offset)).toEqual([1, 1, 2]);
  });

  it('replaces a line caught half-written', async () => {
    const log = new FakeLog();
    const f = new LogFollower(log.read);
    log.text = 'done\nhalf';
    await f.poll();
    expect(f.lines).toEqual(['done', 'half']);
    const v = f.version;
    log.text = 'done\nhalf a line\nnext\n';
    await f.poll();
    expect(f.lines).toEqual(['done', 'half a line', 'next']);
    expect(f.version).toBeGreaterThan(v);
  });

  it('does not bump the version when nothing changed', async () => {
    const log = new FakeLog();
    log.text = 'a\nb\n';
    const f = new LogFollower(log.read);
    await f.poll();
    const v = f.version;
    expect(await f.poll()).toBe(0);
    expect(f.version).toBe(v);
  });

  it('reads a 200,000-line log in full windows, in order', async () => {
    const log = new FakeLog();
    log.text = Array.from({ length: 200_000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const f = new LogFollower(log.read);
    expect(await f.poll()).toBe(200_000);
    expect(f.lines).toHaveLength(200_000);
    expect(f.lines[0]).toBe('line 1');
    expect(f.lines[199_999]).toBe('line 200000');
    expect(log.reads.every((r) => r.limit === 10_000)).toBe(true);
    expect(log.reads.length).toBeLessThanOrEqual(22);
    expect(f.totalLines).toBe(200_000);
  });

  it('shares one pass between concurrent polls', async () => {
    const log = new FakeLog();
    log.text = 'x\n';
    const f = new LogFollower(log.read);
    await Promise.all([f.poll(), f.poll(), f.poll()]);
    expect(log.reads).toHaveLength(1);
  });
});
