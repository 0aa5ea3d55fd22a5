import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SERVICE_COMMANDS } from '../service-log.js';

/**
 * The heap of a long-running process (`server`, `start-all`, `scheduler`, `coordinator`,
 * `worker`) between bursts of work. Measured (bench/memory.bench.js, bench/fleet.bench.js;
 * docs/decisions.md, "Memory held after a burst of runs"): after 1,000 runs the server's live
 * heap is about 25 MB but V8 holds 75 to 100 MB, because
 * - the young generation grows to its 2 x 16 MB maximum under load and V8 gives it back only
 *   after 5 s of low allocation *at a GC*, and
 * - an idle process allocates nothing, so no GC comes: the garbage of the last burst and the
 *   old generation's grown slack stay resident for as long as the process idles.
 * So the young generation grows no more once the command starts (it stays at the 2 x 4 MB module
 * loading left; scavenges come more often and cost the same per live object), and full GCs run
 * once a burst is over (the next quiet check compacts a fragmented old space): the settling one,
 * in a quiet heap, also shrinks the young generation.
 */

/** What {@link IdleHeapTrim} reads and does; tests pass a fake. */
export interface HeapPort {
  /** Bytes of the JS heap in use now (live and not yet collected). */
  used(): number;
  /** Of those, the bytes outside the young generation (old, code and large-object spaces). */
  old(): number;
  /** Bytes the old space holds beyond what it uses (committed minus used): half-empty pages. */
  slack(): number;
  /**
   * A full garbage collection; `compact`: one that also moves the survivors of half-empty pages
   * together, so V8 frees those pages (it pauses the process about 3 times as long).
   */
  collect(compact: boolean): void;
}

export interface IdleHeapTrimOptions {
  /**
   * Growth of the old generation since the last collection that makes one worth it (4 MiB). Not
   * of the whole used heap: the young generation alone fills 4 MiB between two scavenges, so a
   * process allocating slowly (a worker's heartbeats) would be quiet at every check and armed
   * every ~16 s; what a burst leaves behind is what it promoted.
   */
  readonly armBytes?: number;
  /** A check whose used heap moved less than this (256 KiB) is quiet: the burst is over. */
  readonly quietBytes?: number;
  /** Old-space slack above which a collection compacts (8 MiB). */
  readonly compactBytes?: number;
  /** Quiet checks in a row that tell a burst is over and arm the first collection (1). */
  readonly armChecks?: number;
  /** Quiet checks after the first collection before the settling one (6). */
  readonly settleChecks?: number;
}

const MiB = 1024 * 1024;

/**
 * One full GC once the old generation grew by {@link IdleHeapTrimOptions.armBytes} and the heap
 * then stayed still for {@link IdleHeapTrimOptions.armChecks} checks in a row: none while work
 * goes on, none on an idle heap. A compacting one at the next check if that is quiet too and the
 * old space is fragmented. And one more after {@link IdleHeapTrimOptions.settleChecks} quiet
 * checks: only a GC that sees 5 s of low allocation gives the young generation back (V8's
 * `Heap::ReduceNewSpaceSize`), which the first, right after the burst, does not.
 */
export class IdleHeapTrim {
  readonly #heap: HeapPort;
  readonly #armBytes: number;
  readonly #quietBytes: number;
  readonly #compactBytes: number;
  readonly #armChecks: number;
  readonly #settleChecks: number;
  /** Quiet checks in a row up to now. */
  #quietRun = 0;
  /** The old generation's use after the last collection (or the lowest seen since). */
  #base: number;
  /** The whole heap's use at the last check. */
  #last: number;
  /** Quiet checks left before the settling GC; undefined when none is due. */
  #settleIn: number | undefined;
  /** The last check collected after a burst: the next, if quiet too, may compact. */
  #compactNext = false;

  constructor(heap: HeapPort, options: IdleHeapTrimOptions = {}) {
    this.#heap = heap;
    this.#armBytes = options.armBytes ?? 4 * MiB;
    this.#quietBytes = options.quietBytes ?? 256 * 1024;
    this.#compactBytes = options.compactBytes ?? 8 * MiB;
    this.#armChecks = options.armChecks ?? 1;
    this.#settleChecks = options.settleChecks ?? 6;
    this.#base = heap.old();
    this.#last = heap.used();
  }

