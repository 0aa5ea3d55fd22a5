import type { Dag, DagRunRecord, NodeRecord } from '@trellis/spec';
import type { EngineDeps } from './engine-deps.js';
import { HookSet } from './hook-set.js';
import { ancestorsByStep, newNodeRecord } from './node-state.js';
import { RecordSaver } from './record-saver.js';
import type { RunDagInput } from './run-input.js';
import { StopControl } from './stop-control.js';

/** The run's variables, evaluated once at its start (run-env.ts); empty until then. */
export interface RunVars {
  /** The DAG's absolute working directory. */
  workingDir: string;
  /** DAG `env` (over its dotenv files). */
  dagEnv: Record<string, string>;
  /** Params by name and position, expanded. */
  params: Record<string, string>;
  /** The named params only (what step processes receive). */
  namedParams: Record<string, string>;
  /** DAG_NAME, DAG_RUN_ID, DAG_RUN_LOG_FILE. */
  context: Record<string, string>;
  /** The environment every step process starts from, once the above are evaluated. */
  processEnv?: Readonly<Record<string, string>>;
}

/** How the steps went so far: the scheduler's book and what the final status is made of. */
export interface RunProgress {
  /** Nodes the scheduler took (started, or skipped/cancelled by their dependencies). */
  readonly started: Set<string>;
  /** Steps executing now (`maxActiveSteps` bounds it). */
  running: number;
  /** Per ended step: its `continueOn` lets dependents run. */
  readonly continues: Map<string, boolean>;
  /** Steps that failed but let dependents run (the run can still partially succeed). */
  readonly failedButContinued: Set<string>;
  /** The DAG's preconditions were not met: no step ran, the run is cancelled. */
  preconditionFailed: boolean;
  /** A handler failed: the run failed. */
  handlerFailed: boolean;
  /** A run-level failure (timeout, internal error); '' when none. */
  runError: string;
}

/** Everything one run shares between its parts; one per `runDag` call. */
export interface RunContext {
  readonly deps: EngineDeps;
  readonly input: RunDagInput;
  /** The live record, saved through `saver`. */
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly byName: ReadonlyMap<string, NodeRecord>;
  /** A step's ancestors, nearest first. */
  readonly ancestorsOf: (name: string) => readonly string[];
  /** The record came without node records (they were made here, and are not on disk yet). */
  readonly nodesAdded: boolean;
  readonly vars: RunVars;
  readonly progress: RunProgress;
  readonly stop: StopControl;
  readonly saver: RecordSaver;
  readonly hooks: HookSet;
  /** Step log files being closed; the run waits for them before it reports its end. */
  readonly closing: Promise<void>[];
  /** When each started node's log files are closed (complete on disk), by node. */
  readonly logsClosed: Map<NodeRecord, Promise<void>>;
  /** The clock's now, as the record stores it. */
  readonly now: () => string;
  /** Appends a line to the run log. */
  readonly log: (line: string) => void;
}

/** A run's context; a record without nodes gets a fresh node per step. */
export const newRunContext = (deps: EngineDeps, input: RunDagInput): RunContext => {
  const record = input.record;
  const dag = input.dag;
  const nodesAdded = record.nodes.length === 0;
  if (nodesAdded) record.nodes = dag.steps.map(newNodeRecord);
  const log = (line: string): void => deps.recorder.log(line);
  return {
    deps,
    input,
    record,
    dag,
    byName: new Map(record.nodes.map((n) => [n.step.name, n])),
    ancestorsOf: ancestorsByStep(dag.steps),
    nodesAdded,
    vars: { workingDir: '', dagEnv: {}, params: {}, namedParams: {}, context: {} },
    progress: {
      started: new Set(),
      running: 0,
      continues: new Map(),
      failedButContinued: new Set(),
      preconditionFailed: false,
      handlerFailed: false,
      runError: '',
    },
    stop: new StopControl(),
    saver: new RecordSaver(record, {
      recorder: deps.recorder,
      clock: deps.clock,
      windowMs: deps.recordSaveWindowMs ?? 0,
      log,
    }),
    hooks: new HookSet(log),
    closing: [],
    logsClosed: new Map(),
    now: () => deps.clock.now().toISOString(),
    log,
  };
};
