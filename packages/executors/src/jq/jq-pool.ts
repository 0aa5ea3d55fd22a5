import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { JQ_WORKER_SOURCE, type JqRequest, type JqWorkerReply } from './jq-worker.js';

const jqPath = createRequire(import.meta.url).resolve('jq-wasm');

/**
 * Worker threads with jq loaded. A request takes an idle worker (or starts one); a worker is
 * returned after a normal reply and terminated after a stop or a crash, so a runaway filter
 * never blocks the next step. Idle workers do not keep the process alive.
 */
export class JqPool {
  readonly #idle: Worker[] = [];

  constructor(private readonly maxIdle = 2) {}

  run(req: JqRequest, abort: AbortSignal): Promise<JqWorkerReply | 'stopped'> {
    const worker =
      this.#idle.pop() ?? new Worker(JQ_WORKER_SOURCE, { eval: true, workerData: { jqPath } });
    worker.ref();
    return new Promise((resolve) => {
      let settled = false;
      const settle = (r: JqWorkerReply | 'stopped', keep: boolean): void => {
        if (settled) return;
        settled = true;
        abort.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keep && this.#idle.length < this.maxIdle) {
          worker.unref();
          this.#idle.push(worker);
        } else void worker.terminate();
        resolve(r);
      };
      const onAbort = (): void => settle('stopped', false);
      const onMessage = (m: JqWorkerReply): void => settle(m, !('crash' in m));
      const onError = (e: Error): void => settle({ crash: e.message }, false);
      const onExit = (code: number): void =>
        settle({ crash: `the jq worker exited with ${code}` }, false);
      abort.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(req);
    });
  }

  /** Terminates the idle workers. */
  async close(): Promise<void> {
    await Promise.all(this.#idle.splice(0).map((w) => w.terminate()));
  }
}
