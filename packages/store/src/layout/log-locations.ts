import { dirname, join } from 'node:path';
import type { RunRef } from '@trellis/spec';
import { toSafeName } from './safe-name.js';

/** The run log's file name inside a run's log folder. */
export const RUN_LOG_FILE = 'run.log';

/**
 * Where a run's log goes under a log folder: `<logDir>/<dag>/<id>/run.log` (a child's under its
 * own DAG name and id). Workers ask here instead of spelling the layout themselves.
 */
export const runLogPathIn = (logDir: string, ref: RunRef): string =>
  join(logDir, ref.name, ref.dagRunId, RUN_LOG_FILE);

/** The `.out` and `.err` files of a node (`key` = node name, or `onExit` etc.) beside its run log. */
export const stepLogPathsBeside = (
  runLogPath: string,
  key: string,
): { stdoutPath: string; stderrPath: string } => {
  const base = join(dirname(runLogPath), toSafeName(key));
  return { stdoutPath: `${base}.out`, stderrPath: `${base}.err` };
};
