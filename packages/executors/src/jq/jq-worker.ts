/**
 * The jq worker's source. jq runs synchronously and a runaway filter never returns, so each
 * execution gets its own worker thread that a stop terminates (infra notes: jq-wasm). The code
 * is CommonJS text evaluated by `new Worker(code, { eval: true })`; it loads jq-wasm from the
 * path the parent resolved, so it works from sources and from the build alike.
 */
export const JQ_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { loadJq } = require(workerData.jqPath);
loadJq()
  .then((jq) => {
    const r = jq.raw(workerData.input, workerData.filter, workerData.flags);
    parentPort.postMessage({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode });
  })
  .catch((e) => parentPort.postMessage({ crash: String(e && e.message ? e.message : e) }));
`;

/** What the worker posts back. */
export type JqWorkerReply =
  | { readonly stdout: string; readonly stderr: string; readonly exitCode: number }
  | { readonly crash: string };
