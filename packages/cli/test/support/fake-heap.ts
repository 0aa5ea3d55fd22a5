import type { HeapPort } from '../../src/wiring/daemon-heap.js';

export type FakeHeap = HeapPort & {
  /** Sets the old generation's use (the young generation's is added to it). */
  set(bytes: number): void;
  /** Sets the young generation's use. */
  young(bytes: number): void;
  collections: number;
  /** Whether each collection compacted, in order. */
  compacted: boolean[];
  /** The old space's slack (committed minus used) the heap reports. */
  slackBytes: number;
};

/** A heap whose use the test sets; a collection brings it back to `live`, all old. */
export const fakeHeap = (live: number): FakeHeap => {
  let old = live;
  let young = 0;
  const heap = {
    collections: 0,
    compacted: [] as boolean[],
    slackBytes: 0,
    used: () => old + young,
    old: () => old,
    slack: () => heap.slackBytes,
    collect: (compact: boolean) => {
      heap.collections++;
      heap.compacted.push(compact);
      if (compact) heap.slackBytes = 0; // the survivors moved together: the pages went back
      old = live;
      young = 0;
    },
    set: (bytes: number) => {
      old = bytes;
    },
    young: (bytes: number) => {
      young = bytes;
    },
  };
  return heap;
};
