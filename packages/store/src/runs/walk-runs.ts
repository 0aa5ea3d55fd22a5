import { opendir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRef } from '@trellis/spec';
import { isMissing } from '../fs/fs-errors.js';
import {
  CHILDREN_DIR,
  isSafeDagName,
  isSafeRunId,
  STATUS_FILE,
  StoreLayout,
} from '../layout/store-layout.js';

/** A top-level run of a file store and the child runs stored under it. */
export interface WalkedRun {
  readonly ref: RunRef;
  /** Refs of the children (read them with `{ root: ref }`); ids only, the names come from records. */
  readonly childIds: readonly string[];
}

/** Entry names of the folder `dir` one at a time (none when it does not exist). */
async function* namesIn(dir: string): AsyncGenerator<string> {
  let handle;
  try {
    handle = await opendir(dir);
  } catch (e) {
    if (isMissing(e)) return;
    throw e;
  }
  for await (const entry of handle) if (entry.isDirectory()) yield entry.name;
}

/**
 * Every top-level run of the file store under `dataDir`, DAG by DAG, with the ids of its child
 * runs: the run folders that hold a record (temporary and trashed folders are skipped). Reads
 * folders one entry at a time, so a home of any size walks in bounded memory (only one run's
 * child ids are held). For copying a home elsewhere (`trellis migrate store`).
 */
export async function* walkRuns(dataDir: string): AsyncGenerator<WalkedRun> {
  const layout = new StoreLayout(dataDir, join(dataDir, 'logs'));
  for await (const dag of namesIn(layout.runsDir)) {
    if (!isSafeDagName(dag) || dag.startsWith('.')) continue;
    for await (const id of namesIn(layout.dagDir(dag))) {
      if (!isSafeRunId(id)) continue;
      const dir = join(layout.dagDir(dag), id);
      if (!existsSync(join(dir, STATUS_FILE))) continue;
      const childIds: string[] = [];
      for await (const cid of namesIn(join(dir, CHILDREN_DIR)))
        if (isSafeRunId(cid) && existsSync(join(dir, CHILDREN_DIR, cid, STATUS_FILE)))
          childIds.push(cid);
      yield { ref: { name: dag, dagRunId: id }, childIds };
    }
  }
}
