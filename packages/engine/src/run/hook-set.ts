import type { DagRunRecord, NodeRecord, Step } from '@trellis/spec';
import type { Executor } from '../ports/executor.js';
import type { RunHook, RunHookContext, RunResources } from '../ports/run-hooks.js';

/**
 * What the run hooks hold for one run (EngineDeps.runHooks), and their pending calls. A hook that
 * throws is a line in the run log, never a changed outcome.
 */
export class HookSet {
  private readonly resources: RunResources[] = [];
  private readonly notifying: Promise<void>[] = [];
  /** Resolve once each pending node call has been made (tear-down comes after them). */
  private readonly calling: Promise<void>[] = [];

  constructor(private readonly log: (line: string) => void) {}

  /** Sets up each hook once, in order; `context` gives each its view of the run. */
  async setUp(hooks: readonly RunHook[], context: () => RunHookContext): Promise<void> {
    for (const hook of hooks) this.resources.push(await hook.setUp(context()));
  }

  /** Variables the hooks add to a starting node's processes (TRACEPARENT of its span). */
  envFor(n: NodeRecord): Record<string, string> {
    const env: Record<string, string> = {};
    for (const h of this.resources) {
      try {
        Object.assign(env, h.nodeStarted?.(n));
      } catch (e) {
        this.log(`a node-start hook failed: ${(e as Error).message}`);
      }
    }
    return env;
  }

  /** The first hook's executor for `step`, if one replaces the registry's. */
  executorFor(step: Step): Executor | undefined {
    for (const h of this.resources) {
      const e = h.executorFor?.(step);
      if (e) return e;
    }
    return undefined;
  }

  /**
   * Tells the hooks a node ended, once `logsClosed` resolved (its step logs are complete on disk);
   * the run waits for them before its run-finished hooks.
   */
  nodeFinished(n: NodeRecord, logsClosed: Promise<void> = Promise.resolve()): void {
    for (const h of this.resources) {
      if (!h.nodeFinished) continue;
      let called: () => void = () => undefined;
      this.calling.push(new Promise<void>((resolve) => (called = resolve)));
      this.notifying.push(
        this.guard('a node hook', async () => {
          await logsClosed;
          let call: Promise<void> | undefined;
          try {
            call = h.nodeFinished?.(n);
          } finally {
            called(); // also when the hook throws at once: tear-down must not wait forever
          }
          await call;
        }),
      );
    }
  }

  /** Releases what the hooks acquired, after the handlers and after every node call was made. */
  async tearDown(): Promise<void> {
    await Promise.all(this.calling);
    for (const h of this.resources) await this.guard('run clean-up', () => h.tearDown?.());
  }

  /** The final record is saved: pending node calls end, then each run-finished hook. */
  async runFinished(record: DagRunRecord): Promise<void> {
    await Promise.all(this.notifying);
    for (const h of this.resources)
      await this.guard('a run-finished hook', () => h.runFinished?.(record));
  }

  private async guard(what: string, f: () => Promise<void> | undefined): Promise<void> {
    try {
      await f();
    } catch (e) {
      this.log(`${what} failed: ${(e as Error).message}`);
    }
  }
}
