import type { Clock } from '@trellis/core';
import { StoreWriteErrors } from '../health/store-write-errors.js';
import { StoreLayout } from '../layout/store-layout.js';
import { DagChanges } from './dag-changes.js';
import { DagIndexes } from './dag-indexes.js';
import type { FsRunStoreOptions } from './fs-run-store-options.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { RecordCache } from './record-cache.js';
import { RunDeleter } from './run-deleter.js';
import { runNotFound } from './run-locations.js';
import { RunReader } from './run-reader.js';
import { RunWriter } from './run-writer.js';

/**
 * The rooms of the file store of runs and what they share, wired once from its options:
 * `FsRunStore` is the one entry to them (writes, reads, deletions, the DAGs' indexes and change
 * files), and retention takes them as they are (`ExpireRunsDeps`).
 */
export interface FsRunRooms {
  readonly layout: StoreLayout;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
  readonly indexes: DagIndexes;
  readonly changes: DagChanges;
  readonly writer: RunWriter;
  readonly reader: RunReader;
  readonly deleter: RunDeleter;
  /** The store's write errors (`FsRunStore.writeErrors`). */
  readonly writeErrors: StoreWriteErrors;
}

/** Wires the rooms of a file store of runs (`FsRunStore`'s constructor). */
export const openFsRunRooms = (options: FsRunStoreOptions): FsRunRooms => {
  const layout = new StoreLayout(options.dataDir, options.logDir, options.userHome);
  const clock = options.clock;
  const warn = options.warn ?? (() => undefined);
  // Per-run chain: saves of one run are applied in call order (deletions wait for them).
  const saves = new KeyedSerialQueue();
  const records = new RecordCache();
  const indexes = new DagIndexes({
    layout,
    clock,
    warn,
    compactFactor: options.indexCompactFactor ?? 4,
  });
  const changes = new DagChanges(layout, warn);
  const writer = new RunWriter({
    layout,
    indexes,
    changes,
    saves,
    clock,
    records,
    onSaved: options.onRecordSaved,
    warn,
  });
  const reader = new RunReader({ layout, indexes, warn, records });
  const deleter = new RunDeleter({
    layout,
    index: (dag) => indexes.of(dag),
    changes,
    saves,
    clock,
    warn,
    notFound: (ref) => runNotFound(ref),
  });
  const writeErrors = new StoreWriteErrors(clock);
  return { layout, clock, warn, indexes, changes, writer, reader, deleter, writeErrors };
};
