// What one shell step costs: `true` through ShellExecutor (plan, spawn in its own process group,
// output fan-out, exit), sequentially and 16 at a time, against the raw spawn of `/bin/sh -c true`.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { ShellExecutor } from '../packages/executors/dist/index.js';
import { parseDagFile } from '../packages/spec/dist/index.js';

const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const discard = () =>
  new Writable({
    write(_chunk, _enc, done) {
      done();
    },
  });

const rawSpawn = () =>
  new Promise((resolve) => {
    spawn('/bin/sh', ['-c', 'true'], { env, stdio: 'ignore' }).on('close', resolve);
  });

/** The same spawn as NodeProcessRunner's (own group, stdout/stderr piped), without the rest. */
const rawPipedSpawn = () =>
  new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-e', '-c', 'true'], {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.resume();
    child.stderr.resume();
    child.on('close', resolve);
  });

/** Runs `total` jobs, at most `concurrency` at a time; returns ms per job and the total ms. */
const measure = async (job, total, concurrency) => {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await job();
    }),
  );
  const ms = performance.now() - t0;
  return { per: ms / total, ms };
};

export default async function run() {
  const file = parseDagFile('steps:\n  - name: t\n    command: "true"\n', {
    location: '/tmp/bench.yaml',
  });
  const dag = file.main.dag;
  const step = dag.steps[0];
  const executor = new ShellExecutor();
  const context = () => ({
    step,
    dag,
    cwd: tmpdir(),
    env,
    defaultShell: '/bin/sh',
    stdout: discard(),
    stderr: discard(),
    // One controller per execution, as the engine stops each node on its own.
    stop: { abort: new AbortController().signal, signal: 'SIGTERM', graceMs: 5000 },
    run: { name: 'bench', dagRunId: 'b-1', root: { name: 'bench', dagRunId: 'b-1' } },
  });
  const step1 = async () => {
    const outcome = await executor.run(context());
    if (outcome.exitCode !== 0) throw new Error(`true failed: ${JSON.stringify(outcome)}`);
  };

  await measure(rawSpawn, 20, 1); // warm-up
  await measure(step1, 20, 1);

  const raw = await measure(rawSpawn, 200, 1);
  console.log(
    `raw spawn of /bin/sh -c true (floor), sequential x200: ${raw.per.toFixed(2)} ms each`,
  );
  const piped = await measure(rawPipedSpawn, 200, 1);
  console.log(
    `raw spawn, own group + piped output, sequential x200: ${piped.per.toFixed(2)} ms each`,
  );
  const seq = await measure(step1, 200, 1);
  console.log(
    `ShellExecutor "true", sequential x200: ${seq.per.toFixed(2)} ms each (${seq.ms.toFixed(0)} ms total)`,
  );
  const par = await measure(step1, 300, 16);
  console.log(
    `ShellExecutor "true", 16 in parallel, 300 total: ${par.ms.toFixed(0)} ms total, ${par.per.toFixed(2)} ms per step`,
  );
}
