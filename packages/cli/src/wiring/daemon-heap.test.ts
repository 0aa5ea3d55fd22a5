import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { fakeHeap } from '../../test/support/fake-heap.js';
import { IdleHeapTrim, v8Heap } from './daemon-heap.js';

const MiB = 1024 * 1024;

describe('IdleHeapTrim', () => {
  it('collects once when a burst that grew the heap is over, not while it goes on', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    for (const mb of [24, 28, 32, 36, 40]) {
      heap.set(mb * MiB);
      expect(trim.check()).toBe(false); // still growing: work goes on
    }
    expect(trim.check()).toBe(true); // still: the burst is over
    expect(heap.collections).toBe(1);
    expect(trim.check()).toBe(false);
    expect(trim.check()).toBe(false);
    expect(heap.collections).toBe(1);
  });

  it('collects a second time after six quiet checks, then no more while idle', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    heap.set(40 * MiB);
    trim.check();
    expect(trim.check()).toBe(true);
    const after = Array.from({ length: 20 }, () => trim.check());
    expect(after.indexOf(true)).toBe(5); // the sixth quiet check
    expect(after.filter(Boolean)).toHaveLength(1);
  });

  it('puts the second collection off while work goes on', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    heap.set(40 * MiB);
    trim.check();
    trim.check(); // the first collection
    for (let i = 0; i < 4; i++) trim.check();
    heap.set(21 * MiB); // a little work: not enough to arm, but not quiet
    expect(trim.check()).toBe(false);
    const after = Array.from({ length: 10 }, () => trim.check());
    expect(after.indexOf(true)).toBe(5);
  });

  it('leaves an idle heap alone, and a heap that grew less than the threshold', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    for (let i = 0; i < 10; i++) trim.check();
    heap.set(23 * MiB);
    for (let i = 0; i < 10; i++) trim.check();
    expect(heap.collections).toBe(0);
  });

  it("counts growth from the lowest use seen: V8's own collections lower the base", () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    heap.set(15 * MiB); // a scavenge of V8's own: 15 MiB is what lives
    trim.check();
    heap.set(19.5 * MiB); // 4.5 MiB above the base, though below the start
    trim.check();
    expect(trim.check()).toBe(true);
  });

  it('collects again after the next burst', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    for (let burst = 1; burst <= 3; burst++) {
      heap.set(40 * MiB);
      trim.check();
      trim.check();
    }
    expect(heap.collections).toBe(3);
  });

  it('compacts an old space the first collection leaves fragmented, at once, and only such a one', () => {
    for (const [slack, compacts] of [
      [20 * MiB, [false, true, false]],
      [8 * MiB, [false, false]],
    ] as const) {
      const heap = fakeHeap(20 * MiB);
      heap.slackBytes = slack;
      const trim = new IdleHeapTrim(heap);
      heap.set(40 * MiB);
      trim.check();
      for (let i = 0; i < 7; i++) trim.check(); // the first collection, then the settling one
      expect(heap.compacted, `slack ${slack / MiB} MiB`).toEqual(compacts);
    }
  });

  it('compacts in the settling collection an old space fragmented since the first', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    heap.set(40 * MiB);
    trim.check();
    trim.check(); // the first collection
    trim.check(); // quiet, but no slack to compact
    heap.slackBytes = 12 * MiB; // V8's own collections since left half-empty pages
    for (let i = 0; i < 5; i++) trim.check();
    expect(heap.compacted).toEqual([false, true]);
  });

  it('compacts after a burst at the second quiet check, not in the first collection', () => {
    const heap = fakeHeap(20 * MiB);
    heap.slackBytes = 20 * MiB;
    const trim = new IdleHeapTrim(heap);
    for (const mb of [28, 36, 44]) {
      heap.set(mb * MiB);
      expect(trim.check()).toBe(false); // the burst
    }
    expect(trim.check()).toBe(true); // quiet: the first collection
    expect(heap.compacted).toEqual([false]);
    expect(trim.check()).toBe(true); // quiet again: the burst is over
    expect(heap.compacted).toEqual([false, true]);
  });

  it('does not compact after a lucky quiet check under load: the settling GC does, once idle', () => {
    const heap = fakeHeap(20 * MiB);
    heap.slackBytes = 20 * MiB;
    const trim = new IdleHeapTrim(heap);
    heap.set(40 * MiB);
    trim.check(); // the burst
    expect(trim.check()).toBe(true); // one quiet check: the first collection
    heap.set(22 * MiB); // work goes on: not quiet, not enough to arm
    expect(trim.check()).toBe(false);
    expect(trim.check()).toBe(false); // quiet, but the busy check came between
    expect(heap.compacted).toEqual([false]);
    const after = Array.from({ length: 10 }, () => trim.check());
    expect(after.indexOf(true)).toBe(4); // the sixth quiet check after the busy one
    expect(heap.compacted).toEqual([false, true]);
  });

  it('compacts no more than the settling GC when compaction leaves the old space fragmented', () => {
    const heap = fakeHeap(20 * MiB);
    const collect = heap.collect;
    heap.collect = (compact) => {
      collect(compact);
      heap.slackBytes = 12 * MiB; // pages V8 could not free
    };
    heap.slackBytes = 20 * MiB;
    const trim = new IdleHeapTrim(heap);
    heap.set(40 * MiB);
    trim.check();
    const checks = Array.from({ length: 30 }, () => trim.check());
    expect(checks.map((c, i) => (c ? i : -1)).filter((i) => i >= 0)).toEqual([0, 1, 6]);
    expect(heap.compacted).toEqual([false, true, true]);
  });

  it('leaves a slowly allocating process alone: the young generation filling is no burst', () => {
    const heap = fakeHeap(20 * MiB);
    const trim = new IdleHeapTrim(heap);
    let young = 0;
    for (let i = 0; i < 100; i++) {
      young += 250 * 1024; // under the quiet step: every check is quiet
      if (young > 6 * MiB) young = 0; // a scavenge of V8's own
      heap.young(young);
      trim.check();
    }
    expect(heap.collections).toBe(0);
  });
});

