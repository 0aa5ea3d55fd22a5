import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { Coordinator, CoordinatorClient, type WorkerCommand } from '@trellis/coordinator';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import { migrate, PgDb, PgRunStore } from '@trellis/store-pg';
import { FakeClock, makeRunRecord, startPostgres, type PrivatePostgres } from '@trellis/testkit';

/**
 * Issue 20: a stop asked of one coordinator while a worker of another claims the run, at the same
 * instant, on one PostgreSQL store. Coordinator `a` dispatched the run (it waits on its dispatch
 * queue); the worker `w1` is connected to `b`. Exactly one of the two writes lands: the stop
 * (the run ends cancelled, the claim is refused) or the claim (the run is the worker's, and `b`
 * tells the worker to stop it).
 */
const ROUNDS = 12;
const LOGS = '/var/trellis/logs';
let pg: PrivatePostgres;
const dbs: PgDb[] = [];
const coordinators: Coordinator[] = [];
let client: CoordinatorClient;
let storeA: PgRunStore;
let a: Coordinator;

/** One instance's store: its own pool on the shared database. */
const openStore = (url: string, clock: FakeClock): PgRunStore => {
  const db = new PgDb({ url, poolSize: 4 });
  dbs.push(db);
  return new PgRunStore({ db, logDir: LOGS, clock });
};

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase('stop_claim_race');
  const clock = new FakeClock('2026-03-01T10:00:00Z');
  storeA = openStore(url, clock);
  await migrate(dbs[0]!);
  const open = async (store: PgRunStore): Promise<Coordinator> => {
    const c = new Coordinator({ store, clock, logDir: LOGS, port: 0 });
    coordinators.push(c);
    await c.start();
    return c;
  };
  a = await open(storeA);
  const b = await open(openStore(url, clock));
  client = new CoordinatorClient({ address: `127.0.0.1:${b.port}`, clock: systemClock });
}, 120_000);

afterAll(async () => {
  client?.close();
  for (const c of coordinators) await c.stop();
  await Promise.all(dbs.map((d) => d.end()));
  await pg?.stop();
});

/** A run the leader marked running and put on the `any` dispatch queue through `a`. */
const dispatched = async (i: number): Promise<DagRunRecord> => {
  const ref = { name: 'race', dagRunId: `r${i}` };
  const record: DagRunRecord = {
    ...makeRunRecord({ name: 'race', params: [] } as unknown as Dag, ref.dagRunId),
    status: RunStatus.Running,
    log: `${LOGS}/race/r${i}/run.log`,
    revision: 1,
  };
  await storeA.createRun(record, { dag: { name: 'race' }, localDags: [] });
  a.expect(record, {});
  return record;
};

/**
 * Whether `b` tells `w1` to stop `ref`: awaited on the worker's command stream (what is already
 * due is sent when it opens); false if the stream ends or fails first.
 */
const stopReachesWorker = (ref: RunRef): Promise<boolean> =>
  new Promise((resolve) => {
    const stream = client.watchCommands({ workerId: 'w1', incarnation: 'i1' });
    let open = true;
    const done = (reached: boolean): void => {
      if (!open) return;
      open = false;
      stream.cancel();
      resolve(reached);
    };
    stream.on('data', (c: WorkerCommand) => {
      if (c.kind === 'KIND_CANCEL' && c.run?.dagRunId === ref.dagRunId) done(true);
    });
    stream.on('end', () => done(false));
    stream.on('error', () => done(false));
  });

describe('a stop and a claim of one run through two coordinators at once', () => {
  it('land one of the two writes, and the run ends as the winner says', async () => {
    const outcomes = { stop: 0, claim: 0 };
    for (let i = 1; i <= ROUNDS; i++) {
      const { name, dagRunId } = await dispatched(i);
      const ref = { name, dagRunId };
      await storeA.requestStop(ref); // as RunService.stop does; `a` ends the run it dispatched
      const [stopped, claim] = await Promise.all([
        a.finishUnclaimed(ref, RunStatus.Cancelled, 'stopped before a worker started it'),
        client.claim({
          workerId: 'w1',
          run: ref,
          root: ref,
          host: hostname(),
          pid: 1,
          processStart: '',
        }),
      ]);
      expect({ round: i, both: stopped && claim.granted }).toEqual({ round: i, both: false });
      // The claim's answer says who won, and the stored record agrees (`a`'s own watch of the
      // stop request may have ended the run before the test's call: `stopped` is then false).
      const stored = await storeA.getRun(ref);
      if (claim.granted) {
        outcomes.claim++;
        expect({ round: i, stopped }).toEqual({ round: i, stopped: false });
        expect(stored).toMatchObject({ status: RunStatus.Running, owner: { workerId: 'w1' } });
        // The stop request is in the store: the coordinator the worker uses forwards it.
        expect(await stopReachesWorker(ref)).toBe(true);
      } else {
        outcomes.stop++;
        expect(claim.reason).toMatch(/ended|stopped/);
        expect({ round: i, status: stored.status }).toEqual({
          round: i,
          status: RunStatus.Cancelled,
        });
        expect(stored.owner?.workerId).toBeUndefined();
      }
    }
    expect(outcomes.stop + outcomes.claim).toBe(ROUNDS);
  }, 120_000);
});
