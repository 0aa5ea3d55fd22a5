// What one step costs in the executors that talk to something else: a jq filter (worker thread
// + jq-wasm per execution), an http GET to a local server, a docker step in a new container, and
// a step exec'd into a running container (the DAG-level container's path). Needs the Docker engine
// and the local/busybox image (scripts/setup.sh).
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { DockerExecutor } from '../packages/executors/dist/docker/docker.executor.js';
import { HttpExecutor, JqExecutor } from '../packages/executors/dist/index.js';
import { parseDagFile } from '../packages/spec/dist/index.js';

// dockerode is the executors package's dependency: resolve it from there.
const Dockerode = createRequire(new URL('../packages/executors/package.json', import.meta.url))(
  'dockerode',
);

const discard = () =>
  new Writable({
    write(_chunk, _enc, done) {
      done();
    },
  });

const contextFor = (stepDoc) => {
  const file = parseDagFile(JSON.stringify({ steps: [{ name: 's', ...stepDoc }] }), {
    location: '/tmp/bench.yaml',
  });
  if (!file.valid) throw new Error(file.errors.join('\n'));
  const dag = file.main.dag;
  return () => ({
    step: dag.steps[0],
    dag,
    cwd: tmpdir(),
    env: { PATH: '/usr/bin:/bin' },
    defaultShell: '/bin/sh',
    stdout: discard(),
    stderr: discard(),
    stop: { abort: new AbortController().signal, signal: 'SIGTERM', graceMs: 5000 },
    captureLimit: 1 << 20,
    run: { name: 'bench', dagRunId: 'b-1', root: { name: 'bench', dagRunId: 'b-1' } },
  });
};

const measure = async (label, executor, ctx, total) => {
  const once = async () => {
    const o = await executor.run(ctx());
    if (o.exitCode !== 0) throw new Error(`${label} failed: ${JSON.stringify(o)}`);
  };
  await once(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < total; i++) await once();
  const per = (performance.now() - t0) / total;
  console.log(`${label}, sequential x${total}: ${per.toFixed(2)} ms each`);
};

export default async function run() {
  const doc = JSON.stringify({
    items: Array.from({ length: 100 }, (_, i) => ({ i, name: `n${i}` })),
  });
  await measure(
    'jq "[.items[] | select(.i % 2 == 0) | .name]" on 100 objects',
    new JqExecutor(),
    contextFor({
      executor: 'jq',
      command: '[.items[] | select(.i % 2 == 0) | .name]',
      script: doc,
    }),
    50,
  );

  const server = createServer((_req, res) => res.end('{"ok":true}'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/health`;
  await measure(
    'http GET to a local server',
    new HttpExecutor(),
    contextFor({ executor: { type: 'http', config: { silent: true } }, command: `GET ${url}` }),
    200,
  );
  server.close();

  const docker = new Dockerode();
  const executor = new DockerExecutor({ docker });
  await measure(
    'docker step "true" in a new local/busybox container (create, start, wait, remove)',
    executor,
    contextFor({
      executor: { type: 'docker', config: { image: 'local/busybox' } },
      command: 'true',
    }),
    10,
  );
  const name = `trellis-bench-${process.pid}`;
  const c = await docker.createContainer({ Image: 'local/busybox', name, Cmd: ['sleep', '600'] });
  await c.start();
  try {
    await measure(
      'docker step "true" exec\'d into a running container',
      executor,
      contextFor({
        executor: { type: 'docker', config: { containerName: name } },
        command: 'true',
      }),
      30,
    );
  } finally {
    await c.remove({ force: true });
  }
}
