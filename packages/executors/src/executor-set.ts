import type Dockerode from 'dockerode';
import type { ProcessRunner } from '@trellis/core';
import type { Executor, ExecutorRegistry, RunHook, RunHookContext } from '@trellis/engine';
import { HttpExecutor } from './http/http.executor.js';
import { JqExecutor } from './jq/jq.executor.js';
import type { MailTransport } from './mail/mail-transport.js';
import { ShellExecutor } from './shell/shell.executor.js';

/** What the composition root passes in (read from the environment there). */
export interface ExecutorSetOptions {
  /** `CONTAINER_AUTH_CONFIG` (or the peer's `DOCKER_AUTH_CONFIG`): registry credentials. */
  readonly containerAuthConfig?: string | undefined;
  /** The Docker Engine client. @default the local socket */
  readonly docker?: Dockerode;
  /** Starts shell steps' processes. @default a `NodeProcessRunner` (spawns from this process) */
  readonly processes?: ProcessRunner;
}

/** Every executor of the spec's table but `dag` (the engine runs child DAGs itself). */
export interface ExecutorSet {
  readonly executors: ExecutorRegistry;
  /** The DAG-level container and the mail notifications. */
  readonly runHooks: readonly RunHook[];
}

/** One value, made on first use (a module load shared by its users). */
const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};

/** An executor whose module (and its client library) loads on its first step. */
const lazyExecutor = (load: () => Promise<Executor>): Executor => ({
  run: async (ctx, onStart) => (await load()).run(ctx, onStart),
});

/** A run hook that loads its module only for runs it applies to. */
const lazyHook = (
  applies: (ctx: RunHookContext) => boolean,
  load: () => Promise<RunHook>,
): RunHook => ({
  setUp: async (ctx) => (applies(ctx) ? (await load()).setUp(ctx) : {}),
});

/**
 * The real executors and run hooks, sharing one Docker client and one mail transport. The
 * Docker, SSH and mail libraries load when a run first needs them, so commands that never run
 * such a step (and every CLI start) do not pay for them.
 */
export const createExecutorSet = (o: ExecutorSetOptions = {}): ExecutorSet => {
  const authConfig = o.containerAuthConfig;
  const docker = once(async () => o.docker ?? new (await import('dockerode')).default());
  const mail = once(
    async (): Promise<MailTransport> =>
      new (await import('./mail/mail-transport.js')).NodemailerTransport(),
  );
  return {
    executors: {
      shell: new ShellExecutor(o.processes ? { processes: o.processes } : {}),
      http: new HttpExecutor(),
      jq: new JqExecutor(),
      docker: lazyExecutor(
        once(async () => {
          const { DockerExecutor } = await import('./docker/docker.executor.js');
          return new DockerExecutor({ docker: await docker(), authConfig });
        }),
      ),
      ssh: lazyExecutor(
        once(async () => new (await import('./ssh/ssh.executor.js')).SshExecutor()),
      ),
      mail: lazyExecutor(
        once(async () => new (await import('./mail/mail.executor.js')).MailExecutor(await mail())),
      ),
    },
    runHooks: [
      lazyHook(
        (ctx) => ctx.dag.container !== undefined,
        once(async () => {
          const { DagContainerHook } = await import('./container/dag-container.hook.js');
          return new DagContainerHook({ docker: await docker(), authConfig });
        }),
      ),
      lazyHook(
        ({ dag }) =>
          dag.mailOn.success ||
          dag.mailOn.failure ||
          [...dag.steps, ...Object.values(dag.handlerOn)].some((s) => s.mailOnError),
        once(async () => new (await import('./mail/mail-notifier.js')).MailNotifier(await mail())),
      ),
    ],
  };
};
