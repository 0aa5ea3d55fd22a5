import { basename, dirname, join } from 'node:path';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';

/**
 * The record with its log paths (`log`, each node's `stdout` and `stderr`) moved from the folder
 * `fromDir` to `toDir`: a run exported to another home names the logs written there. A path
 * elsewhere (or `''`) is kept.
 */
export const relocateRecord = (
  record: DagRunRecord,
  fromDir: string,
  toDir: string,
): DagRunRecord => {
  const move = (p: string): string =>
    p !== '' && dirname(p) === fromDir ? join(toDir, basename(p)) : p;
  const node = (n: NodeRecord): NodeRecord => ({
    ...n,
    stdout: move(n.stdout),
    stderr: move(n.stderr),
  });
  const handler = (n: NodeRecord | undefined): NodeRecord | undefined =>
    n === undefined ? undefined : node(n);
  const out: DagRunRecord = { ...record, log: move(record.log), nodes: record.nodes.map(node) };
  for (const key of ['onExit', 'onSuccess', 'onFailure', 'onCancel'] as const) {
    const h = handler(record[key]);
    if (h !== undefined) out[key] = h;
  }
  return out;
};
