import Dockerode from 'dockerode';
import { homeOf } from '@trellis/core';
import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';
import { failed, note } from '../common/outcome.js';
import {
  captured,
  containerEnv,
  dockerMessage,
  execInContainer,
  pipeDemuxed,
  sinksFor,
  stepCommand,
} from './container-io.js';
import { createOptionsFor, type DockerStepConfig } from './docker-config.js';
import { ensureImage } from './image-pull.js';
import { authFor, parseAuthConfig } from './registry-auth.js';

/** Dependencies and settings of {@link DockerExecutor}. */
export interface DockerExecutorOptions {
  /** The Docker Engine client. @default the local socket, /var/run/docker.sock */
  readonly docker?: Dockerode;
  /** `CONTAINER_AUTH_CONFIG` (Docker's config.json JSON): registry credentials for pulls. */
  readonly authConfig?: string | undefined;
}

/**
 * `executor: docker` (spec: Executors): with `containerName` alone, execs into that running
 * container; with `image` alone, creates a container from it (pulled per `pull`) and runs the
 * step's command, or the image's default entrypoint and command when there is none; with both,
 * execs into the named container when it runs and otherwise creates it from the image. Output
 * goes to the step logs; a stop sends the step's signal to the container (or exec'd process),
 * then SIGKILL after the grace period. Problems are outcomes with clear errors, never exceptions.
 */
export class DockerExecutor implements Executor {
  readonly #docker: Dockerode;
  readonly #authConfig: string | undefined;

  constructor(options: DockerExecutorOptions = {}) {
    this.#docker = options.docker ?? new Dockerode();
    this.#authConfig = options.authConfig;
  }

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const c = ctx.step.executor.config as unknown as DockerStepConfig;
    if (!c.image && !c.containerName)
      return failed(
        ctx.dag.container
          ? 'this step belongs in the DAG-level container, which this process does not run (no container run hook is wired)'
          : 'docker step needs image or containerName in its executor config',
      );
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');
    const cmd = stepCommand(ctx);
    const env = containerEnv(ctx.env);
    try {
      if (c.containerName) {
        const existing = await this.#inspect(c.containerName);
        if (existing?.State.Running) {
          if (!cmd)
            return failed(`a step that execs into container ${c.containerName} needs a command`);
          return await execInContainer(this.#docker, this.#docker.getContainer(existing.Id), ctx, {
            cmd,
            env: [...env, ...(c.exec?.env ?? [])],
            user: c.exec?.user,
            workingDir: c.exec?.workingDir,
          });
        }
        if (!c.image)
          return failed(
            `container ${c.containerName} is ${existing ? `not running (${existing.State.Status})` : 'missing'}: start it, or set image so the step can create it`,
          );
        if (existing) {
          await note(
            ctx,
            `removing the stopped container ${c.containerName} to create it again from ${c.image}`,
          );
          await this.#docker.getContainer(existing.Id).remove({ force: true });
        }
      }
      return await this.#runNew(ctx, c, c.image ?? '', cmd, env);
    } catch (e) {
      return failed(`docker: ${dockerMessage(e)}`);
    }
  }

  async #inspect(name: string): Promise<Dockerode.ContainerInspectInfo | undefined> {
    try {
      return await this.#docker.getContainer(name).inspect();
    } catch (e) {
      if ((e as { statusCode?: number }).statusCode === 404) return undefined;
      throw e;
    }
  }

  async #runNew(
    ctx: ExecContext,
    c: DockerStepConfig,
    image: string,
    cmd: string[] | undefined,
    env: string[],
  ): Promise<ExecutionOutcome> {
    const auths = parseAuthConfig(this.#authConfig);
    if ('problem' in auths) return failed(auths.problem);
    const problem = await ensureImage(this.#docker, image, {
      policy: c.pull,
      platform: c.platform,
      auth: authFor(image, [ctx.dag.registryAuths, auths.auths]),
      log: (line) => void note(ctx, line),
    });
    if (problem) return failed(problem);

    const container = await this.#docker.createContainer(
      createOptionsFor(c, {
        image,
        cmd,
        env,
        cwd: ctx.cwd,
        home: homeOf(ctx.env),
        ...(c.containerName ? { name: c.containerName } : {}),
      }),
    );
    const sinks = sinksFor(ctx);
    let stopped = false;
    let killTimer: NodeJS.Timeout | undefined;
    const kill = (signal: NodeJS.Signals): void => {
      container.kill({ signal }).catch(() => undefined); // already exited
    };
    const onAbort = (): void => {
      stopped = true;
      kill(ctx.stop.signal);
      killTimer = setTimeout(() => kill('SIGKILL'), ctx.stop.graceMs);
    };
    try {
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const piped = pipeDemuxed(this.#docker, stream, sinks);
      await container.start();
      if (ctx.stop.abort.aborted) onAbort();
      else ctx.stop.abort.addEventListener('abort', onAbort, { once: true });
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      await piped;
      if (stopped) return { exitCode: StatusCode, signal: ctx.stop.signal, ...captured(sinks) };
      return { exitCode: StatusCode, signal: null, ...captured(sinks) };
    } finally {
      clearTimeout(killTimer);
      ctx.stop.abort.removeEventListener('abort', onAbort);
      if (c.autoRemove) await container.remove({ force: true }).catch(() => undefined);
    }
  }
}
