import { messageOf } from '../fs/fs-errors.js';
import { corruptRecord } from './status-file.js';

/**
 * What `dag.json` keeps for a run: the DAG as it was when the run was created, plus the other
 * DAGs of its file (child steps may name them). The store does not interpret either; retry and
 * child runs read them back from here, never from the (possibly edited) DAG file.
 */
export interface RunSnapshot {
  /** The DAG of the run, as JSON-serialisable data. */
  readonly dag: unknown;
  /** The other DAGs of the same file (spec: `localDags`); `[]` when there are none. */
  readonly localDags: readonly unknown[];
}

/** Parses `dag.json` text; anything else is an `internal_error` naming the file. */
export const parseSnapshot = (path: string, text: string): RunSnapshot => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw corruptRecord(path, messageOf(e));
  }
  const snap = value as Partial<RunSnapshot> | null;
  if (typeof snap !== 'object' || snap === null || !Array.isArray(snap.localDags))
    throw corruptRecord(path, 'not a DAG snapshot');
  return snap as RunSnapshot;
};
