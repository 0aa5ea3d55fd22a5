import { existsSync, readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { callApi } from '../../e2e/support/start-all.js';

/**
 * The fault suite's witness: every step of a ledger DAG appends its run id to one file before it
 * does anything else, so a run executed twice shows up as two lines, whatever the fault was.
 * A step then waits for the test's release file (a gate), so a test decides when work ends.
 */
export class Ledger {
  readonly file: string;
  readonly gate: string;
  readonly #watchers = new Set<FSWatcher>();

  constructor(dir: string) {
    this.file = join(dir, 'ledger.txt');
    this.gate = join(dir, 'release');
    writeFileSync(this.file, '');
  }

  /** A step command: record the run id, then wait for the gate when `gated`. */
  command(gated: boolean): string {
    const mark = `echo "$DAG_RUN_ID" >> ${this.file}`;
    return gated ? `${mark}; while [ ! -e ${this.gate} ]; do sleep 0.05; done` : mark;
  }

  /** A DAG (YAML) whose one step is a ledger step; `extra` lines go at the DAG's top level. */
  dag(opts: { gated: boolean; extra?: string[] }): string {
    return [
      ...(opts.extra ?? []),
      'steps:',
      '  - name: work',
      `    command: ${JSON.stringify(this.command(opts.gated))}`,
      '',
    ].join('\n');
  }

  lines(): string[] {
    return readFileSync(this.file, 'utf8').split('\n').filter(Boolean);
  }

  /** How many times each run id executed. */
  counts(): Map<string, number> {
    const m = new Map<string, number>();
    for (const id of this.lines()) m.set(id, (m.get(id) ?? 0) + 1);
    return m;
  }

  release(): void {
    writeFileSync(this.gate, '');
  }

  /** Resolves once the ledger holds at least `n` lines (a file watch, not a poll loop). */
  async untilLines(n: number): Promise<string[]> {
    await new Promise<void>((resolve) => {
      const w = watch(this.file, () => check());
      this.#watchers.add(w);
      const check = (): void => {
        if (this.lines().length < n) return;
        w.close();
        this.#watchers.delete(w);
        resolve();
      };
      check();
    });
    return this.lines();
  }

  /** Stops the watches of waits that never ended (a failed test), before the folder goes. */
  dispose(): void {
    for (const w of this.#watchers) w.close();
    this.#watchers.clear();
  }

  released(): boolean {
    return existsSync(this.gate);
  }
}

/** A final run as the API shows it. */
export interface FinalRun {
  dagRunId: string;
  status: number;
  error?: string;
}

const FINAL = new Set([2, 3, 4, 6]);

/**
 * Reads each run over the API until it is final (the API is the only window into the server's
 * process), the run details' long-poll answering when the server supports it; the error names
 * the runs still not final and carries `context()`.
 */
export const untilAllFinal = async (
  base: () => string,
  name: string,
  ids: readonly string[],
  context: () => string,
  attempts = 3000,
): Promise<FinalRun[]> => {
  const out: FinalRun[] = [];
  for (const id of ids) {
    let last: FinalRun | undefined;
    for (let i = 0; i < attempts; i++) {
      const r = await callApi(base(), 'GET', `/dag-runs/${name}/${id}`).catch(() => undefined);
      last = r?.body.dagRunDetails as FinalRun | undefined;
      if (last && FINAL.has(last.status)) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    if (!last || !FINAL.has(last.status))
      throw new Error(
        `run ${id} of ${name} is stuck at status ${String(last?.status)}:\n${context()}`,
      );
    out.push(last);
  }
  return out;
};

/**
 * The suite's invariants: every accepted run is final, none executed twice, each succeeded run
 * executed exactly once, and each failed run's error matches `cause` (the message a user sees).
 */
export const expectNothingLost = (
  ledger: Ledger,
  runs: readonly FinalRun[],
  cause: RegExp = /./,
): void => {
  const counts = ledger.counts();
  for (const [id, n] of counts) expect({ id, executions: n }).toEqual({ id, executions: 1 });
  for (const r of runs) {
    expect(FINAL.has(r.status), `run ${r.dagRunId} final`).toBe(true);
    if (r.status === 4) expect(counts.get(r.dagRunId), `run ${r.dagRunId} executed`).toBe(1);
    if (r.status === 2) expect(r.error ?? '', JSON.stringify(r)).toMatch(cause);
  }
  const known = new Set(runs.map((r) => r.dagRunId));
  for (const id of counts.keys())
    expect(known.has(id), `ledger names unknown run ${id}`).toBe(true);
};
