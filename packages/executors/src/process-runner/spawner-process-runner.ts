import { spawn, type ChildProcess } from 'node:child_process';
import type { ProcessRunner, ProcessSpec, RunningProcess } from '@trellis/core';
import type { NodeProcessRunnerOptions } from './node-process-runner.js';
import { killGroup, startFailureMessage } from './process-group.js';
import { SPAWNER_SOURCE } from './spawner.source.js';

/** {@link SpawnerProcessRunner}'s options. */
export interface SpawnerProcessRunnerOptions extends NodeProcessRunnerOptions {
  /**
   * How long the spawner stays after its last child ended: it exits then (a Node process costs
   * about 40 MB of memory even idle) and the next start makes a new one (about 40 ms). @default 60000
   */
  readonly idleExitMs?: number;
}

/** The spawner's V8 flags (see `#helper`; bench/spawner-flags-ab.js compares sets of them). */
export const SPAWNER_FLAGS: readonly string[] = [
  '--max-semi-space-size=1',
  '--lite-mode',
  '--no-expose-wasm', // else lite mode warns on stderr that it turned WebAssembly off
];

type Exit = Awaited<RunningProcess['exited']>;
type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** Messages from the spawner (see spawner.source.ts). */
type FromSpawner =
  | { t: 'started'; id: number; pid: number }
  | { t: 'failed'; id: number; code?: string; message: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'exit'; id: number; exitCode: number | null; signal: NodeJS.Signals | null };

/** A process started through the spawner, until its `exit` message. */
interface Tracked {
  readonly spec: ProcessSpec;
  readonly io: Io;
  pid: number | undefined;
  /** Signals sent before the pid was known, delivered once it is. */
  readonly early: NodeJS.Signals[];
  /** Pipes paused in the spawner because their target wants no more for now. */
  readonly paused: Set<1 | 2>;
  readonly started: (pid: number | undefined) => void;
  readonly exited: (exit: Exit) => void;
}

/**
 * Starts child processes through a small helper process, the spawner, for the long-running roles
 * (server, start-all, scheduler, worker). Node's `spawn` blocks the calling process until the
 * child has exec'd: a fork of the whole process, about 2-3 ms on the 2-core machine and the
 * largest single cost of a one-step run on the event loop that serves the API. A thread does not
 * help: the fork stalls every thread of the process. The spawner forks instead, on the other
 * core, and forwards the children's output with backpressure (a target whose `write` returns
 * false pauses that pipe until it drains).
 *
 * Behaves like {@link NodeProcessRunner} otherwise: own process group, `kill` to the group (also
 * before the pid is known), the output drain limit, exit code 127 and a message for a failed
 * start. The spawner starts with the first process (that one waits about 40 ms for it, as the
 * first after an idle exit does: a server or worker that runs nothing holds one Node process, not
 * two, from its start on; docs/decisions.md, "A lean idle fleet"), keeps this process alive only
 * while a child runs, and exits with it, or after `idleExitMs` with no child. If the spawner dies,
 * its processes are reported as exited with a line on their stderr, and the next start creates a
 * new one.
 */
export class SpawnerProcessRunner implements ProcessRunner {
  readonly #drainMs: number;
  readonly #idleExitMs: number;
  #spawner: ChildProcess | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  readonly #tracked = new Map<number, Tracked>();
  #nextId = 0;

  constructor(options: SpawnerProcessRunnerOptions = {}) {
    this.#drainMs = options.outputDrainMs ?? 2000;
    this.#idleExitMs = options.idleExitMs ?? 60_000;
  }

  /** The spawner's pid while there is one (tests and diagnostics). */
  get spawnerPid(): number | undefined {
    return this.#spawner?.pid;
  }

