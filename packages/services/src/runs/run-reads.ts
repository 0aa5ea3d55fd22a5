import { AppError, ErrorCode, notFound, type RunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord, RunRef } from '@trellis/spec';
import type { DagRunSummary } from '../dags/dag-catalog-port.js';
import type { CustomQueue } from '../queues/queue-of.js';
import { explainWait, type WaitContext, type WaitReason } from '../queues/wait-reason.js';
import { runOutputs, type RunOutputs } from './run-outputs.js';
import type { RunSnapshotData } from './run-store-port.js';

/** The run summary fields the list endpoints need (no nodes): the run index's summary. */
export type RunSummaryRecord = DagRunSummary;

/** A log chunk (spec: Log chunk). */
export interface LogChunkData {
  readonly content: string;
  readonly lineCount: number;
  readonly totalLines: number;
  readonly hasMore: boolean;
  readonly isEstimate: boolean;
  /** Present when a write to the log failed: its content is incomplete (beside the spec). */
  readonly truncated?: true;
  readonly truncatedReason?: string;
}

/** Which lines of a log: `tail` > `head` > `offset` (+`limit`) > `limit` alone. */
export interface LogWindowQuery {
  readonly head?: number;
  readonly tail?: number;
  readonly offset?: number;
  readonly limit?: number;
}

/**
 * Which runs a listing returns (spec: `GET /dag-runs` query). Every field is optional; absent
 * fields do not filter. Results are newest first by `createdAt`.
 */
export interface RunListFilter {
  /** Only runs of this DAG. */
  readonly name?: string;
  readonly status?: RunStatus;
  // assumption: the spec's fromDate/toDate filter on when a run was created (the peer's run
  // timestamp), so a queued run that has not started yet still falls in its range.
  /** Only runs created at or after this instant (Unix milliseconds). */
  readonly fromMs?: number;
  /** Only runs created at or before this instant (Unix milliseconds). */
  readonly toMs?: number;
  /** Only runs whose id contains this text (case-insensitive). */
  readonly dagRunIdContains?: string;
  /** Only runs of one of these DAGs (beyond the spec: the runs list's `tag` filter). */
  readonly names?: readonly string[];
  /** Only runs executed by this worker (`owner.workerId`; `local` in the server process). */
  readonly workerId?: string;
  /** At most this many runs (the newest). @default no limit */
  readonly limit?: number;
  /**
   * Serve from the indexes in memory when they were read from disk less than this long ago (ms):
   * this process's runs show at once, another process's within this time. @default 0 (every
   * index is checked against its file)
   */
  readonly maxStaleMs?: number;
}

/** The read side of the run store, as the read use cases need it (`FsRunStore` implements it). */
export interface RunReadStore {
  listRuns(filter: RunListFilter): Promise<RunSummaryRecord[]>;
  /** Throws not_found. */
  getRun(ref: RunRef, opts?: { root?: RunRef }): Promise<DagRunRecord>;
  /** Throws not_found. */
  latestRun(dagName: string): Promise<DagRunRecord>;
  listChildren(root: RunRef): Promise<RunSummaryRecord[]>;
  /**
   * Text that changes whenever a record of the DAG's runs is created, saved or deleted, by
   * this process or another sharing the store; undefined when the store cannot vouch for it
   * (nothing may be kept by it then). What the run history grid keeps its answer by.
   */
  changeStamp(dagName: string): Promise<string | undefined>;
  /** The DAG a run executes, as stored beside it. Throws not_found. */
  getSnapshot(ref: RunRef): Promise<RunSnapshotData>;
  readLog(path: string, q: LogWindowQuery): Promise<LogChunkData>;
  /** Follows a log file from line `fromLine` (1-based): the lines there, then new ones. */
  followLog(
    path: string,
    fromLine: number,
    onLines: (lines: readonly string[], first: number) => void,
    onError: (e: Error) => void,
  ): LogFollowHandle;
}

/** A log being followed (the store's `followLog`). */
export interface LogFollowHandle {
  /** Sends what is left, an unfinished last line too, and stops. */
  flush(): Promise<void>;
  close(): void;
}

/** The chunk of a log that does not exist yet. */
const EMPTY_LOG: LogChunkData = {
  content: '',
  lineCount: 0,
  totalLines: 0,
  hasMore: false,
  isEstimate: false,
};

/** A step or handler node of a run by its step name; not_found names both. */
export const findNode = (run: DagRunRecord, stepName: string): NodeRecord => {
  const node = [...run.nodes, run.onSuccess, run.onFailure, run.onCancel, run.onExit].find(
    (n) => n?.step.name === stepName,
  );
  if (!node) throw notFound('step', `${stepName} in run ${run.dagRunId} of DAG "${run.name}"`);
  return node;
};