describe('v8Heap (the real heap)', () => {
  const gcNow = () => (globalThis as { gc?: unknown }).gc;

  it('collects: a dropped 20 MB of objects leaves the used heap', () => {
    const heap = v8Heap();
    const hold: { junk: unknown } = {
      junk: Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` })),
    };
    const before = heap.used();
    expect(heap.old()).toBeGreaterThan(0);
    hold.junk = undefined;
    heap.collect(false);
    expect(heap.used()).toBeLessThan(before - 5 * 1024 * 1024);
  });

  it('compacts: the survivors of half-empty pages move together and the pages go back', () => {
    const heap = v8Heap();
    const oldSpace = () => {
      const s = getHeapSpaceStatistics().find((x) => x.space_name === 'old_space');
      return { committed: s?.space_size ?? 0, used: s?.space_used_size ?? 0 };
    };
    const junk: unknown[] = Array.from({ length: 400_000 }, (_, i) => ({ i, s: `x${i}` }));
    heap.collect(false);
    heap.collect(false); // promoted: the objects fill some 25 MB of old-space pages
    for (let i = 0; i < junk.length; i++) if (i % 256 !== 0) junk[i] = undefined;
    heap.collect(true); // one object in 256 is left on every page
    const slack = heap.slack();
    const { committed, used } = oldSpace();
    // the same measure read twice: anything the runner allocates between the reads moves it
    expect(Math.abs(slack - (committed - used))).toBeLessThan(MiB);
    // without compaction those pages stay: some 25 MB committed beyond what is used (under 1 MB
    // with it: the page being allocated on, and what the test runner allocated meanwhile)
    expect(committed - used).toBeLessThan(4 * MiB);
    expect(junk.length).toBe(400_000);
  });

  it('leaves `gc` as it found it, in this context and in contexts made later', () => {
    const was = typeof gcNow();
    v8Heap().collect(false); // the context with `gc` is made at the first collection
    expect(typeof gcNow()).toBe(was);
    expect(runInNewContext('typeof gc')).toBe(was);
  });

  it('keeps --expose-gc on when the process had it on (NODE_OPTIONS=--expose-gc)', () => {
    const had = gcNow();
    setFlagsFromString('--expose-gc');
    Object.assign(globalThis, { gc: runInNewContext('gc') });
    try {
      v8Heap().collect(false);
      expect(runInNewContext('typeof gc')).toBe('function');
    } finally {
      if (had === undefined) {
        delete (globalThis as { gc?: unknown }).gc;
        setFlagsFromString('--no-expose-gc');
      }
    }
  });

  it('turns compaction on for a compacting collection only, and off only if it turned it on', () => {
    const flagsSet = (execArgv: string[], compact: boolean): string[] => {
      const set: string[] = [];
      const setFlags = (f: string): void => {
        set.push(f);
        setFlagsFromString(f);
      };
      v8Heap({ execArgv, setFlags }).collect(compact);
      return set.filter((f) => f.includes('compact'));
    };
    expect(flagsSet([], false)).toEqual([]);
    expect(flagsSet([], true)).toEqual([
      '--compact-on-every-full-gc',
      '--no-compact-on-every-full-gc',
    ]);
    // the process was started with it: every full GC compacts already, and keeps doing so
    expect(flagsSet(['--compact_on_every_full_gc'], true)).toEqual([]);
    expect(flagsSet(['--compact-on-every-full-gc'], false)).toEqual([]);
  });
});
