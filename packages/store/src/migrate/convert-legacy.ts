import { NodeStatus, RunStatus } from '@trellis/core';
import {
  HANDLER_KINDS,
  handlerNodeName,
  parseDagFile,
  type Dag,
  type DagRunRecord,
  type NodeRecord,
  type Step,
} from '@trellis/spec';
import { toIsoTime, type LegacyNode, type LegacyStatus } from './legacy-status.js';

/** A log file to copy into the store's log folder. */
export interface LogCopy {
  readonly from: string;
  readonly to: string;
}

/** Where the converted run's logs go, and which legacy log files exist. */
export interface LogTargets {
  readonly runLog: string;
  readonly stepStdout: (nodeName: string) => string;
  readonly exists: (path: string) => boolean;
}

/** A converted run: its record, the DAG snapshot to store, the logs to copy. */
export interface ConvertedRun {
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly logs: readonly LogCopy[];
}

const RUN_STATUSES = new Set<number>(Object.values(RunStatus));
const NODE_STATUSES = new Set<number>(Object.values(NodeStatus));
const NAMED_PARAM = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** `ParamsList` (`["A=1", "positional"]`) as run params; positional ones named `1`, `2`, ... */
const toParams = (list: readonly string[]): { name: string; value: string }[] => {
  let pos = 0;
  return list.map((p) => {
    const m = NAMED_PARAM.exec(p);
    return m ? { name: m[1] ?? '', value: m[2] ?? '' } : { name: String(++pos), value: p };
  });
};

const stepText = (s: Record<string, unknown>, ...keys: string[]): string => {
  for (const k of keys) {
    for (const [key, v] of Object.entries(s))
      if (key.toLowerCase() === k.toLowerCase() && typeof v === 'string' && v !== '') return v;
  }
  return '';
};

/** The legacy step's command line: `CmdWithArgs`, else `Command` and `Args`. */
const commandOf = (s: Record<string, unknown>): string => {
  const full = stepText(s, 'CmdWithArgs', 'cmdWithArgs');
  if (full) return full;
  const args = Object.entries(s).find(([k]) => k.toLowerCase() === 'args')?.[1];
  return [stepText(s, 'Command'), ...(Array.isArray(args) ? args.map(String) : [])]
    .filter((x) => x !== '')
    .join(' ');
};

/**
 * A DAG standing in for a definition that is no longer in the DAGs folder: the run's name and
 * its steps with their commands, normalised by the spec parser (JSON is YAML).
 */
const stubDag = (name: string, s: LegacyStatus): Dag => {
  const seen = new Set<string>();
  const steps = s.nodes
    .map((n) => ({ name: stepText(n.step, 'Name'), command: commandOf(n.step) || 'true' }))
    .filter((x) => x.name !== '' && !seen.has(x.name) && seen.add(x.name));
  const handlerOn: Record<string, { command: string }> = {};
  for (const k of HANDLER_KINDS) {
    const n = s[handlerNodeName[k] as 'onExit'];
    if (n) handlerOn[k] = { command: commandOf(n.step) || 'true' };
  }
  const text = JSON.stringify({
    name,
    type: 'graph',
    steps: steps.length > 0 ? steps : [{ name: 'step 1', command: 'true' }],
    ...(Object.keys(handlerOn).length > 0 ? { handlerOn } : {}),
  });
  // Runs of one DAG mostly share their steps: parse each distinct stand-in once.
  const known = stubs.get(text);
  if (known) return known;
  if (stubs.size >= 256) stubs.clear();
  const dag = parseDagFile(text, { name }).main.dag;
  stubs.set(text, dag);
  return dag;
};
const stubs = new Map<string, Dag>();

const fallbackStep = (name: string, command: string): Step => {
  const dag = parseDagFile(JSON.stringify({ steps: [{ name, command: command || 'true' }] }), {
    name: 'migrated',
  }).main.dag;
  const step = dag.steps[0];
  if (!step) throw new Error(`cannot build a step named ${JSON.stringify(name)}`);
  return step;
};

/**
 * Converts one legacy run (as the peer does) into a Trellis record: `dagRunId` = `RequestId`,
 * `createdAt` = `StartedAt`, node `Log` -> `stdout` (copied into the store's log folder when the
 * file exists), no root/parent. A run the old release left "running" is stored failed, since
 * nothing runs it any more. Throws an Error with a sentence for a run that cannot be converted.
 */
export const convertLegacyRun = (
  s: LegacyStatus,
  fileDag: string,
  definition: Dag | undefined,
  logs: LogTargets,
): ConvertedRun => {
  const name = s.name || fileDag;
  const startedAt = toIsoTime(s.startedAt);
  if (startedAt === undefined || startedAt === '')
    throw new Error(`it has no start time (StartedAt ${JSON.stringify(s.startedAt)})`);
  const finishedAt = toIsoTime(s.finishedAt) ?? '';
  if (!RUN_STATUSES.has(s.status)) throw new Error(`its status ${s.status} is unknown`);

  const dag = definition ?? stubDag(name, s);
  const copies: LogCopy[] = [];
  const logPath = (from: string, to: string): string => {
    if (from === '' || !logs.exists(from)) return from;
    copies.push({ from, to });
    return to;
  };
  const byName = new Map<string, Step>();
  for (const st of dag.steps) byName.set(st.name, st);
  for (const k of HANDLER_KINDS) {
    const h = dag.handlerOn[k];
    if (h) byName.set(handlerNodeName[k], h);
  }
  const node = (n: LegacyNode, fixedName?: string): NodeRecord => {
    const stepName = fixedName ?? (stepText(n.step, 'Name') || 'step');
    const step = byName.get(stepName) ?? fallbackStep(stepName, commandOf(n.step));
    const stillRunning = n.status === NodeStatus.Running;
    return {
      step: fixedName ? { ...step, name: fixedName } : step,
      stdout: logPath(n.log, logs.stepStdout(stepName)),
      stderr: '',
      startedAt: toIsoTime(n.startedAt) ?? '',
      finishedAt: toIsoTime(n.finishedAt) ?? '',
      status: stillRunning
        ? NodeStatus.Failed
        : NODE_STATUSES.has(n.status)
          ? (n.status as NodeStatus)
          : NodeStatus.NotStarted,
      retryCount: n.retryCount,
      doneCount: n.doneCount,
      retriedAt: toIsoTime(n.retriedAt) ?? '',
      children: [],
      childrenRepeated: [],
      error: stillRunning ? 'still running when the history was migrated' : n.error,
      outputs: n.outputs,
    };
  };
  const stillRunning = s.status === RunStatus.Running;
  const record: DagRunRecord = {
    name,
    dagRunId: s.requestId,
    root: { name, dagRunId: s.requestId },
    status: stillRunning ? RunStatus.Failed : (s.status as RunStatus),
    createdAt: startedAt,
    queuedAt: '',
    startedAt,
    finishedAt,
    log: logPath(s.log, logs.runLog),
    params: toParams(
      s.paramsList.length > 0 ? s.paramsList : s.params.split(' ').filter((p) => p !== ''),
    ),
    nodes: s.nodes.map((n) => node(n)),
    preconditions: [],
    error: stillRunning
      ? 'the run was still "running" in the 1.16 history (its process is gone); marked failed by migrate history'
      : '',
    queue: dag.queue ?? name,
    revision: 1,
  };
  for (const k of HANDLER_KINDS) {
    const key = handlerNodeName[k] as 'onExit' | 'onSuccess' | 'onFailure' | 'onCancel';
    const n = s[key];
    if (n) record[key] = node(n, key);
  }
  return { record, dag, logs: copies };
};
