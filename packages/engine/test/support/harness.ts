import type { RunStatus } from '@trellis/core';
import {
  EngineEvents,
  runDag,
  type ChildRunRequest,
  type ChildRunner,
  type RunHook,
} from '@trellis/engine';
import { parseDagFile, type Dag, type DagRunRecord } from '@trellis/spec';
import {
  FakeClock,
  InMemoryRecorder,
  ScriptedCommandRunner,
  ScriptedExecutor,
  makeRunRecord,
  type Script,
} from '@trellis/testkit';

/** Parses a DAG for a test; fails loudly when the YAML has problems. */
export const dagOf = (yaml: string, location = '/tmp/test-dag.yaml'): Dag => {
  const r = parseDagFile(yaml, { location, cwd: '/tmp' });
  if (!r.valid) throw new Error(`test DAG is invalid:\n${r.errors.join('\n')}`);
  return r.main.dag;
};

export interface Harness {
  readonly clock: FakeClock;
  readonly recorder: InMemoryRecorder;
  readonly executor: ScriptedExecutor;
  readonly commands: ScriptedCommandRunner;
  readonly events: EngineEvents;
  readonly run: (opts?: {
    stop?: AbortSignal;
    dryRun?: boolean;
    record?: DagRunRecord;
  }) => Promise<DagRunRecord>;
}

/** The engine wired to fakes: scripted executor per step name, auto-advancing clock by default. */
export const harness = (
  yaml: string,
  scripts: Record<string, Script | Script[]> = {},
  opts: {
    commands?: (cmd: string) => { exitCode: number; stdout: string };
    clock?: FakeClock;
    children?: ChildRunner;
    systemEnv?: Record<string, string>;
    runHooks?: readonly RunHook[];
    /** Where the DAG file is. @default /tmp/test-dag.yaml */
    location?: string;
    /** Saves and closes take an event-loop turn (InMemoryRecorder's `slow`). */
    slowRecorder?: boolean;
  } = {},
): Harness => {
  const dag = dagOf(yaml, opts.location);
  const clock = opts.clock ?? new FakeClock(undefined, { autoAdvance: true });
  const recorder = new InMemoryRecorder({ slow: opts.slowRecorder === true });
  const executor = new ScriptedExecutor(scripts);
  const commands = new ScriptedCommandRunner(opts.commands);
  const events = new EngineEvents();
  return {
    clock,
    recorder,
    executor,
    commands,
    events,
    run: (o = {}) =>
      runDag(
        {
          clock,
          executors: {
            shell: executor,
            docker: executor,
            ssh: executor,
            http: executor,
            mail: executor,
            jq: executor,
          },
          commands,
          recorder,
          events,
          systemEnv: opts.systemEnv ?? {
            PATH: '/usr/bin:/bin',
            HOME: '/root',
            SECRET_TOKEN: 's3cr3t',
          },
          defaultShell: 'sh',
          ...(opts.children ? { children: opts.children } : {}),
          ...(opts.runHooks ? { runHooks: opts.runHooks } : {}),
        },
        {
          dag,
          record: o.record ?? makeRunRecord(dag),
          ...(o.stop ? { stop: o.stop } : {}),
          ...(o.dryRun ? { dryRun: true } : {}),
        },
      ),
  };
};

/** Node statuses by step name. */
export const statuses = (r: DagRunRecord): Record<string, number> =>
  Object.fromEntries(r.nodes.map((n) => [n.step.name, n.status]));

/** A child runner that ends every child with `status` and `outputs`, keeping the requests. */
export const childRunner = (
  status: number,
  outputs: Record<string, string> = {},
): ChildRunner & { readonly requests: ChildRunRequest[] } => {
  const requests: ChildRunRequest[] = [];
  return {
    requests,
    run: (req: ChildRunRequest) => {
      requests.push(req);
      return Promise.resolve({
        name: req.target,
        dagRunId: req.dagRunId,
        status: status as RunStatus,
        outputs,
      });
    },
  };
};
