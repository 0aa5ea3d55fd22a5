import type { RunRef } from '@trellis/spec';
import type { RunningTask } from '../registry/worker-registry.js';
import { runKey } from './remote-runs.js';

/** The run and root run a task a heartbeat lists names. */
export const refsOf = (t: RunningTask): { ref: RunRef; root: RunRef } => ({
  ref: { name: t.dagName, dagRunId: t.dagRunId },
  root: { name: t.rootDagRunName, dagRunId: t.rootDagRunId },
});

/** The {@link runKey} of a task a heartbeat lists. */
export const taskKey = (t: RunningTask): string => {
  const { ref, root } = refsOf(t);
  return runKey(ref, root);
};
