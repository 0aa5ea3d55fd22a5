import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CoordinatorSide } from '../../test/support/fleet.js';
import { dagYaml, useWorkerFleet } from '../../test/support/worker-fleet-fixture.js';

/**
 * The worker outbox against a real coordinator and real `trellis worker` processes (issue 15,
 * item 4): a run that ends while the coordinator is down has its final status delivered once the
 * coordinator is back, even when the worker itself was killed and started again in between.
 */
const fleet = useWorkerFleet();
const { worker, joined, update, newId } = fleet;
let side: CoordinatorSide;
beforeAll(() => {
  side = fleet.side;
});

/** Resolves once `check()` holds (checked every 20 ms). */
const until = (check: () => boolean): Promise<void> =>
  new Promise((resolve) => {
    if (check()) return resolve();
    const timer = setInterval(() => {
      if (!check()) return;
      clearInterval(timer);
      resolve();
    }, 20);
  });

/** True once the worker's outbox journal holds the final status report of run `id`. */
const journalHasFinal = (workerId: string, id: string): boolean => {
  const file = join(fleet.workerHome, 'worker-outbox', workerId, 'outbox.jsonl');
  if (!existsSync(file)) return false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .some((l) => {
      if (!l.startsWith('{"n":')) return false;
      const line = JSON.parse(l) as { f?: boolean; s?: { run?: { dagRunId?: string } } };
      return line.f === true && line.s?.run?.dagRunId === id;
    });
};

/** A step that runs until the test creates `mark` (so the test decides when the run ends). */
const waitsFor = (mark: string): string =>
  `echo started; while [ ! -f ${mark} ]; do sleep 0.05; done; echo done`;

describe('worker outbox with a real coordinator', { timeout: 60_000 }, () => {
  it('delivers the final status of a run that ended while the coordinator was down', async () => {
    const w = await worker('finisher', { role: 'finish' });
    await joined('finisher');
    const id = newId();
    const mark = join(fleet.workerHome, `${id}.done`);
    await side.submit(dagYaml('ends-while-down', { role: 'finish' }, [waitsFor(mark)]), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    await side.restartCoordinator(0, async () => {
      writeFileSync(mark, '');
      await until(() => journalHasFinal('finisher', id));
    });
    const final = await side.final(id);
    expect(final.status).toBe(4);
    expect(readFileSync(final.nodes[0]!.stdout, 'utf8')).toBe('started\ndone\n');
    await w.waitFor(/outbox: coordinator reachable again after \d+ s: \d+ buffered message/);
    expect(w.output().match(/outbox: coordinator unreachable/g)).toHaveLength(1);
  }, 30_000);

  it('delivers it from the journal when the worker was killed and started again meanwhile', async () => {
    const w = await worker('phoenix', { role: 'phoenix' });
    await joined('phoenix');
    const id = newId();
    const mark = join(fleet.workerHome, `${id}.done`);
    await side.submit(dagYaml('ends-before-crash', { role: 'phoenix' }, [waitsFor(mark)]), id);
    await update(id, (r) => r.nodes[0]?.status === 1);
    await side.restartCoordinator(0, async () => {
      writeFileSync(mark, '');
      await until(() => journalHasFinal('phoenix', id));
      w.kill('SIGKILL'); // the outbox in memory is gone with the process
      await new Promise((r) => w.proc.once('exit', r));
    });
    expect(side.updates.some((u) => u.dagRunId === id && u.status === 4)).toBe(false);
    await worker('phoenix', { role: 'phoenix' }); // same id and home: replays the journal
    const final = await side.final(id);
    expect(final.status).toBe(4);
    expect(final.owner?.workerId).toBe('phoenix');
    expect(readFileSync(final.nodes[0]!.stdout, 'utf8')).toBe('started\ndone\n');
  }, 30_000);
});
