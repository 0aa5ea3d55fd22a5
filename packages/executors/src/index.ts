export {
  NodeProcessRunner,
  type NodeProcessRunnerOptions,
} from './process-runner/node-process-runner.js';
export { SpawnerProcessRunner } from './process-runner/spawner-process-runner.js';
export {
  SwitchingProcessRunner,
  type SwitchingProcessRunnerOptions,
} from './process-runner/switching-process-runner.js';
export { ShellExecutor, type ShellExecutorDeps } from './shell/shell.executor.js';
export { planShellInvocation, type ShellInvocation } from './shell/shell-invocation.js';
export { ShellCommandRunner } from './command/shell-command-runner.js';
export { JqExecutor } from './jq/jq.executor.js';
export { HttpExecutor } from './http/http.executor.js';
// The Docker, SSH and mail parts are types here: createExecutorSet loads them on first use, so
// importing this package does not load dockerode, ssh2 or nodemailer.
export type { SshExecutor, SshExecutorOptions } from './ssh/ssh.executor.js';
export type { MailExecutor } from './mail/mail.executor.js';
export type { MailNotifier } from './mail/mail-notifier.js';
export type { NodemailerTransport, MailMessage, MailTransport } from './mail/mail-transport.js';
export type { DockerExecutor, DockerExecutorOptions } from './docker/docker.executor.js';
export type { DagContainerHook, DagContainerHookOptions } from './container/dag-container.hook.js';
export { createExecutorSet, type ExecutorSet, type ExecutorSetOptions } from './executor-set.js';
