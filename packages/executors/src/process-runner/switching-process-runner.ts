import type { ProcessRunner, ProcessSpec, RunningProcess } from '@trellis/core';
import { NodeProcessRunner, type NodeProcessRunnerOptions } from './node-process-runner.js';
import { SpawnerProcessRunner } from './spawner-process-runner.js';

/** A runner that can start its helper before its first process (see SpawnerProcessRunner). */
export interface PreparableRunner extends ProcessRunner {
  prepare(): void;
  /** The helper's pid while there is one (benches and diagnostics). */
  readonly spawnerPid?: number | undefined;
}

/** {@link SwitchingProcessRunner}'s options. */
export interface SwitchingProcessRunnerOptions extends NodeProcessRunnerOptions {
  /** Processes started directly before the later ones go through the spawner. @default 8 */
  readonly directStarts?: number;
  /** Starts directly. @default new NodeProcessRunner(options) */
  readonly direct?: ProcessRunner;
  /** Starts through the spawner. @default new SpawnerProcessRunner(options) */
  readonly spawner?: PreparableRunner;
}

/**
 * The one-shot CLI's runner (`trellis start`, `retry`, ...): the first `directStarts` processes
 * start directly (no helper process for a short run), the later ones through a spawner process.
 * A fork of this large process costs it about three times the CPU a start through the spawner
 * does (bench/engine-run.bench.js, "in process" against "spawner"), so a long run pays the
 * spawner's start (about 40 ms, on the other core) back within a few steps. The spawner is started
 * halfway through the direct starts, so it is up when the first process goes through it.
 */
export class SwitchingProcessRunner implements ProcessRunner {
  readonly #direct: ProcessRunner;
  readonly #spawner: PreparableRunner;
  readonly #directStarts: number;
  #started = 0;

  constructor(options: SwitchingProcessRunnerOptions = {}) {
    this.#direct = options.direct ?? new NodeProcessRunner(options);
    this.#spawner = options.spawner ?? new SpawnerProcessRunner(options);
    this.#directStarts = options.directStarts ?? 8;
  }

  /** The spawner's pid while there is one (benches and diagnostics). */
  get spawnerPid(): number | undefined {
    return this.#spawner.spawnerPid;
  }

  start(
    spec: ProcessSpec,
    io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
  ): RunningProcess {
    const n = ++this.#started;
    if (n > this.#directStarts) return this.#spawner.start(spec, io);
    if (n === Math.ceil(this.#directStarts / 2)) this.#spawner.prepare();
    return this.#direct.start(spec, io);
  }
}
