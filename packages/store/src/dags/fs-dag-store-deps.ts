import type { Clock } from '@trellis/core';
import type { DagRunSummary } from '@trellis/services';
import type { ParseDagFn } from './parsed-dag-cache.js';
import type { DagSuspendFlags } from './suspend-flags.js';

/**
 * Where the suspend flags are: a folder of empty files `<fileName>.suspend` (as the peer does),
 * or flags kept elsewhere (the PostgreSQL store's table), owned and closed by the caller.
 */
export type SuspendFlagsSource =
  { readonly suspendDir: string } | { readonly suspendFlags: DagSuspendFlags };

/** What {@link FsDagStore} works with. */
export type FsDagStoreDeps = SuspendFlagsSource & FsDagStoreBase;

export interface FsDagStoreBase {
  /** Folder of the DAG files `<fileName>.yaml` (or `.yml`); created on the first write. */
  readonly dagsDir: string;
  /** "Now" of the `nextRun` sort. */
  readonly clock: Clock;
  /**
   * The latest top-level run of a DAG by DAG name; undefined when it never ran. A summary from the
   * run index is enough (and much cheaper than reading the record: the list asks once per entry).
   */
  readonly latestRun: (dagName: string) => Promise<DagRunSummary | undefined>;
  /** The DAG file parser; tests inject a counting one. @default parseDagFile */
  readonly parse?: ParseDagFn;
  /**
   * Watch both folders and answer reads from memory between changes (a long-running server;
   * call {@link FsDagStore.close} when done). @default false: every read looks at the folder
   */
  readonly watch?: boolean;
  /** File keeping the parsed DAG files across restarts (a cache, keyed by each file's stamp). */
  readonly indexFile?: string;
}
