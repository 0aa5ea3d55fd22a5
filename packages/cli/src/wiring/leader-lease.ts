import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Config } from '@trellis/core';
import {
  fireKey,
  RESUME_MARK_KEY,
  type FireLedger,
  type SchedulerLease,
  type ScheduleKind,
} from '@trellis/scheduler';
import type { DagRunRecord } from '@trellis/spec';
import { fencedDb, PgDb, PgLease, PgRunStore, PgScheduleFires } from '@trellis/store-pg';

/** The lease row replicated coordinators elect their leader with. */
const LEASE_NAME = 'scheduler';

/** Leadership facts for `/health` and the metrics. */
export interface LeaderFacts {
  /** Writes refused because this instance's token was stale (a deposed leader's writes). */
  fencedWrites(): number;
}

/** The leader lease over PostgreSQL, the fenced fire ledger and what they count. */
export interface PgLeadership {
  readonly lease: SchedulerLease;
  readonly fires: FireLedger;
  readonly facts: LeaderFacts;
  readonly leaseEveryMs: number;
  /** The lease's time to live: the leader steps down before it can expire unrenewed. */
  readonly leaseTtlMs: number;
  /**
   * The run store for the leader's own writes (lost-run recovery, retention): every statement
   * runs only while the lease row has this instance's holder and token (`fencedDb`).
   */
  readonly writes: PgRunStore;
  /** Closes the lease's own connection (after the role ended and released the lease). */
  close(): Promise<void>;
}

/** What the fenced store needs besides the pool (as the runtime's own store has). */
export interface LeaderStoreOptions {
  readonly clock: Clock;
  readonly onRecordSaved: (record: DagRunRecord) => void;
}

/** `host:pid:incarnation`, parsed back for the standby's "who is the scheduler" line. */
const holderOf = (h: string): { owner: { pid: number; host: string } } => {
  const [host = '?', pid = '0'] = h.split(':');
  return { owner: { host, pid: Number(pid) } };
};

/**
 * The scheduler role's lease in the database (replicated coordinators, docs/ha.md): one leader
 * for cron, the queue processor, lost-run recovery and retention, with a fencing token that every
 * fire claim and every write of recovery and retention carries, so a leader frozen or cut off
 * past its lease writes nothing after.
 */
export const pgLeadership = (
  db: PgDb,
  config: Readonly<Config>,
  log: (line: string) => void,
  store: LeaderStoreOptions,
): PgLeadership => {
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const ttlMs = config.database?.leaseTtlMs ?? 3000;
  // the lease's own connection: a renewal never waits behind the pool's work (a burst of starts
  // on a busy pool made a leader step down, and left the replicated set without one)
  const leaseDb = new PgDb({
    url: config.database?.url ?? '',
    poolSize: 1,
    connectTimeoutMs: ttlMs,
    queryTimeoutMs: ttlMs,
    warn: (m) => log(`scheduler: the lease's connection: ${m}`),
  });
  const pg = new PgLease({ db: leaseDb, name: LEASE_NAME, holder, ttlMs });
  const ledger = new PgScheduleFires(db, holder, { warn: log });
  let fenced = 0;
  const lease: SchedulerLease = {
    tryAcquire: () => pg.tryAcquire(),
    renew: () => pg.renew(),
    release: () => pg.release(),
    holder: async () => {
      const h = await pg.holder();
      return h === undefined ? undefined : holderOf(h);
    },
  };
  /** A fenced ledger write under `key`; throws when this instance's token was refused. */
  const claimFenced = async (key: string, at: Date, what: string): Promise<boolean> => {
    const token = pg.token;
    const r =
      token === undefined
        ? 'fenced'
        : await ledger.claimFenced(key, at, { lease: LEASE_NAME, token });
    if (r === 'fenced') {
      fenced += 1;
      log(
        `scheduler: ${what} at ${at.toISOString()} was refused: this instance's lease token ${String(token)} is stale (it steps down at its next renewal)`,
      );
      // not "fired elsewhere": the cron loop tries again until it steps down (a lease a moment
      // past its expiry and then renewed would otherwise lose the fire for good)
      throw new Error(`the lease token ${String(token)} was refused`);
    }
    return r === 'claimed';
  };
  const fires: FireLedger = {
    claim: (dag: string, kind: ScheduleKind, at: Date) =>
      claimFenced(fireKey(dag, kind), at, `the fire of DAG "${dag}"`),
    // recorded once per point: a mark another leader made at the same point is as good
    markResumed: async (at: Date) =>
      void (await claimFenced(RESUME_MARK_KEY, at, 'the resume mark of cron')),
    lastFire: () => ledger.lastFireOfAll(),
    lastFiresSince: (since) => ledger.lastFiresSince(since),
  };
  const fence = { lease: LEASE_NAME, holder, token: () => pg.token };
  const writes = new PgRunStore({
    db: fencedDb(db, fence, (e) => {
      fenced += 1;
      log(`scheduler: ${e.message}`);
    }),
    logDir: config.paths.logDir,
    clock: store.clock,
    onRecordSaved: store.onRecordSaved,
  });
  return {
    lease,
    fires,
    writes,
    facts: { fencedWrites: () => fenced },
    leaseEveryMs: config.database?.leaseRenewMs ?? 1000,
    leaseTtlMs: ttlMs,
    close: () => leaseDb.end(),
  };
};
