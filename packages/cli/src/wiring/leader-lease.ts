import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '@trellis/core';
import type { FireLedger, SchedulerLease, ScheduleKind } from '@trellis/scheduler';
import { PgLease, PgScheduleFires, type PgDb } from '@trellis/store-pg';

/** The lease row replicated coordinators elect their leader with. */
const LEASE_NAME = 'scheduler';

/** Leadership facts for `/health` and the metrics. */
export interface LeaderFacts {
  /** Fire claims refused because this instance's token was stale (a deposed leader's writes). */
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
}

/** `host:pid:incarnation`, parsed back for the standby's "who is the scheduler" line. */
const holderOf = (h: string): { owner: { pid: number; host: string } } => {
  const [host = '?', pid = '0'] = h.split(':');
  return { owner: { host, pid: Number(pid) } };
};

/**
 * The scheduler role's lease in the database (replicated coordinators, docs/ha.md): one leader
 * for cron, the queue processor, lost-run recovery and retention, with a fencing token that every
 * fire claim carries, so a leader frozen or cut off past its lease acts on no fire after.
 */
export const pgLeadership = (
  db: PgDb,
  config: Readonly<Config>,
  log: (line: string) => void,
): PgLeadership => {
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const ttlMs = config.database?.leaseTtlMs ?? 3000;
  const pg = new PgLease({ db, name: LEASE_NAME, holder, ttlMs });
  const ledger = new PgScheduleFires(db, holder);
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
  const fires: FireLedger = {
    claim: async (dag: string, kind: ScheduleKind, at: Date) => {
      const token = pg.token;
      const key = kind === 'start' ? dag : `${kind}:${dag}`;
      const r =
        token === undefined
          ? 'fenced'
          : await ledger.claimFenced(key, at, { lease: LEASE_NAME, token });
      if (r === 'fenced') {
        fenced += 1;
        log(
          `scheduler: the fire of DAG "${dag}" at ${at.toISOString()} was refused: this instance's lease token ${String(token)} is stale (it steps down at its next renewal)`,
        );
      }
      return r === 'claimed';
    },
    lastFire: () => ledger.lastFireOfAll(),
  };
  return {
    lease,
    fires,
    facts: { fencedWrites: () => fenced },
    leaseEveryMs: config.database?.leaseRenewMs ?? 1000,
    leaseTtlMs: ttlMs,
  };
};