  /**
   * Starts the spawner now, unless it runs already, so that a later `start` need not wait for it
   * (it does not keep this process alive).
   */
  prepare(): void {
    this.#helper();
    if (this.#tracked.size === 0) this.#idle(); // never used: it goes after `idleExitMs`
  }

  start(spec: ProcessSpec, io: Io): RunningProcess {
    const id = ++this.#nextId;
    let started!: (pid: number | undefined) => void;
    let exited!: (exit: Exit) => void;
    const startedP = new Promise<number | undefined>((r) => (started = r));
    const exitedP = new Promise<Exit>((r) => (exited = r));
    const t: Tracked = { spec, io, pid: undefined, early: [], paused: new Set(), started, exited };
    const helper = this.#helper();
    if (!helper.connected || typeof helper.send !== 'function')
      return this.#noChannel(helper, spec, io);
    clearTimeout(this.#idleTimer);
    this.#tracked.set(id, t);
    if (this.#tracked.size === 1) hold(helper, true);
    const { command, args, cwd, env } = spec;
    helper.send({ t: 'spawn', id, command, args, cwd, env, drainMs: this.#drainMs });
    return {
      started: startedP,
      exited: exitedP,
      kill: (signal) => {
        if (t.pid !== undefined) killGroup(t.pid, signal);
        else if (this.#tracked.get(id) === t) t.early.push(signal);
      },
    };
  }

  /**
   * The spawner came up without its IPC channel (out of file descriptors: EMFILE, ENFILE): the
   * process fails to start like one whose spawn failed, and the next start makes a new spawner.
   */
  #noChannel(helper: ChildProcess, spec: ProcessSpec, io: Io): RunningProcess {
    if (this.#spawner === helper) this.#spawner = undefined;
    helper.kill(); // if it started at all
    const message = 'no channel to the spawner process (out of file descriptors? EMFILE, ENFILE)';
    io.stderr.write(startFailureMessage(spec, { message }));
    const exit: Exit = { exitCode: 127, signal: null };
    return {
      started: Promise.resolve(undefined),
      exited: Promise.resolve(exit),
      kill: () => undefined,
    };
  }

  #helper(): ChildProcess {
    if (this.#spawner !== undefined) return this.#spawner;
    // An empty environment: every child gets its own complete one with its request, and a
    // NODE_OPTIONS (a loader, an inspector) of this process has no business in the spawner.
    // Its young generation stays at 1 MB semi-spaces: what it allocates (one message per chunk
    // of output) dies at once, and the default lets it grow to 32 MB it never gives back.
    // `--lite-mode`: no optimizing compilers and lazy feedback vectors; the spawner's work is in
    // Node's C++ (fork, IPC), so steps start no slower, and it holds ~7 MB less RSS (~5 MB of
    // the binary's compiler pages never touched; docs/decisions.md, "Memory as history grows").
    // `detached`: its own session and process group, so a Ctrl-C (SIGINT to the terminal's
    // foreground group), SIGQUIT, SIGTSTP or a hangup does not end or stop it under its running
    // children; this process's own stop logic signals them, and the spawner still exits when
    // this process goes (on the IPC channel's `disconnect`, see spawner.source.ts).
    const helper = spawn(process.execPath, [...SPAWNER_FLAGS, '-e', SPAWNER_SOURCE], {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: {},
    });
    hold(helper, false);
    helper.on('message', (m: FromSpawner) => this.#onMessage(helper, m));
    const lost = (why: string): void => {
      if (this.#spawner !== helper) return;
      this.#spawner = undefined;
      for (const [id, t] of this.#tracked) {
        this.#tracked.delete(id);
        t.io.stderr.write(`trellis: lost track of ${t.spec.command}: ${why}\n`);
        t.started(t.pid);
        t.exited({ exitCode: null, signal: null });
      }
    };
    helper.on('error', (e) => lost(`the spawner process failed: ${e.message}`));
    helper.on('exit', (code, signal) =>
      lost(`the spawner process exited (${signal ?? `code ${code}`})`),
    );
    this.#spawner = helper;
    return helper;
  }

  #onMessage(helper: ChildProcess, m: FromSpawner): void {
    const t = this.#tracked.get(m.id);
    if (t === undefined) return;
    switch (m.t) {
      case 'started':
        t.pid = m.pid;
        t.started(m.pid);
        for (const signal of t.early.splice(0)) killGroup(m.pid, signal);
        return;
      case 'failed':
        t.io.stderr.write(startFailureMessage(t.spec, m));
        this.#finish(helper, m.id, t, { exitCode: 127, signal: null });
        return;
      case 'out':
        this.#write(helper, m.id, t, m.fd, m.data);
        return;
      case 'exit':
        this.#finish(helper, m.id, t, { exitCode: m.exitCode, signal: m.signal });
    }
  }

  #write(helper: ChildProcess, id: number, t: Tracked, fd: 1 | 2, data: Uint8Array): void {
    const target = fd === 1 ? t.io.stdout : t.io.stderr;
    const chunk = Buffer.isBuffer(data)
      ? data
      : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (target.write(chunk) || t.paused.has(fd)) return;
    t.paused.add(fd);
    helper.send({ t: 'pause', id, fd });
    target.once('drain', () => {
      t.paused.delete(fd);
      if (this.#tracked.get(id) === t) helper.send({ t: 'resume', id, fd });
    });
  }

  /** Ends the spawner once it has had no child for `idleExitMs` (the next start makes one). */
  #idle(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      const helper = this.#spawner;
      if (helper === undefined || this.#tracked.size > 0) return;
      this.#spawner = undefined; // a planned exit: nothing to report lost
      helper.disconnect();
    }, this.#idleExitMs);
    this.#idleTimer.unref();
  }

  #finish(helper: ChildProcess, id: number, t: Tracked, exit: Exit): void {
    this.#tracked.delete(id);
    if (this.#tracked.size === 0) {
      hold(helper, false);
      this.#idle();
    }
    t.started(t.pid);
    t.exited(exit);
  }
}

/** Whether the spawner (its process handle and IPC channel) keeps this process alive. */
const hold = (helper: ChildProcess, on: boolean): void => {
  if (on) {
    helper.ref();
    helper.channel?.ref();
  } else {
    helper.unref();
    helper.channel?.unref();
  }
};
