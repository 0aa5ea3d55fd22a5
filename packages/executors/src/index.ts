export {
  NodeProcessRunner,
  type NodeProcessRunnerOptions,
} from './process-runner/node-process-runner.js';
export { ShellExecutor, type ShellExecutorDeps } from './shell/shell.executor.js';
export { planShellInvocation, type ShellInvocation } from './shell/shell-invocation.js';
export { ShellCommandRunner } from './command/shell-command-runner.js';
export { JqExecutor } from './jq/jq.executor.js';
export { HttpExecutor } from './http/http.executor.js';
export { SshExecutor, type SshExecutorOptions } from './ssh/ssh.executor.js';
export { MailExecutor } from './mail/mail.executor.js';
export { MailNotifier } from './mail/mail-notifier.js';
export {
  NodemailerTransport,
  type MailMessage,
  type MailTransport,
} from './mail/mail-transport.js';
export { DockerExecutor, type DockerExecutorOptions } from './docker/docker.executor.js';
export { DagContainerHook, type DagContainerHookOptions } from './container/dag-container.hook.js';
export { createExecutorSet, type ExecutorSet, type ExecutorSetOptions } from './executor-set.js';
