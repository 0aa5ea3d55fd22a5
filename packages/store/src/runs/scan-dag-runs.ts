import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DagRunRecord } from '@trellis/spec';
import { isMissing, messageOf } from '../fs/fs-errors.js';
import { CHILDREN_DIR, STATUS_FILE } from '../layout/store-layout.js';
import { readRecordFile } from './status-file.js';
import { toRunSummary, type RunSummary } from './run-summary.js';

const PARALLEL_READS = 32;

/** Names of the sub-directories of `dir` that are runs (dot-names are temp and trash folders). */
export const runDirNames = async (dir: string): Promise<string[] | undefined> => {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
};

/**
 * Reads records in batches, aligned with `paths`; a missing file gives undefined, a corrupt one
 * is reported and gives undefined.
 */
const readAll = async (
  paths: readonly string[],
  warn: (m: string) => void,
): Promise<(DagRunRecord | undefined)[]> => {
  const out: (DagRunRecord | undefined)[] = [];
  for (let i = 0; i < paths.length; i += PARALLEL_READS) {
    const batch = await Promise.all(
      paths.slice(i, i + PARALLEL_READS).map(async (p) => {
        try {
          return await readRecordFile(p);
        } catch (e) {
          if (!isMissing(e)) warn(`skipped ${p}: ${messageOf(e)}`);
          return undefined;
        }
      }),
    );
    out.push(...batch);
  }
  return out;
};

/**
 * The records of every run stored under a DAG's folder, children included (the index rebuild's
 * source). A record whose name or id does not match its folder is reported and skipped.
 * Undefined when the DAG has no folder.
 */
export const scanDagRuns = async (
  dagDir: string,
  dagName: string,
  warn: (m: string) => void,
): Promise<DagRunRecord[] | undefined> => {
  const ids = await runDirNames(dagDir);
  if (ids === undefined) return undefined;
  const expected = new Map<string, (r: DagRunRecord) => boolean>();
  for (const id of ids) {
    expected.set(
      join(dagDir, id, STATUS_FILE),
      (r) => r.name === dagName && r.dagRunId === id && r.parent === undefined,
    );
    for (const childId of (await runDirNames(join(dagDir, id, CHILDREN_DIR))) ?? [])
      expected.set(
        join(dagDir, id, CHILDREN_DIR, childId, STATUS_FILE),
        (r) =>
          r.dagRunId === childId &&
          r.parent !== undefined &&
          r.root.name === dagName &&
          r.root.dagRunId === id,
      );
  }
  const paths = [...expected.keys()];
  const records = await readAll(paths, warn);
  const out: DagRunRecord[] = [];
  records.forEach((r, i) => {
    const path = paths[i] ?? '';
    if (r === undefined) return;
    if (expected.get(path)?.(r) === true) out.push(r);
    else warn(`skipped ${path}: its name or id does not match its folder`);
  });
  return out;
};

/** `scanDagRuns` as summaries. */
export const scanDagSummaries = async (
  dagDir: string,
  dagName: string,
  warn: (m: string) => void,
): Promise<RunSummary[] | undefined> =>
  (await scanDagRuns(dagDir, dagName, warn))?.map(toRunSummary);
