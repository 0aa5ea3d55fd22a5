import { join } from 'node:path';
import { RunStatus, systemClock } from '@trellis/core';
import { runDag, type ExecutorRegistry, type RunHook } from '@trellis/engine';
import { parseDagFile, type DagRunRecord } from '@trellis/spec';
import { ShellCommandRunner } from '../../src/command/shell-command-runner.js';
import { ShellExecutor } from '../../src/shell/shell.executor.js';
import { FileRecorder } from './file-recorder.js';

/** A finished run and its recorder (run log lines, log files under `dir/logs`). */
export interface RunResult {
  readonly record: DagRunRecord;
  readonly recorder: FileRecorder;
}

/**
 * Runs a DAG file's text through the real engine with the real shell executor plus `executors`
 * and `runHooks`, logging into `dir/logs`. For integration tests of run-level behaviour.
 */
export const runDagText = async (
  yaml: string,
  dir: string,
  opts: {
    executors?: ExecutorRegistry;
    runHooks?: readonly RunHook[];
    env?: Record<string, string>;
    stop?: AbortSignal;
    onOutput?: (key: string, text: string) => void;
  } = {},
): Promise<RunResult> => {
  const file = parseDagFile(yaml, { location: join(dir, 'dag.yaml'), cwd: dir });
  if (!file.valid) throw new Error(`test DAG is invalid:\n${file.errors.join('\n')}`);
  const dag = file.main.dag;
  const recorder = new FileRecorder(join(dir, 'logs'));
  recorder.onOutput = opts.onOutput;
  const record: DagRunRecord = {
    name: dag.name,
    dagRunId: 'run-1',
    root: { name: dag.name, dagRunId: 'run-1' },
    status: RunStatus.NotStarted,
    createdAt: systemClock.now().toISOString(),
    queuedAt: '',
    startedAt: '',
    finishedAt: '',
    log: recorder.runLogPath,
    params: dag.params.map((p) => ({ name: p.name, value: p.value })),
    nodes: [],
    preconditions: [],
    error: '',
    queue: dag.name,
    revision: 0,
  };
  const final = await runDag(
    {
      clock: systemClock,
      executors: { shell: new ShellExecutor(), ...opts.executors },
      commands: new ShellCommandRunner(),
      recorder,
      systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dir, ...opts.env },
      defaultShell: '/bin/sh',
      ...(opts.runHooks ? { runHooks: opts.runHooks } : {}),
    },
    { dag, record, ...(opts.stop ? { stop: opts.stop } : {}) },
  );
  return { record: final, recorder };
};
