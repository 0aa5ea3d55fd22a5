import { readFile } from 'node:fs/promises';
import { expandHome, homeOf } from '@trellis/core';
import type { SshSpec } from '@trellis/spec';
import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';
import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { OutputCapture } from '../shell/output-fan-out.js';
import { failed, note } from '../common/outcome.js';
import { authMethods, toAuthHandler } from './ssh-auth.js';
import { checkHostKey, knownHostName, parseKnownHosts, type KnownHost } from './known-hosts.js';

/** Signal names the SSH protocol carries (RFC 4254 6.9), without the SIG prefix. */
const SSH_SIGNALS = [
  'ABRT',
  'ALRM',
  'FPE',
  'HUP',
  'ILL',
  'INT',
  'KILL',
  'PIPE',
  'QUIT',
  'SEGV',
  'TERM',
  'USR1',
  'USR2',
];

/** Options of {@link SshExecutor}. */
export interface SshExecutorOptions {
  /** Connect and handshake limit in ms. @default 20000 */
  readonly readyTimeoutMs?: number;
}

/**
 * `executor: ssh` and the DAG-level `ssh` (spec: SSH settings): runs the step's `command`, or its
 * `script` (uploaded through stdin to a temp file, so a shebang is honoured), on the remote host.
 * Keys are tried before the password; the host key is checked against `knownHostFile` unless
 * `strictHostKey` is false. Stop sends the step's signal to the remote process, then closes the
 * session after the grace period. Connection problems are clear errors, never exceptions.
 */
export class SshExecutor implements Executor {
  readonly #readyTimeoutMs: number;

  constructor(options: SshExecutorOptions = {}) {
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  }

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    const cfg = ctx.step.executor.config as unknown as SshSpec;
    const where = `${cfg.user}@${cfg.host}:${cfg.port}`;
    const port = Number(cfg.port);
    if (!cfg.host || !cfg.user) return failed('ssh step needs user and host');
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      return failed(`ssh port must be a number from 1 to 65535, got "${cfg.port}"`);
    const command = remoteCommand(ctx);
    if ('problem' in command) return failed(command.problem);

    const home = homeOf(ctx.env);
    const methods = await authMethods(cfg, home);
    if ('problem' in methods) return failed(methods.problem);
    let known: KnownHost[] | undefined;
    if (cfg.strictHostKey) {
      const file = expandHome(cfg.knownHostFile, home);
      try {
        known = parseKnownHosts(await readFile(file, 'utf8'));
      } catch (e) {
        return failed(
          `cannot read knownHostFile ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): create it with ssh-keyscan -p ${port} ${cfg.host} >> ${file}, or set strictHostKey: false`,
        );
      }
    }
    if (ctx.stop.abort.aborted) return failed('the step was stopped before it started');

    let hostProblem = '';
    const connect: ConnectConfig = {
      host: cfg.host,
      port,
      username: cfg.user,
      readyTimeout: this.#readyTimeoutMs,
      authHandler: toAuthHandler(methods),
      ...(known
        ? {
            hostVerifier: (key: Buffer): boolean => {
              const verdict = checkHostKey(known, cfg.host, port, key);
              if (verdict === 'unknown')
                hostProblem = `the host key of ${knownHostName(cfg.host, port)} is not in ${cfg.knownHostFile}: add it (ssh-keyscan -p ${port} ${cfg.host} >> ${cfg.knownHostFile}) or set strictHostKey: false`;
              if (verdict === 'mismatch')
                hostProblem = `the host key of ${knownHostName(cfg.host, port)} does not match ${cfg.knownHostFile}: the host changed its key or someone is in between; verify it, then update the file`;
              return verdict === 'known';
            },
          }
        : {}),
    };
    // hostProblem is set by hostVerifier during the handshake: read it when the error arrives.
    return runRemote(ctx, connect, command, (e) =>
      connectProblem(where, hostProblem, methods.length)(e),
    );
  }
}

/** The text the remote shell runs. */
const remoteCommand = (
  ctx: ExecContext,
): { text: string; stdin?: string } | { problem: string } => {
  const { step } = ctx;
  if (step.script !== undefined) {
    const shebang = step.script.startsWith('#!');
    const shell = step.shell ?? 'sh';
    // Upload through stdin to a temp file; run it with its interpreter line or the shell.
    const run = shebang ? '"$f"' : `${shell} "$f"`;
    return {
      text: `f=$(mktemp) && cat > "$f" && chmod 700 "$f" && { ${run}; rc=$?; rm -f "$f"; exit $rc; }`,
      stdin: step.script,
    };
  }
  const text = step.cmdWithArgs ?? [step.command, ...step.args].filter(Boolean).join(' ');
  if (!text) return { problem: 'ssh step needs command or script' };
  return { text };
};

