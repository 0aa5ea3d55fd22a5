import { createLocalDispatcher } from '@trellis/dispatch';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, sequentialIdGenerator, systemClock } from '@trellis/core';
import { CoordinatorClient } from '@trellis/coordinator';
import { ShellCommandRunner, ShellExecutor } from '@trellis/executors';
import { RunService, WorkerChildRuns, type RunServiceDeps } from '@trellis/services';
import { DagFileLoader } from '@trellis/store';
import type { ChildRunRequest, ChildRunResult } from '@trellis/engine';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { currentOwner, isOwnerAlive, processStartTime } from '@trellis/store';
import {
  parseDag,
  spawnWorker,
  startCoordinatorSide,
  startRedis,
  type CoordinatorSide,
  type PrivateRedis,
  type WorkerProcess,
} from '../test/support/index.js';

/**
 * Distributed mode with real processes on loopback (issue 6, Tests): a private redis-server, the
 * coordinator and dispatcher in this process over a file store, and `trellis worker` processes
 * (the built binary) with different labels.
 */
let redis: PrivateRedis;
let side: CoordinatorSide;
let workerHome: string;
const workers: WorkerProcess[] = [];
let seq = 0;

const dagYaml = (name: string, selector: Record<string, string>, steps: string[]): string => {
  const sel = Object.entries(selector);
  return [
    `name: ${name}`,
    ...(sel.length > 0 ? ['workerSelector:', ...sel.map(([k, v]) => `  ${k}: "${v}"`)] : []),
    'steps:',
    ...steps.map((s) => `  - ${JSON.stringify(s)}`),
    '',
  ].join('\n');
};

const worker = async (
  id: string,
  labels: Record<string, string>,
  concurrency = 2,
): Promise<WorkerProcess> => {
  const w = await spawnWorker({
    id,
    labels,
    concurrency,
    coordinator: `127.0.0.1:${side.coordinator.port}`,
    redisUrl: redis.url,
    home: workerHome,
  });
  workers.push(w);
  return w;
};

/** Resolves once the coordinator has a heartbeat from `id`. */
const joined = (id: string): Promise<void> =>
  new Promise((resolve) => {
    const has = (): boolean =>
      side.coordinator.workers().some((w) => w.id === id && w.health === 'healthy');
    if (has()) return resolve();
    const off = side.coordinator.onCapacity(() => {
      if (has()) {
        off();
        resolve();
      }
    });
  });

/** Resolves with the first record update of `id` that satisfies `pred`. */
const update = (id: string, pred: (r: DagRunRecord) => boolean): Promise<DagRunRecord> =>
  new Promise((resolve) => {
    const found = side.updates.find((u) => u.dagRunId === id && pred(u));
    if (found) return resolve(found);
    const timer = setInterval(() => {
      const f = side.updates.find((u) => u.dagRunId === id && pred(u));
      if (f) {
        clearInterval(timer);
        resolve(f);
      }
    }, 20);
  });

const newId = (): string => `run-${++seq}`;

beforeAll(async () => {
  redis = await startRedis();
  side = await startCoordinatorSide(redis);
  workerHome = mkdtempSync(join(tmpdir(), 'trellis-worker-home-'));
}, 30_000);

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
}, 30_000);

afterAll(async () => {
  await side.close();
  await redis.stop();
  rmSync(workerHome, { recursive: true, force: true });
}, 30_000);