  /** One check (every second in a daemon); true when it collected. */
  check(): boolean {
    const used = this.#heap.used();
    const quiet = Math.abs(used - this.#last) < this.#quietBytes;
    this.#last = used;
    const old = this.#heap.old();
    // a GC of V8's own since the last trim: what it kept is the new base
    if (old < this.#base) this.#base = old;
    const compactNext = this.#compactNext;
    this.#compactNext = false;
    if (!quiet) {
      this.#quietRun = 0;
      // a lucky quiet check under load armed the trim: compaction waits for the settling GC
      if (this.#settleIn !== undefined) this.#settleIn = this.#settleChecks;
      return false;
    }
    this.#quietRun++;
    if (old - this.#base >= this.#armBytes && this.#quietRun >= this.#armChecks) {
      this.#collect(false);
      // The slack shows after this GC only (before it, the garbage counts as used). Not compacted
      // here: one quiet check may be luck under load, and a compacting GC right after this one
      // would pause a busy process for both (up to ~0.85 s at load 13).
      this.#compactNext = true;
      this.#settleIn = this.#settleChecks;
      return true;
    }
    if (this.#settleIn === undefined) return false;
    if (--this.#settleIn === 0) {
      this.#settleIn = undefined;
      this.#collect(this.#fragmented());
      return true;
    }
    // a second quiet check: the burst is over. Its promoted garbage left the old space's pages
    // half empty, which only a compacting GC gives back: done now, not at the settling GC 5 s
    // later (at 9,000 runs of bench/memory.bench.js, old space 52.7 MB held for 32.8 MB used 3 s
    // after the burst).
    if (!compactNext || !this.#fragmented()) return false;
    this.#collect(true);
    return true;
  }

  /**
   * Whether a collection now should compact: only a fragmented old space, since a compacting GC
   * pauses the process about 3 times as long (358-677 ms against 116-176 ms at load 13).
   */
  #fragmented(): boolean {
    return this.#heap.slack() > this.#compactBytes;
  }

  #collect(compact: boolean): void {
    this.#heap.collect(compact);
    this.#base = this.#heap.old();
    this.#last = this.#heap.used();
  }
}

/** The young generation's spaces (V8's names), left out of {@link HeapPort.old}. */
const YOUNG = new Set(['new_space', 'new_large_object_space']);

const oldGenerationUsed = (): number => {
  let bytes = 0;
  for (const s of getHeapSpaceStatistics())
    if (!YOUNG.has(s.space_name)) bytes += s.space_used_size;
  return bytes;
};

const oldSpaceSlack = (): number => {
  const s = getHeapSpaceStatistics().find((x) => x.space_name === 'old_space');
  return s === undefined ? 0 : s.space_size - s.space_used_size;
};

/** V8's flag that makes every full GC compact, as a command line may spell it. */
const COMPACT_FLAG = /^--compact[-_]on[-_]every[-_]full[-_]gc$/;

/** What {@link v8Heap} reads of the process and how it sets V8 flags (tests pass their own). */
export interface V8HeapOptions {
  /** The process's command-line options (process.execArgv). */
  readonly execArgv?: readonly string[];
  readonly setFlags?: (flags: string) => void;
}

/**
 * The real heap: `gc()` from a context made while `--expose-gc` was on, made at the first
 * collection (a context costs about 5 ms, which a server would otherwise pay before it listens).
 * The flag goes off again unless it was on already (`NODE_OPTIONS=--expose-gc`: contexts made
 * later keep their `gc`).
 */
export const v8Heap = (options: V8HeapOptions = {}): HeapPort => {
  const setFlags = options.setFlags ?? setFlagsFromString;
  // a process started with the flag compacts at every full GC already: left as it is
  const compacting = (options.execArgv ?? process.execArgv).some((a) => COMPACT_FLAG.test(a));
  let gc: (() => void) | undefined;
  const exposedGc = (): (() => void) => {
    if (gc !== undefined) return gc;
    const exposed = typeof (globalThis as { gc?: unknown }).gc === 'function';
    setFlags('--expose-gc');
    gc = runInNewContext('gc') as () => void;
    if (!exposed) setFlags('--no-expose-gc');
    return gc;
  };
  return {
    used: () => getHeapStatistics().used_heap_size,
    old: oldGenerationUsed,
    slack: oldSpaceSlack,
    collect: (compact) => {
      const collect = exposedGc();
      if (!compact || compacting) return collect();
      // the survivors of half-empty pages move together, so the pages go back to the system
      // (V8 compacts only the most fragmented pages otherwise: after start-up a worker's old
      // space held 28 MB for 20 MB live, 8 MB of RSS)
      setFlags('--compact-on-every-full-gc');
      try {
        collect();
      } finally {
        setFlags('--no-compact-on-every-full-gc');
      }
    },
  };
};

/**
 * How a daemon checks its heap: every half second, a burst over after 1 s of quiet (two checks
 * under 128 KiB each), the fragmented old space compacted at the next quiet check, and the
 * settling GC after 6 s of quiet. With checks every second, the compaction came 2 to 3 s after a
 * burst's last run (the first check after it still saw the burst), and so after the memory
 * bench's 3 s reading about half the time: 20,000 runs, server 128.5 MB at 3 s, 107.3 at 4 s
 * (docs/decisions.md, "Memory as history grows: the compaction before the 3 s reading").
 */
export const DAEMON_TRIM = {
  checkMs: 500,
  options: { quietBytes: 128 * 1024, armChecks: 2, settleChecks: 12 },
} as const satisfies { checkMs: number; options: IdleHeapTrimOptions };

let tuned = false;

/**
 * Sets up the heap of a long-running command, once per process: the young generation stays
 * small, and memory goes back to the system once a burst of work is over (the check timer never
 * keeps the process alive). Called by the binary before it loads the CLI (see
 * {@link tuneDaemonHeapFor}).
 */
export const tuneDaemonHeap = (): void => {
  if (tuned) return;
  tuned = true;
  // read by V8 each time it would grow the young generation: 1 keeps the first size
  setFlagsFromString('--semi-space-growth-factor=1');
  const trim = new IdleHeapTrim(v8Heap(), DAEMON_TRIM.options);
  setInterval(() => trim.check(), DAEMON_TRIM.checkMs).unref();
};

/**
 * {@link tuneDaemonHeap} when `argv` (the binary's arguments) names a long-running command. The
 * binary calls it before it imports the CLI's modules (packages/cli/bin/trellis.js): loading
 * them grew the young generation (new space) from 1 MB to 8 MB first, which no GC gave back until
 * the trim's settling collection, 7 s or more after start-up (3-4 MB of a worker's RSS).
 */
export const tuneDaemonHeapFor = (argv: readonly string[]): void => {
  if (SERVICE_COMMANDS.has(argv[0] ?? '')) tuneDaemonHeap();
};