/**
 * The run read use cases behind the API (runs, children, logs): the API reaches stored runs only
 * through here, never through the store.
 */
export class RunReads {
  constructor(private readonly store: RunReadStore) {}

  /** Run summaries newest first. */
  list(filter: RunListFilter): Promise<RunSummaryRecord[]> {
    return this.store.listRuns(filter);
  }

  /** A run by name and id, `latest` meaning the most recent run of the DAG. */
  find(ref: RunRef): Promise<DagRunRecord> {
    return ref.dagRunId === 'latest' ? this.store.latestRun(ref.name) : this.store.getRun(ref);
  }

  /**
   * The DAG's most recent runs in full, newest first (the run history grid). A run deleted
   * between the listing and its read is left out: the grid shows what is there.
   */
  async recent(dagName: string, limit: number): Promise<DagRunRecord[]> {
    const summaries = await this.store.listRuns({ name: dagName, limit });
    const records = await Promise.all(
      summaries.map((s) =>
        this.store.getRun({ name: s.name, dagRunId: s.dagRunId }).catch((e: unknown) => {
          if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
          throw e;
        }),
      ),
    );
    return records.filter((r): r is DagRunRecord => r !== undefined);
  }

  /**
   * The DAG's change stamp (`RunReadStore.changeStamp`): take it before reading the runs, and
   * keep what they made under it; the same stamp later means nothing was written since.
   */
  changeStamp(dagName: string): Promise<string | undefined> {
    return this.store.changeStamp(dagName);
  }

  /** Child runs stored under the root run `root`. */
  children(root: RunRef): Promise<RunSummaryRecord[]> {
    return this.store.listChildren(root);
  }

  /** A child run somewhere under the root run `root` (children are stored under their root). */
  async child(root: RunRef, childId: string): Promise<DagRunRecord> {
    const summaries = await this.store.listChildren(root);
    const child = summaries.find((c) => c.dagRunId === childId);
    if (!child)
      throw notFound('child run', `${childId} of run ${root.dagRunId} of DAG "${root.name}"`);
    return this.store.getRun({ name: child.name, dagRunId: childId }, { root });
  }

  /** The root run named by name and id (or `latest`), and the child under it. */
  async childOf(p: {
    name: string;
    dagRunId: string;
    childDAGRunId: string;
  }): Promise<{ root: RunRef; child: DagRunRecord }> {
    const run = await this.find(p);
    const root = { name: run.name, dagRunId: run.dagRunId };
    return { root, child: await this.child(root, p.childDAGRunId) };
  }

  /**
   * What a run produced: every step's output variables and its child runs' outputs nested under
   * it (`root` is where the run's descendants are stored: the run itself, or a child's root).
   */
  outputs(run: DagRunRecord, root: RunRef = run): Promise<RunOutputs> {
    return runOutputs(this.store, run, root);
  }

  /** Why a queued run waits (undefined for a run that is not queued). */
  whyWaiting(
    run: DagRunRecord,
    ctx: WaitContext & { readonly queues: readonly CustomQueue[] },
  ): Promise<WaitReason | undefined> {
    const store = this.store;
    return explainWait(
      {
        listRuns: (f) => store.listRuns(f),
        getSnapshot: (r) => store.getSnapshot(r),
        queues: ctx.queues,
      },
      run,
      ctx,
    );
  }

  /** A run's own log; a run that has not started yet (queued) has an empty one, not a 404. */
  runLog(run: DagRunRecord, q: LogWindowQuery): Promise<LogChunkData> {
    return run.startedAt === '' ? Promise.resolve(EMPTY_LOG) : this.store.readLog(run.log, q);
  }

  /** Follows a log file (a node's `stdout` or `stderr`) from line `fromLine`. */
  followLog(
    path: string,
    fromLine: number,
    onLines: (lines: readonly string[], first: number) => void,
    onError: (e: Error) => void,
  ): LogFollowHandle {
    return this.store.followLog(path, fromLine, onLines, onError);
  }

  /** A step's stdout or stderr; a step that has not written it yet has an empty one. */
  stepLog(
    run: DagRunRecord,
    stepName: string,
    stream: 'stdout' | 'stderr',
    q: LogWindowQuery,
  ): Promise<LogChunkData> {
    const node = findNode(run, stepName);
    const path = stream === 'stderr' ? node.stderr : node.stdout;
    return path ? this.store.readLog(path, q) : Promise.resolve(EMPTY_LOG);
  }
}
