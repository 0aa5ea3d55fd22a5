import Dockerode from 'dockerode';
import type {
  ExecContext,
  ExecutionOutcome,
  Executor,
  RunHook,
  RunHookContext,
  RunResources,
} from '@trellis/engine';
import { failed } from '../common/outcome.js';
import {
  containerEnv,
  dockerMessage,
  execInContainer,
  stepCommand,
} from '../docker/container-io.js';
import { DagContainer, type DagContainerSettings } from './dag-container.js';

/** Options of {@link DagContainerHook}. */
export interface DagContainerHookOptions {
  /** @default the local Docker socket */
  readonly docker?: Dockerode;
  /** `CONTAINER_AUTH_CONFIG` (Docker's config.json JSON). */
  readonly authConfig?: string | undefined;
  /** spec: Limits, 120 seconds. @default 120000 */
  readonly readyTimeoutMs?: number;
  /** @default 250 */
  readonly pollMs?: number;
}

/**
 * Runs the `docker` steps of a DAG with a DAG-level `container` inside that one container (spec:
 * Container (DAG level)): each step is an exec of its `command` and `args` (its executor config
 * is ignored), with the container's `user` and `workingDir`; the container starts before the
 * first such step and is removed after the run's handlers unless `keepContainer`.
 */
export class DagContainerHook implements RunHook {
  readonly #settings: DagContainerSettings;

  constructor(options: DagContainerHookOptions = {}) {
    this.#settings = {
      docker: options.docker ?? new Dockerode(),
      authConfig: options.authConfig,
      readyTimeoutMs: options.readyTimeoutMs ?? 120_000,
      pollMs: options.pollMs ?? 250,
    };
  }

  setUp(ctx: RunHookContext): Promise<RunResources> {
    const spec = ctx.dag.container;
    if (!spec) return Promise.resolve({});
    const dc = new DagContainer(spec, ctx, this.#settings);
    const executor = new InContainerExecutor(dc, this.#settings.docker);
    return Promise.resolve({
      executorFor: (step) => (step.executor.type === 'docker' ? executor : undefined),
      tearDown: () => dc.tearDown(),
    });
  }
}

/** Executes a step in the run's DAG container. */
class InContainerExecutor implements Executor {
  constructor(
    private readonly dc: DagContainer,
    private readonly docker: Dockerode,
  ) {}

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const cmd = stepCommand(ctx);
    if (!cmd) return failed('a step in the DAG-level container needs command or script');
    const started = await this.dc.ensureStarted(ctx.stop.abort);
    if ('problem' in started) return failed(started.problem);
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');
    const notRunning = (state: string): ExecutionOutcome =>
      failed(`the DAG container ${this.dc.name} is not running${state}`);
    try {
      const outcome = await execInContainer(this.docker, started.container, ctx, {
        cmd,
        env: containerEnv(ctx.env),
        user: this.dc.user,
        workingDir: this.dc.workingDir,
      });
      if (outcome.exitCode === 0 || ctx.stop.abort.aborted) return outcome;
      // An exec into a container that is just dying fails with docker's own code (126): say why.
      const state = await stoppedState(started.container);
      return state ? notRunning(state) : outcome;
    } catch (e) {
      const state = await stoppedState(started.container);
      if (state) return notRunning(state);
      return failed(`docker exec in ${this.dc.name}: ${dockerMessage(e)}`);
    }
  }
}

/** ` (status exited, exit code N)` when the container no longer runs, `''` while it does. */
const stoppedState = (container: Dockerode.Container): Promise<string> =>
  container.inspect().then(
    (i) => (i.State.Running ? '' : ` (status ${i.State.Status}, exit code ${i.State.ExitCode})`),
    () => ' (the container is gone)',
  );
