/**
 * The jq worker's source. jq runs synchronously and a runaway filter never returns, so filters
 * run in worker threads that a stop terminates (infra notes: jq-wasm). A worker loads jq once
 * and then serves one request at a time. The code is CommonJS text evaluated by
 * `new Worker(code, { eval: true })`; it loads jq-wasm from the path the parent resolved, so it
 * works from sources and from the build alike.
 */
export const JQ_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { loadJq } = require(workerData.jqPath);
const ready = loadJq();
parentPort.on('message', (m) => {
  ready
    .then((jq) => {
      const r = jq.raw(m.input, m.filter, m.flags);
      parentPort.postMessage({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode });
    })
    .catch((e) => parentPort.postMessage({ crash: String(e && e.message ? e.message : e) }));
});
`;

/** One filter to run. */
export interface JqRequest {
  readonly input: string;
  readonly filter: string;
  readonly flags: readonly string[];
}

/** What the worker posts back; after a `crash` the worker is discarded (its wasm may be broken). */
export type JqWorkerReply =
  | { readonly stdout: string; readonly stderr: string; readonly exitCode: number }
  | { readonly crash: string };
