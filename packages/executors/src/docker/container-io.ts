import { readdir, readFile } from 'node:fs/promises';
import type Dockerode from 'dockerode';
import type { ExecContext, ExecutionOutcome } from '@trellis/engine';
import { Writable } from 'node:stream';
import { failed } from '../common/outcome.js';
import { OutputCapture } from '../shell/output-fan-out.js';

/** Where a container's or an exec's demultiplexed output goes. */
export interface OutputSinks {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly capture: OutputCapture | undefined;
}

/** The step's log streams, with stdout also captured when the engine asked for it. */
export const sinksFor = (ctx: ExecContext): OutputSinks => {
  const capture = ctx.captureLimit === undefined ? undefined : new OutputCapture(ctx.captureLimit);
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      capture?.add(chunk);
      if (ctx.stdout.write(chunk)) done();
      else ctx.stdout.once('drain', () => done());
    },
  });
  const stderr = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (ctx.stderr.write(chunk)) done();
      else ctx.stderr.once('drain', () => done());
    },
  });
  return { stdout, stderr, capture };
};

/** The captured stdout as outcome fields. */
export const captured = (s: OutputSinks): Pick<ExecutionOutcome, 'output' | 'outputExceeded'> =>
  s.capture ? { output: s.capture.text(), outputExceeded: s.capture.exceeded } : {};

/** Resolves when a (multiplexed) docker stream has ended. */
export const pipeDemuxed = (
  docker: Dockerode,
  stream: NodeJS.ReadableStream,
  sinks: OutputSinks,
): Promise<void> =>
  new Promise((resolve) => {
    docker.modem.demuxStream(stream, sinks.stdout, sinks.stderr);
    stream.on('end', () => resolve());
    stream.on('close', () => resolve());
    stream.on('error', () => resolve());
  });

/** Variables of the host that must not reach a container, which has its own. */
const HOST_ONLY = new Set(['PATH', 'HOME', 'SHELL', 'PWD', 'HOSTNAME', 'TMPDIR']);

/** The step environment as `KEY=value` for a container: without the host's own paths. */
export const containerEnv = (env: Readonly<Record<string, string>>): string[] =>
  Object.entries(env)
    .filter(([k]) => !HOST_ONLY.has(k))
    .map(([k, v]) => `${k}=${v}`);

/** The command a step runs in a container: program and args, or a script through `sh -c`. */
export const stepCommand = (ctx: ExecContext): string[] | undefined => {
  const { step } = ctx;
  if (step.script !== undefined) return [step.shell ?? 'sh', '-c', step.script];
  if (step.command === undefined || step.command === '') return undefined;
  return [step.command, ...step.args];
};

/**
 * Runs `cmd` in a running container through exec, streaming its output; a stop sends the step's
 * signal to the exec'd process (by its host pid: the engine runs on the Docker host), then
 * SIGKILL after the grace period. Returns the exec's exit code.
 */
export const execInContainer = async (
  docker: Dockerode,
  container: Dockerode.Container,
  ctx: ExecContext,
  o: { cmd: string[]; env: string[]; user?: string | undefined; workingDir?: string | undefined },
): Promise<ExecutionOutcome> => {
  const exec = await container.exec({
    Cmd: o.cmd,
    Env: o.env,
    AttachStdout: true,
    AttachStderr: true,
    ...(o.user ? { User: o.user } : {}),
    ...(o.workingDir ? { WorkingDir: o.workingDir } : {}),
  });
  const sinks = sinksFor(ctx);
  const stream = await exec.start({ hijack: true, stdin: false });
  let stopped = false;
  let killTimer: NodeJS.Timeout | undefined;
  const signalExec = async (signal: NodeJS.Signals): Promise<void> => {
    try {
      const { Pid } = await exec.inspect();
      if (Pid > 0) await signalTree(Pid, signal);
    } catch {
      // already gone
    }
  };
  const onAbort = (): void => {
    stopped = true;
    void signalExec(ctx.stop.signal);
    killTimer = setTimeout(() => void signalExec('SIGKILL'), ctx.stop.graceMs);
  };
  if (ctx.stop.abort.aborted) onAbort();
  else ctx.stop.abort.addEventListener('abort', onAbort, { once: true });
  try {
    await pipeDemuxed(docker, stream, sinks);
  } finally {
    clearTimeout(killTimer);
    ctx.stop.abort.removeEventListener('abort', onAbort);
  }
  const exitCode = await execExitCode(exec);
  if (stopped) return { exitCode, signal: ctx.stop.signal, ...captured(sinks) };
  if (exitCode === null)
    return { ...failed('docker did not report the exit code of the exec'), ...captured(sinks) };
  return { exitCode, signal: null, ...captured(sinks) };
};

/**
 * Sends `signal` to `pid` and every process below it (read from /proc): an exec'd shell's
 * children would otherwise keep the exec's output open after the shell died.
 */
const signalTree = async (pid: number, signal: NodeJS.Signals): Promise<void> => {
  const children = new Map<number, number[]>();
  for (const name of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid > 0) children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const all: number[] = [];
  const walk = (p: number): void => {
    all.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  for (const p of all) {
    try {
      process.kill(p, signal);
    } catch {
      // exited meanwhile
    }
  }
};

/**
 * The exit code of a finished exec. Docker can report the exec as running for a moment after its
 * output stream closed, so this asks again briefly before giving up.
 */
const execExitCode = async (exec: Dockerode.Exec): Promise<number | null> => {
  for (let i = 0; i < 100; i++) {
    const info = await exec.inspect();
    if (!info.Running) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 10));
  }
  return null;
};

/** Docker's error text for an API failure. */
export const dockerMessage = (e: unknown): string => {
  const err = e as {
    json?: { message?: string };
    message?: string;
    code?: string;
    address?: string;
  };
  if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' || err.code === 'EACCES')
    return `cannot reach the Docker engine${err.address ? ` at ${err.address}` : ''} (${err.code}): is dockerd running, and may this user use its socket?`;
  return err.json?.message ?? err.message ?? String(e);
};