/** Turns an ssh2 connection error into a sentence that says what to fix. */
const connectProblem =
  (where: string, hostProblem: string, methodCount: number) =>
  (e: Error & { code?: string; level?: string }): string => {
    if (hostProblem) return `ssh ${where}: ${hostProblem}`;
    if (e.code === 'ECONNREFUSED')
      return `ssh ${where}: connection refused: is sshd running and listening on that port?`;
    if (e.code === 'ENOTFOUND') return `ssh ${where}: unknown host`;
    if (e.level === 'client-authentication')
      return `ssh ${where}: authentication failed: the server accepted none of the ${methodCount} credential(s) tried (key or password)`;
    if (e.level === 'client-timeout') return `ssh ${where}: timed out while connecting`;
    return `ssh ${where}: ${e.message}`;
  };

/** Connects, runs `command`, streams its output, and maps exit/stop to an outcome. */
const runRemote = (
  ctx: ExecContext,
  connect: ConnectConfig,
  command: { text: string; stdin?: string },
  describe: (e: Error & { code?: string; level?: string }) => string,
): Promise<ExecutionOutcome> =>
  new Promise((resolve) => {
    const client = new Client();
    const capture =
      ctx.captureLimit === undefined ? undefined : new OutputCapture(ctx.captureLimit);
    let channel: ClientChannel | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let stopped = false;
    let killTimer: NodeJS.Timeout | undefined;
    let settled = false;
    const settle = (o: ExecutionOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(killTimer);
      ctx.stop.abort.removeEventListener('abort', onAbort);
      client.end();
      resolve(o);
    };
    const onAbort = (): void => {
      stopped = true;
      if (!channel) {
        settle({ exitCode: null, signal: ctx.stop.signal });
        return;
      }
      const name = ctx.stop.signal.replace(/^SIG/, '');
      if (SSH_SIGNALS.includes(name)) sendSignal(channel, name);
      // Closing the session makes sshd hang up on the remote process (SIGHUP) if it ignored the signal.
      killTimer = setTimeout(() => {
        channel?.close();
        settle({ exitCode: null, signal: ctx.stop.signal });
      }, ctx.stop.graceMs);
    };
    ctx.stop.abort.addEventListener('abort', onAbort, { once: true });

    client.on('error', (e: Error & { code?: string; level?: string }) =>
      settle(stopped ? { exitCode: null, signal: ctx.stop.signal } : failed(describe(e))),
    );
    client.on('ready', () => {
      client.exec(command.text, (err, ch) => {
        if (err) {
          settle(failed(`ssh: cannot start the command: ${err.message}`));
          return;
        }
        channel = ch;
        if (stopped) onAbort();
        ch.on('data', (c: Buffer) => {
          capture?.add(c);
          ctx.stdout.write(c);
        });
        ch.stderr.on('data', (c: Buffer) => ctx.stderr.write(c));
        ch.on('exit', (code: number | null, signal?: string) => {
          exitCode = code;
          if (signal) exitSignal = signal.replace(/^(SIG)?/, 'SIG') as NodeJS.Signals;
        });
        ch.on('close', () => {
          const captured = capture
            ? { output: capture.text(), outputExceeded: capture.exceeded }
            : {};
          if (stopped) {
            settle({ exitCode, signal: exitSignal ?? ctx.stop.signal, ...captured });
            return;
          }
          if (exitCode === null && exitSignal === null)
            void note(ctx, 'the remote command ended without an exit status');
          settle({ exitCode, signal: exitSignal, ...captured });
        });
        if (command.stdin !== undefined) ch.end(command.stdin);
        else ch.end();
      });
    });
    try {
      client.connect(connect);
    } catch (e) {
      settle(failed(describe(e as Error)));
    }
  });

/** The parts of ssh2's channel that a signal after our EOF needs (not in its typings). */
interface ChannelInternals {
  readonly outgoing?: { readonly id?: number; readonly state?: string };
  readonly _client?: { readonly _protocol?: { signal(id: number, name: string): void } };
}

/**
 * Sends a signal request. ssh2's `signal()` refuses once we sent EOF (our stdin is closed right
 * after the start), but the protocol allows requests until the channel closes (RFC 4254 5.3), so
 * it goes out through the connection's protocol object then.
 */
const sendSignal = (channel: ClientChannel, name: string): void => {
  const internals = channel as unknown as ChannelInternals;
  const id = internals.outgoing?.id;
  const protocol = internals._client?._protocol;
  const state = internals.outgoing?.state;
  if ((state === 'open' || state === 'eof') && id !== undefined && protocol)
    protocol.signal(id, name);
  else channel.signal(name);
};
