import type { StartedRun } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import { ExitCode, type CliIo } from '../io.js';
import { awaitAndReport } from '../runs/await-run.js';
import { followUntilFinal } from '../runs/follow-logs.js';
import { outputOf, reportFinal } from '../runs/report.js';
import { localRunSource } from '../runs/run-source.js';
import type { Runtime } from '../wiring/runtime.js';
import type { ClientChoice } from './client-flags.js';
import { followProgress, stopOnSignals } from './common.js';

/** Whether `done` is still pending after `ms` (never, without `ms`). */
const outlasts = async (done: Promise<unknown>, ms: number | undefined): Promise<boolean> => {
  if (ms === undefined) return done.then(() => false);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    return await Promise.race([done.then(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
};

const LOCAL: Pick<ClientChoice, 'json' | 'wait' | 'follow' | 'timeoutMs'> = {
  json: false,
  wait: false,
  follow: false,
};

/**
 * Runs in the foreground what `start` starts: prints each step transition (and with `follow` the
 * steps' output), the `startedLine`, stops the run on SIGINT/SIGTERM, and ends with the closing
 * line and the failed steps' errors and stderr tails; the exit code tells the result. A run that
 * was only queued is not run here: exit 6 ({@link ExitCode.Queued}), or with `wait` the command
 * waits for whoever runs the queues. When `timeoutMs` passes first, the run (which lives in this
 * process) is stopped and the exit code is 4.
 */
export const runInForeground = async (
  rt: Runtime,
  io: CliIo,
  start: () => Promise<StartedRun>,
  startedLine: (record: DagRunRecord) => string,
  c: Pick<ClientChoice, 'json' | 'wait' | 'follow' | 'timeoutMs'> = LOCAL,
): Promise<ExitCode> => {
  const o = outputOf(io, c.json);
  const progress = followProgress(rt, { ...io, out: o.out });
  const started = await start();
  const ref = { name: started.record.name, dagRunId: started.record.dagRunId };
  const source = localRunSource(rt);
  if (started.queued) {
    o.out(
      `run ${ref.dagRunId} of DAG "${ref.name}" is queued in queue "${started.record.queue}" (it is full or others wait); ` +
        'trellis start-all or trellis scheduler starts it in its turn',
    );
    if (c.wait) return awaitAndReport(source, ref, o, c);
    o.out('not waiting for it (exit code 6); pass --wait to wait until it ran');
    o.json(await source.details(ref));
    return ExitCode.Queued;
  }
  // before anything is printed: whoever reacts to the output may signal at once
  const unhook = stopOnSignals(io, () => rt.runs.stop(ref));
  o.out(startedLine(started.record));
  progress(ref.dagRunId);
  try {
    const logs = c.follow
      ? followUntilFinal(source, ref, { stdout: o.out, stderr: o.err }).catch((e: unknown) =>
          o.err(`could not follow the output: ${(e as Error).message}`),
        )
      : undefined;
    const timedOut = await outlasts(started.done, c.timeoutMs);
    if (timedOut) {
      o.err(
        `--wait-timeout ${(c.timeoutMs ?? 0) / 1000}s passed: stopping the run (it runs in this process, which ends now)`,
      );
      await rt.runs.stop(ref);
    }
    await started.done;
    await logs;
    const code = await reportFinal(source, await source.details(ref), o);
    return timedOut ? ExitCode.WaitTimeout : code;
  } finally {
    unhook();
  }
};
