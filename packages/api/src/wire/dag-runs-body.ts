import { randomBytes } from 'node:crypto';
import type { DagRunRecord } from '@trellis/spec';
import { toApiRunSummary, toGridData } from './run.mapper.js';

/** DAGs whose answer is kept at most (the least recently answered goes first). */
export const MAX_CACHED_DAG_RUNS = 64;

/** A GET /dags/{fileName}/dag-runs body as JSON bytes, and its entity tag. */
export interface DagRunsBody {
  readonly body: Buffer;
  readonly etag: string;
}

interface Kept extends DagRunsBody {
  readonly key: string;
}

/** Numbers bodies; with `BOOT`, a tag never names two bodies (as run-summary-json.ts does). */
let made = 0;
const BOOT = randomBytes(6).toString('base64url');

/**
 * What the body is made of, as text: the step order, and each run by name, id, creation time,
 * status and revision. Every save of a record raises its revision (the engine's record saver,
 * the services' compare-and-set saves, RunService.setStepStatus), in this process or another,
 * so a run whose revision is unchanged has the same summary and node statuses; its status and
 * creation time are in the key too, for a record written by hand (tests, migrations) without a
 * new revision and for a run deleted and created again under its id.
 */
const keyOf = (stepOrder: readonly string[], runs: readonly DagRunRecord[]): string => {
  let key = JSON.stringify(stepOrder);
  for (const r of runs)
    key += `\n${r.name}\t${r.dagRunId}\t${r.createdAt}\t${r.status}\t${r.revision}`;
  return key;
};

/** `{dagRuns, gridData}` as the bytes `res.json` would send. */
const build = (stepOrder: readonly string[], runs: readonly DagRunRecord[]): Buffer =>
  Buffer.from(
    JSON.stringify({
      dagRuns: runs.map((x) => toApiRunSummary(x)),
      gridData: toGridData(runs, stepOrder),
    }),
  );

/**
 * The last answer of each DAG's recent runs, answered again while its records are the same
 * revisions (see `keyOf`): the records are still read (the store's own check that they did not
 * change), but not mapped, serialised and hashed again. Bounded: `MAX_CACHED_DAG_RUNS` DAGs.
 */
export class DagRunsBodyCache {
  readonly #entries = new Map<string, Kept>();
  readonly #max: number;

  constructor(max = MAX_CACHED_DAG_RUNS) {
    this.#max = max;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The body of `fileName`'s answer over `runs` (newest first). */
  body(fileName: string, stepOrder: readonly string[], runs: readonly DagRunRecord[]): DagRunsBody {
    const key = keyOf(stepOrder, runs);
    const old = this.#entries.get(fileName);
    this.#entries.delete(fileName);
    const kept =
      old?.key === key
        ? old
        : { key, body: build(stepOrder, runs), etag: `W/"${BOOT}-dr${(++made).toString(36)}"` };
    this.#entries.set(fileName, kept);
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return kept;
  }
}