describe('distributed mode with worker processes', { timeout: 60_000 }, () => {
  it('routes runs only to workers whose labels match their selector', async () => {
    await Promise.all([worker('gpu-1', { gpu: 'true' }), worker('cpu-1', { gpu: 'false' })]);
    await Promise.all([joined('gpu-1'), joined('cpu-1')]);
    const gpu = dagYaml('on-gpu', { gpu: 'true' }, ['echo gpu']);
    const cpu = dagYaml('on-cpu', { gpu: 'false' }, ['echo cpu']);
    const runs: [string, string][] = [];
    for (let i = 0; i < 3; i++) {
      const a = newId();
      const b = newId();
      await side.submit(gpu, a);
      await side.submit(cpu, b);
      runs.push([a, 'gpu-1'], [b, 'cpu-1']);
    }
    for (const [id, expected] of runs) {
      const final = await side.final(id);
      expect(final.status).toBe(4);
      expect(final.owner?.workerId).toBe(expected);
    }
  });

  it('keeps a run waiting until a matching worker joins, then runs it', async () => {
    await worker('plain', { zone: 'a' });
    await joined('plain');
    const sel = { zone: 'b' };
    expect(side.coordinator.availability(sel)).toMatch(/no healthy worker has labels zone=b/);
    const id = newId();
    await side.submit(dagYaml('needs-b', sel, ['echo b']), id);
    // Heartbeats go on and the run is still unclaimed: nobody matches.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await side.store.getRun({ name: 'needs-b', dagRunId: id })).owner?.workerId).toBe(
      'local',
    );
    const capacity = new Promise<void>((resolve) => {
      const off = side.coordinator.onCapacity(() => {
        if (side.coordinator.availability(sel) === null) {
          off();
          resolve();
        }
      });
    });
    await worker('zone-b', sel);
    await capacity;
    const final = await side.final(id);
    expect(final.status).toBe(4);
    expect(final.owner?.workerId).toBe('zone-b');
  });

  it('never runs more than a worker’s concurrency at once, across workers', async () => {
    await Promise.all([worker('c1', { pool: 'x' }, 1), worker('c2', { pool: 'x' }, 1)]);
    await Promise.all([joined('c1'), joined('c2')]);
    const ids = [newId(), newId(), newId(), newId()];
    const yaml = dagYaml('capped', { pool: 'x' }, ['sleep 0.4']);
    for (const id of ids) await side.submit(yaml, id);
    const finals = await Promise.all(ids.map((id) => side.final(id)));
    const byWorker = new Map<string, DagRunRecord[]>();
    for (const f of finals) {
      expect(f.status).toBe(4);
      const w = f.owner?.workerId ?? '';
      byWorker.set(w, [...(byWorker.get(w) ?? []), f]);
    }
    expect([...byWorker.keys()].sort()).toEqual(['c1', 'c2']);
    for (const list of byWorker.values()) {
      const spans = list
        .map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++)
        expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    }
  });

  it('delivers every line of a 100,000-line step', async () => {
    await worker('logs', { role: 'logs' });
    await joined('logs');
    const id = newId();
    await side.submit(dagYaml('many-lines', { role: 'logs' }, ['seq 1 100000']), id);
    const final = await side.final(id);
    expect(final.status).toBe(4);
    const text = readFileSync(final.nodes[0]!.stdout, 'utf8');
    const lines = text.split('\n');
    expect(lines.length).toBe(100_001);
    expect(lines[0]).toBe('1');
    expect(lines[99_999]).toBe('100000');
  });

  it('stops a run on a worker within a second of the stop request', async () => {
    await worker('stoppable', { role: 'stop' });
    await joined('stoppable');
    const id = newId();
    await side.submit(dagYaml('long', { role: 'stop' }, ['sleep 30']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    const asked = Date.now();
    await side.store.requestStop({ name: 'long', dagRunId: id });
    const final = await side.final(id);
    expect(final.status).toBe(3);
    expect(Date.now() - asked).toBeLessThan(1_500);
  });

  it('refuses a second claim of a run: a run never executes twice', async () => {
    const id = newId();
    const yaml = dagYaml('claimed-once', { nobody: 'here' }, ['echo once']);
    await side.submit(yaml, id);
    const client = new CoordinatorClient({
      address: `127.0.0.1:${side.coordinator.port}`,
      clock: systemClock,
    });
    const req = {
      run: { name: 'claimed-once', dagRunId: id },
      root: { name: 'claimed-once', dagRunId: id },
      host: 'h',
      pid: 1,
      processStart: '',
    };
    const first = await client.claim({ ...req, workerId: 'a' });
    const second = await client.claim({ ...req, workerId: 'b' });
    client.close();
    expect(first.granted).toBe(true);
    expect(second.granted).toBe(false);
    expect(second.reason).toMatch(/worker "a"/);
  });

  it('completes a run across a coordinator restart with every status and log line in order', async () => {
    await worker('survivor', { role: 'restart' });
    await joined('survivor');
    const id = newId();
    await side.submit(
      dagYaml('through-restart', { role: 'restart' }, [
        'for i in $(seq 1 40); do echo line $i; sleep 0.05; done',
        'echo second step',
      ]),
      id,
    );
    await update(id, (r) => r.nodes[0]?.status === 1);
    await side.restartCoordinator(1_000);
    const final = await side.final(id);
    expect(final.status).toBe(4);
    const out = readFileSync(final.nodes[0]!.stdout, 'utf8');
    expect(out).toBe(Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(readFileSync(final.nodes[1]!.stdout, 'utf8')).toBe('second step\n');
    const revisions = side.updates.filter((u) => u.dagRunId === id).map((u) => u.revision);
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
  }, 30_000);

  it('keeps queued runs when Redis restarts', async () => {
    const ids = [newId(), newId(), newId()];
    const yaml = dagYaml('after-redis', { role: 'late' }, ['echo kept']);
    for (const id of ids) await side.submit(yaml, id);
    await redis.restart();
    await worker('late', { role: 'late' });
    for (const id of ids) {
      const final = await side.final(id);
      expect(final.status).toBe(4);
      expect(final.owner?.workerId).toBe('late');
    }
  }, 30_000);

  it('marks the runs of a killed worker failed, naming it, and frees its slot', async () => {
    const w = await worker('doomed', { role: 'doomed' }, 1);
    await joined('doomed');
    const id = newId();
    await side.submit(dagYaml('on-doomed', { role: 'doomed' }, ['sleep 60']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    const killedAt = Date.now();
    w.kill('SIGKILL');
    const final = await side.final(id);
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    expect(final.status).toBe(2);
    expect(final.error).toMatch(/worker "doomed" was lost/);
    expect(final.nodes[0]!.status).toBe(2);
    // Its slot is free: a new worker with the same labels takes the next run at once.
    await worker('doomed-2', { role: 'doomed' }, 1);
    await joined('doomed-2');
    const next = newId();
    await side.submit(dagYaml('on-doomed', { role: 'doomed' }, ['echo next']), next);
    expect((await side.final(next)).owner?.workerId).toBe('doomed-2');
  }, 60_000);

  it('tells a worker that comes back after being declared lost to drop its stale run', async () => {
    const w = await worker('sleeper', { role: 'sleeper' }, 1);
    await joined('sleeper');
    const id = newId();
    await side.submit(dagYaml('stale', { role: 'sleeper' }, ['sleep 40']), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    w.kill('SIGSTOP'); // frozen: no heartbeats
    const failed = await side.final(id);
    expect(failed.error).toMatch(/worker "sleeper" was lost/);
    w.kill('SIGCONT');
    await w.waitFor(/dropping run .*stale/);
    await new Promise((r) => setTimeout(r, 1_500));
    const stored = await side.store.getRun({ name: 'stale', dagRunId: id });
    expect(stored.status).toBe(2);
    expect(stored.error).toMatch(/worker "sleeper" was lost/);
  }, 60_000);
});

/**
 * A step's own `workerSelector` sends its child DAG run to matching workers: the parent runs in
 * this process (the coordinator's, as in start-all) with a RunService over the coordinator's store
 * and dispatcher, as the CLI wires them.
 */
describe('child runs sent to workers by a selector', { timeout: 60_000 }, () => {
  let runs: RunService;
  let dagsDir: string;
  let unlisten: () => void;
  /** Child runs workers asked the coordinator for, by run id: each one's end. */
  const asked = new Map<string, Promise<ChildRunResult>>();

  /** Hears the child a worker asked for being stored, by its root's run id. */
  const storedUnder = new Map<string, (req: ChildRunRequest) => void>();
  /**
   * Children that parents on workers ask for, as the CLI wires them in the coordinator's
   * process: a coordinator restart (a new process) starts with a new one.
   */
  const workerChildRuns = (): WorkerChildRuns =>
    new WorkerChildRuns({
      children: {
        run: (req, opts) => {
          const done = runs.run(req, {
            onStored: () => {
              opts.onStored();
              storedUnder.get(req.root.dagRunId)?.(req);
            },
          });
          asked.set(req.dagRunId, done);
          return done;
        },
      },
      store: side.store,
      clock: systemClock,
      warn: () => undefined,
    });
  /** Resolves once the child a worker asked for under root run `rootId` is stored (queued). */
  const childStored = (rootId: string): Promise<ChildRunRequest> =>
    new Promise((resolve) => storedUnder.set(rootId, resolve));

  beforeAll(() => {
    dagsDir = mkdtempSync(join(tmpdir(), 'trellis-parent-dags-'));
    mkdirSync(dagsDir, { recursive: true });
    // Delegates to the side's current dispatcher (a coordinator restart replaces it).
    const dispatcher: NonNullable<RunServiceDeps['dispatcher']> = {
      availability: (sel) => side.dispatcher.availability(sel),
      dispatch: (a) => side.dispatcher.dispatch(a),
      cancel: (ref, root) => side.dispatcher.cancel(ref, root),
      onCapacity: (l) => side.dispatcher.onCapacity(l),
      // the coordinator's writes (this side's hook) are the remote run-update event
      onRunUpdate: (l) => {
        side.onRunUpdate.add(l);
        unlisten = () => side.onRunUpdate.delete(l);
        return unlisten;
      },
    };
    runs = new RunService({
      store: side.store,
      dags: new DagFileLoader(dagsDir),
      clock: systemClock,
      ids: sequentialIdGenerator('parent-'),
      processes: { owner: currentOwner(), isOwnerAlive, processStartTime },
      dispatcher,
      local: createLocalDispatcher({
        clock: systemClock,
        executors: { shell: new ShellExecutor() },
        commands: new ShellCommandRunner(),
        systemEnv: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dagsDir },
        defaultShell: 'sh',
        store: side.store,
        children: () => runs,
      }),
    });
    side.children = workerChildRuns();
  });

  afterAll(() => {
    side.children = undefined;
    unlisten();
    rmSync(dagsDir, { recursive: true, force: true });
  });

  const dagFile = (name: string, yaml: string): void =>
    writeFileSync(join(dagsDir, `${name}.yaml`), yaml);

  /** The stored record of the first child run of a parent's first step. */
  const childOf = (parent: DagRunRecord): Promise<DagRunRecord> => {
    const ref = parent.nodes[0]?.children[0];
    if (!ref) throw new Error(`run ${parent.dagRunId} started no child`);
    const root: RunRef = { name: parent.name, dagRunId: parent.dagRunId };
    return side.store.getRun({ name: ref.name, dagRunId: ref.dagRunId }, { root });
  };

  /** Resolves with the first record the coordinator writes for a run of `dagName` matching `pred`. */
  const childUpdate = (
    dagName: string,
    pred: (r: DagRunRecord) => boolean,
  ): Promise<DagRunRecord> =>
    new Promise((resolve) => {
      const l = (r: DagRunRecord): void => {
        if (r.name !== dagName || r.parent === undefined || !pred(r)) return;
        side.onRunUpdate.delete(l);
        resolve(r);
      };
      side.onRunUpdate.add(l);
    });

  it('runs a call: step’s child on the worker its workerSelector names; the parent gets its outputs', async () => {
    await Promise.all([worker('pool-a', { pool: 'a' }), worker('pool-b', { pool: 'b' })]);
    await Promise.all([joined('pool-a'), joined('pool-b')]);
    dagFile(
      'calls-b',
      [
        'steps:',
        '  - name: on-b',
        '    call: child-b',
        '    output: CHILD',
        '    workerSelector:',
        '      pool: b',
        '  - name: show',
        '    command: echo ${CHILD.outputs.WHERE}',
        '',
      ].join('\n'),
    );
    dagFile('child-b', 'steps:\n  - {name: where, command: echo from-b, output: WHERE}\n');
    const final = await (await runs.start({ dag: 'calls-b' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('local'); // the parent ran here, not on a worker
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('pool-b');
    expect(child.parent).toEqual({ name: 'calls-b', dagRunId: final.dagRunId });
    expect(readFileSync(final.nodes[1]!.stdout, 'utf8')).toBe('from-b\n');
    expect(readFileSync(child.log, 'utf8')).toMatch(
      /handing the run to a worker with labels pool=b/,
    );
  });

  it('routes a child by its own DAG’s workerSelector when the step has none', async () => {
    await Promise.all([worker('pool-a2', { pool: 'a' }), worker('gpu-2', { gpu: 'true' })]);
    await Promise.all([joined('pool-a2'), joined('gpu-2')]);
    dagFile('calls-gpu', 'steps:\n  - {name: train, call: child-gpu, output: OUT}\n');
    dagFile(
      'child-gpu',
      'workerSelector:\n  gpu: "true"\nsteps:\n  - {name: fit, command: echo fitted, output: FIT}\n',
    );
    const final = await (await runs.start({ dag: 'calls-gpu' })).done;
    expect(final.status).toBe(RunStatus.Succeeded);
    const child = await childOf(final);
    expect(child.owner?.workerId).toBe('gpu-2');
    expect(child.nodes[0]?.outputs).toEqual({ FIT: 'fitted' });
  });

  it('cancels the remote child when the parent is stopped', async () => {
    await worker('pool-c', { pool: 'c' });
    await joined('pool-c');
    dagFile(
      'calls-long',
      'steps:\n  - name: wait\n    call: child-long\n    workerSelector:\n      pool: c\n',
    );
    dagFile('child-long', 'steps:\n  - sleep 30\n');
    const childRunning = childUpdate('child-long', (r) => r.nodes[0]?.status === 1);
    const started = await runs.start({ dag: 'calls-long' });
    await childRunning;
    const asked = Date.now();
    await runs.stop(started.record);
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes[0]?.status).toBe(3);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Cancelled);
    expect(child.owner?.workerId).toBe('pool-c');
    expect(Date.now() - asked).toBeLessThan(3_000);
  });

  it('fails the parent’s step with the worker-lost error when the child’s worker dies', async () => {
    const w = await worker('pool-d', { pool: 'd' }, 1);
    await joined('pool-d');
    dagFile(
      'calls-doomed',
      'steps:\n  - name: wait\n    call: child-doomed\n    workerSelector:\n      pool: d\n',
    );
    dagFile('child-doomed', 'steps:\n  - sleep 60\n');
    const childRunning = childUpdate('child-doomed', (r) => r.nodes[0]?.status === 1);
    const started = await runs.start({ dag: 'calls-doomed' });
    await childRunning;
    w.kill('SIGKILL');
    const final = await started.done;
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.error).toMatch(/failed: worker "pool-d" was lost/);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Failed);
  });

  /** A parent DAG for workers with `pool: <parentPool>` whose step calls `kid` on `childPool`. */
  const parentOnWorker = (
    name: string,
    parentPool: string,
    childPool: string,
    kid: string[],
  ): string =>
    [
      `name: ${name}`,
      'workerSelector:',
      `  pool: ${parentPool}`,
      'steps:',
      '  - name: call-kid',
      '    call: kid',
      '    output: CHILD',
      '    workerSelector:',
      `      pool: ${childPool}`,
      '  - name: show',
      '    command: echo got-${CHILD.outputs.WHERE}',
      '    output: SHOWN',
      '---',
      'name: kid',
      'steps:',
      ...kid,
      '',
    ].join('\n');

  it('on a worker: runs a child its labels satisfy on that worker', async () => {
    await worker('wa-1', { pool: 'wa' });
    await joined('wa-1');
    const id = newId();
    await side.submit(
      parentOnWorker('on-wa', 'wa', 'wa', ['  - {name: where, command: echo here, output: WHERE}']),
      id,
    );
    const ok = await side.final(id);
    expect(ok.status).toBe(RunStatus.Succeeded);
    expect(ok.owner?.workerId).toBe('wa-1');
    expect((await childOf(ok)).owner?.workerId).toBe('wa-1');
    expect(ok.nodes[1]?.outputs).toEqual({ SHOWN: 'got-here' });
  });

  it('on a worker: a child whose selector its labels do not satisfy runs on a matching worker, through the coordinator', async () => {
    await Promise.all([worker('wa-2', { pool: 'wa2' }), worker('wb-2', { pool: 'wb2' })]);
    await Promise.all([joined('wa-2'), joined('wb-2')]);
    const id = newId();
    await side.submit(
      parentOnWorker('on-wa2', 'wa2', 'wb2', [
        '  - {name: where, command: echo from-wb, output: WHERE}',
      ]),
      id,
    );
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('wa-2');
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('wb-2');
    expect(child.parent).toEqual({ name: 'on-wa2', dagRunId: id });
    expect(child.root).toEqual({ name: 'on-wa2', dagRunId: id });
    expect(final.nodes[0]?.status).toBe(4);
    expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-from-wb' });
    expect(readFileSync(child.log, 'utf8')).toMatch(
      /handing the run to a worker with labels pool=wb2/,
    );
  });

  it('on a worker: stopping the parent cancels its child on the other worker', async () => {
    await Promise.all([worker('wa-3', { pool: 'wa3' }), worker('wb-3', { pool: 'wb3' })]);
    await Promise.all([joined('wa-3'), joined('wb-3')]);
    const id = newId();
    const childRunning = childUpdate(
      'kid',
      (r) => r.root.dagRunId === id && r.nodes[0]?.status === 1,
    );
    await side.submit(parentOnWorker('on-wa3', 'wa3', 'wb3', ['  - sleep 30']), id);
    const running = await childRunning;
    expect(running.owner?.workerId).toBe('wb-3');
    const asked = Date.now();
    await side.store.requestStop({ name: 'on-wa3', dagRunId: id });
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Cancelled);
    expect(final.nodes[0]?.status).toBe(3);
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Cancelled);
    expect(child.owner?.workerId).toBe('wb-3');
    expect(Date.now() - asked).toBeLessThan(5_000);
  });

  it('starts a child a worker asks for once, however often it asks (idempotent by run id)', async () => {
    const client = new CoordinatorClient({
      address: `127.0.0.1:${side.coordinator.port}`,
      clock: systemClock,
    });
    try {
      // The root: a run no worker takes (its selector matches none), as a parent on a worker.
      const root = { name: 'asker', dagRunId: newId() };
      await side.submit(dagYaml('asker', { role: 'idem-root' }, ['echo never']), root.dagRunId);
      const kid = parseDag('name: twice\nsteps:\n  - echo once\n').dag;
      const start = {
        workerId: 'tool',
        run: { name: 'twice', dagRunId: `${root.dagRunId}-kid` },
        root,
        parent: root,
        snapshotJson: JSON.stringify({ dag: kid, localDags: [] }),
        params: '',
        selector: { pool: 'nobody-has-this' },
        traceparent: '',
      };
      const [a, b] = await Promise.all([client.startChild(start), client.startChild(start)]);
      expect([a.started, b.started].sort()).toEqual([false, true]);
      expect((await client.startChild(start)).started).toBe(false);
      const got = await client.getRun({ run: start.run, root });
      expect(got.found).toBe(true);
      const queued = JSON.parse(got.recordJson) as DagRunRecord;
      expect(queued.status).toBe(RunStatus.Queued);
      expect(queued.parent).toEqual(root);
      // No worker matches: it waits, queued, until stopped.
      expect((await client.cancel({ run: start.run, root })).forwarded).toBe(true);
      expect(asked.has(start.run.dagRunId)).toBe(true);
      expect((await asked.get(start.run.dagRunId))?.status).toBe(RunStatus.Cancelled);
      const ended = await side.store.getRun(start.run, { root });
      expect(ended.status).toBe(RunStatus.Cancelled);
      expect(ended.error).toBe('stopped before a worker started it');
    } finally {
      client.close();
    }
  });

  it('on a worker: the parent gets the final record of its child on another worker across a coordinator restart', async () => {
    await Promise.all([worker('wa-5', { pool: 'wa5' }), worker('wb-5', { pool: 'wb5' })]);
    await Promise.all([joined('wa-5'), joined('wb-5')]);
    const id = newId();
    const childRunning = childUpdate(
      'kid',
      (r) => r.root.dagRunId === id && r.nodes[0]?.status === 1,
    );
    await side.submit(
      parentOnWorker('on-wa5', 'wa5', 'wb5', [
        '  - {name: where, command: "sleep 1; echo from-wb", output: WHERE}',
      ]),
      id,
    );
    expect((await childRunning).owner?.workerId).toBe('wb-5');
    // Down longer than the child has left to run: it ends meanwhile, the parent's worker polls on.
    await side.restartCoordinator(2_500, () => {
      side.children = workerChildRuns();
    });
    const restartedAt = Date.now();
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Succeeded);
    expect(final.owner?.workerId).toBe('wa-5');
    const child = await childOf(final);
    expect(child.status).toBe(RunStatus.Succeeded);
    expect(child.owner?.workerId).toBe('wb-5');
    expect(Date.parse(child.finishedAt)).toBeLessThan(restartedAt); // it ended in the outage
    expect(Date.parse(final.nodes[0]!.finishedAt)).toBeGreaterThanOrEqual(restartedAt);
    expect(final.nodes[0]?.status).toBe(4);
    expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-from-wb' });
  }, 30_000);

  it('on a worker: a child left queued by a coordinator that restarted is failed as orphaned, and so is the parent’s step', async () => {
    await worker('wa-6', { pool: 'wa6' });
    await joined('wa-6');
    const id = newId();
    const stored = childStored(id);
    await side.submit(parentOnWorker('on-wa6', 'wa6', 'nobody6', ['  - echo never']), id);
    const req = await stored; // queued: no worker has pool=nobody6
    await side.restartCoordinator(500, () => {
      side.children = workerChildRuns();
    });
    const final = await side.final(id);
    expect(final.status).toBe(RunStatus.Failed);
    expect(final.nodes[0]?.status).toBe(2);
    expect(final.nodes[0]?.error).toMatch(
      /child DAG run .* of "kid" failed: the coordinator restarted before a worker started it/,
    );
    expect(final.nodes[1]?.status).not.toBe(4);
    const child = await childOf(final);
    expect(child.dagRunId).toBe(req.dagRunId);
    expect(child.status).toBe(RunStatus.Failed);
    expect(child.error).toMatch(/the coordinator restarted before a worker started it/);
  }, 30_000);

  it('on a worker: asks again for a child whose start the coordinator answered but never stored', async () => {
    await Promise.all([worker('wa-7', { pool: 'wa7' }), worker('wb-7', { pool: 'wb7' })]);
    await Promise.all([joined('wa-7'), joined('wb-7')]);
    const port = workerChildRuns();
    let starts = 0;
    // The first answer is one of a coordinator that lost the request (GetRun then finds nothing).
    side.children = {
      start: (r) => (++starts === 1 ? Promise.resolve(true) : port.start(r)),
      status: (ref, root) => port.status(ref, root),
      cancel: (ref, root) => port.cancel(ref, root),
    };
    try {
      const id = newId();
      await side.submit(
        parentOnWorker('on-wa7', 'wa7', 'wb7', [
          '  - {name: where, command: echo again, output: WHERE}',
        ]),
        id,
      );
      const final = await side.final(id);
      expect(final.status).toBe(RunStatus.Succeeded);
      expect(starts).toBe(2);
      expect((await childOf(final)).owner?.workerId).toBe('wb-7');
      expect(final.nodes[1]?.outputs).toEqual({ SHOWN: 'got-again' });
    } finally {
      side.children = port;
    }
  });

  it('on a worker: a stopped parent waits at most 15 s for its child’s end to be confirmed', async () => {
    const parent = await worker('wa-8', { pool: 'wa8' });
    await joined('wa-8');
    const port = workerChildRuns();
    let cancels = 0;
    // A coordinator that takes the stop but never ends the child (it stays queued).
    side.children = {
      start: (r) => port.start(r),
      status: (ref, root) => port.status(ref, root),
      cancel: () => {
        cancels++;
        return Promise.resolve(true);
      },
    };
    try {
      const id = newId();
      const stored = childStored(id);
      await side.submit(parentOnWorker('on-wa8', 'wa8', 'nobody8', ['  - echo never']), id);
      const req = await stored;
      const stopAt = Date.now();
      await side.store.requestStop({ name: 'on-wa8', dagRunId: id });
      const final = await side.final(id);
      const waited = Date.now() - stopAt;
      expect(final.status).toBe(RunStatus.Cancelled);
      expect(final.nodes[0]?.status).toBe(3);
      expect(final.nodes[0]?.error).toBe('stopped');
      await parent.waitFor(
        /of "kid" was asked to stop; the coordinator did not confirm its end within 15 s; it may still run/,
      );
      expect(cancels).toBeGreaterThanOrEqual(1);
      expect(waited).toBeGreaterThanOrEqual(15_000);
      expect(waited).toBeLessThan(20_000);
      // The child it gave up on is still queued; end it for real.
      const ref = { name: 'kid', dagRunId: req.dagRunId };
      const root = { name: 'on-wa8', dagRunId: id };
      expect((await port.status(ref, root))?.status).toBe(RunStatus.Queued);
      expect(await port.cancel(ref, root)).toBe(true);
      expect((await asked.get(req.dagRunId))?.status).toBe(RunStatus.Cancelled);
    } finally {
      side.children = port;
    }
  }, 40_000);
});
