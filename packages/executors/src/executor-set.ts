import Dockerode from 'dockerode';
import type { ExecutorRegistry, RunHook } from '@trellis/engine';
import { DagContainerHook } from './container/dag-container.hook.js';
import { DockerExecutor } from './docker/docker.executor.js';
import { HttpExecutor } from './http/http.executor.js';
import { JqExecutor } from './jq/jq.executor.js';
import { MailNotifier } from './mail/mail-notifier.js';
import { MailExecutor } from './mail/mail.executor.js';
import { NodemailerTransport } from './mail/mail-transport.js';
import { ShellExecutor } from './shell/shell.executor.js';
import { SshExecutor } from './ssh/ssh.executor.js';

/** What the composition root passes in (read from the environment there). */
export interface ExecutorSetOptions {
  /** `CONTAINER_AUTH_CONFIG` (or the peer's `DOCKER_AUTH_CONFIG`): registry credentials. */
  readonly containerAuthConfig?: string | undefined;
  /** The Docker Engine client. @default the local socket */
  readonly docker?: Dockerode;
}

/** Every executor of the spec's table but `dag` (the engine runs child DAGs itself). */
export interface ExecutorSet {
  readonly executors: ExecutorRegistry;
  /** The DAG-level container and the mail notifications. */
  readonly runHooks: readonly RunHook[];
}

/** The real executors and run hooks, sharing one Docker client and one mail transport. */
export const createExecutorSet = (o: ExecutorSetOptions = {}): ExecutorSet => {
  const docker = o.docker ?? new Dockerode();
  const mail = new NodemailerTransport();
  const authConfig = o.containerAuthConfig;
  return {
    executors: {
      shell: new ShellExecutor(),
      docker: new DockerExecutor({ docker, authConfig }),
      ssh: new SshExecutor(),
      http: new HttpExecutor(),
      mail: new MailExecutor(mail),
      jq: new JqExecutor(),
    },
    runHooks: [new DagContainerHook({ docker, authConfig }), new MailNotifier(mail)],
  };
};
