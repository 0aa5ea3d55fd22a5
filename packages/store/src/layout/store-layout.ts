import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { expandHome } from '@trellis/core';
import { RUN_ID_PATTERN } from '@trellis/core';
import type { RunRef } from '@trellis/spec';
import { RUN_LOG_FILE, runLogPathIn, stepLogPathsBeside } from './log-locations.js';

/** File names inside a run's directory. */
export const STATUS_FILE = 'status.json';
export const SNAPSHOT_FILE = 'dag.json';
export const STOP_FILE = 'stop-requested';
export const CHILDREN_DIR = 'children';
export const INDEX_FILE = 'index.jsonl';
export { RUN_LOG_FILE };

/** Where one run lives: its directory, and the DAG index (and key in it) that lists it. */
export interface RunLocation {
  readonly dir: string;
  /** The DAG whose `index.jsonl` holds the run: its own name, or its root's for a child. */
  readonly indexDag: string;
  /** Key in that index: `dagRunId`, or `rootId/childId` for a child. */
  readonly key: string;
}

/**
 * True when `name` can be a directory name: anything but `''`, `.`, `..` and names with a path
 * separator or NUL. DAG names are validated by the spec package; this only guards the file system.
 */
export const isSafeDagName = (name: string): boolean =>
  name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);

/** True when `id` is a run id the store accepts (the core `RUN_ID_PATTERN`: no dots, no slashes). */
export const isSafeRunId = (id: string): boolean => RUN_ID_PATTERN.test(id);

/** Index key of a run: top-level runs by id, children by `rootId/childId` (ids hold no `/`). */
export const indexKeyOf = (ref: RunRef, root?: RunRef): string =>
  root === undefined ? ref.dagRunId : `${root.dagRunId}/${ref.dagRunId}`;

/**
 * The store's paths (docs/architecture.md, "Storage", refined by issue 3):
 * `<dataDir>/runs/<dag>/<id>/{status.json,dag.json,stop-requested}`, children under their root's
 * `children/<childId>/`, per-DAG `index.jsonl` and `.changes` (runs/dag-changes.ts), and logs in `<logDir>/<dag>/<id>/`.
 */
export class StoreLayout {
  readonly runsDir: string;

  constructor(
    dataDir: string,
    readonly logDir: string,
    /** What a leading `~` of a DAG's `logDir` means. */
    readonly userHome: string = homedir(),
  ) {
    this.runsDir = join(dataDir, 'runs');
  }

  dagDir(dagName: string): string {
    return join(this.runsDir, dagName);
  }

  indexPath(dagName: string): string {
    return join(this.runsDir, dagName, INDEX_FILE);
  }

  /** Location of a run; `root` given (and different from `ref`) means a child of that root. */
  locate(ref: RunRef, root?: RunRef): RunLocation {
    const child = root !== undefined && !sameRef(root, ref);
    if (!child) {
      return {
        dir: join(this.runsDir, ref.name, ref.dagRunId),
        indexDag: ref.name,
        key: ref.dagRunId,
      };
    }
    return {
      dir: join(this.runsDir, root.name, root.dagRunId, CHILDREN_DIR, ref.dagRunId),
      indexDag: root.name,
      key: indexKeyOf(ref, root),
    };
  }

  /** Directory of a run's logs; a child's logs go under its own DAG name and id. */
  runLogDir(ref: RunRef): string {
    return join(this.logDir, ref.name, ref.dagRunId);
  }

  /**
   * Path of a run's log: under the DAG's own `logDir` when it sets one (a leading `~` is this
   * process's home, a relative path is under the store's log folder), else under the store's.
   */
  runLogPath(ref: RunRef, dagLogDir?: string): string {
    return runLogPathIn(this.logRootOf(dagLogDir), ref);
  }

  /** The folder a DAG's `logDir` names, absolute (docs/decisions.md, "DAG-level logDir"). */
  logRootOf(dagLogDir: string | undefined): string {
    if (dagLogDir === undefined || dagLogDir.trim() === '') return this.logDir;
    const expanded = expandHome(dagLogDir.trim(), this.userHome);
    return isAbsolute(expanded) ? expanded : resolve(this.logDir, expanded);
  }

  /**
   * The folder of a run's logs as its record names it (`log`, which may be under a DAG's own
   * `logDir`); the store's layout when the record has none.
   */
  runLogDirOf(record: RunRef & { readonly log: string }): string {
    const own = record.log !== '' && basename(record.log) === RUN_LOG_FILE;
    return own ? dirname(record.log) : this.runLogDir(record);
  }

  /** The `.out` and `.err` files of a node (`key` = node name, or `onExit` etc. for handlers). */
  stepLogPaths(ref: RunRef, key: string): { stdoutPath: string; stderrPath: string } {
    return stepLogPathsBeside(this.runLogPath(ref), key);
  }
}

export const sameRef = (a: RunRef, b: RunRef): boolean =>
  a.name === b.name && a.dagRunId === b.dagRunId;
