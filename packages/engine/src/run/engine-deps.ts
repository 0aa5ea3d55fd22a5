import type { Clock } from '@trellis/core';
import type { EngineEvents } from '../events.js';
import type { ChildRunner } from '../ports/child-runner.js';
import type { CommandRunner } from '../ports/command-runner.js';
import type { ExecutorRegistry } from '../ports/executor.js';
import type { RunRecorder } from '../ports/recorder.js';
import type { RunHook } from '../ports/run-hooks.js';

/** What the engine needs from the outside, injected once (docs/architecture.md, "House style"). */
export interface EngineDeps {
  readonly clock: Clock;
  readonly executors: ExecutorRegistry;
  readonly commands: CommandRunner;
  readonly children?: ChildRunner;
  readonly recorder: RunRecorder;
  readonly events?: EngineEvents;
  /**
   * The full environment of the process. All of it is usable for `${VAR}` while the DAG is
   * evaluated; step processes receive only the filtered part (spec, Variables).
   */
  readonly systemEnv: Readonly<Record<string, string>>;
  /** Shell for steps that set none (config `defaultShell`, else $SHELL, else `sh`). */
  readonly defaultShell: string;
  /** Run-level hooks (DAG-level container, mail notifications); none by default. */
  readonly runHooks?: readonly RunHook[];
  /**
   * How long changes of node states may wait to be saved together (ms): after a save of a running
   * record, the next one waits until this window (at least 4 times the last save's duration) has
   * passed. The run's start and its final status are saved at once, with whatever waited. 0 saves
   * each change at the end of its event-loop turn. `RunHost` sets `RECORD_SAVE_WINDOW_MS`.
   * @default 0
   */
  readonly recordSaveWindowMs?: number;
}
