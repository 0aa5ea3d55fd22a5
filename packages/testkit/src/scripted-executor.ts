import type { ExecContext, ExecutionOutcome, Executor } from '@trellis/engine';

/** What one scripted execution does: an outcome, or a function of the context. */
export type Script =
  | Partial<ExecutionOutcome>
  | ((
      ctx: ExecContext,
      call: number,
    ) => Partial<ExecutionOutcome> | Promise<Partial<ExecutionOutcome>>);

/**
 * An Executor with scripted outcomes per step name (docs/architecture.md, "House style": `exit 1, exit 1, exit 0`), so
 * retry and continueOn logic is tested without a shell. A step with no script exits 0. The last
 * script of a list repeats. `calls` records every context it was given.
 */
export class ScriptedExecutor implements Executor {
  readonly calls: ExecContext[] = [];
  private readonly counts = new Map<string, number>();

  constructor(private readonly scripts: Record<string, Script | Script[]> = {}) {}

  async run(ctx: ExecContext): Promise<ExecutionOutcome> {
    this.calls.push(ctx);
    const name = ctx.step.name;
    const call = this.counts.get(name) ?? 0;
    this.counts.set(name, call + 1);
    const entry = this.scripts[name];
    const list = Array.isArray(entry) ? entry : entry === undefined ? [] : [entry];
    const script = list[Math.min(call, list.length - 1)];
    const partial =
      script === undefined ? {} : typeof script === 'function' ? await script(ctx, call) : script;
    if (partial.output !== undefined) ctx.stdout.write(partial.output);
    return { exitCode: 0, signal: null, ...partial };
  }

  /** How many times the step ran. */
  count(name: string): number {
    return this.counts.get(name) ?? 0;
  }
}

/** Resolves when `abort` fires, with the outcome of a process killed by `signal`. */
export const untilStopped = (ctx: ExecContext): Promise<Partial<ExecutionOutcome>> =>
  new Promise((resolve) => {
    const done = (): void => resolve({ exitCode: null, signal: ctx.stop.signal });
    if (ctx.stop.abort.aborted) done();
    else ctx.stop.abort.addEventListener('abort', done, { once: true });
  });
