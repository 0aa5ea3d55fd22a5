import { afterAll, describe, expect, it } from 'vitest';
import type { StartAll } from '../e2e/support/start-all.js';
import {
  alive,
  LEASE,
  startCluster,
  startRun,
  stopServices,
  type HaCluster,
} from './support/ha-cluster.js';
import { expectNothingLost, untilAllFinal, type FinalRun } from './support/ledger.js';

/**
 * Issue 20's HA fault test: two `start-all` on one PostgreSQL and one Redis, two workers given
 * both coordinator addresses, a stream of 20 runs/s for 60 s (embedded `emb` runs and `fleet`
 * runs with a worker selector), while the leader is killed with SIGKILL, or frozen with SIGSTOP
 * past its lease and resumed. Every accepted run (POST answered 2xx) and every run the database
 * holds ends; none executes twice (the ledger); each minute's cron fire is recorded once; after
 * the take-over no fire is claimed by the deposed leader (its token is stale).
 */
const RATE_PER_S = 20;
const STREAM_MS = 60_000;
const FAULT_AT_MS = 20_000;

/** A scenario's progress on the test's output, with the seconds since it began (a hang's place). */
const progress = (name: string): ((what: string) => void) => {
  const t0 = Date.now();
  return (what) => console.log(`${name}: ${what} at +${((Date.now() - t0) / 1000).toFixed(1)} s`);
};

afterAll(async () => {
  await stopServices();
}, 60_000);

/** Posts 20 runs/s to the live instances in turn for 60 s; `fault` runs 20 s in. */
const stream = async (
  c: HaCluster,
  fault: () => Promise<void>,
): Promise<{ accepted: Map<string, string>; refused: number }> => {
  const accepted = new Map<string, string>(); // run id -> DAG
  const posts: Promise<void>[] = [];
  let refused = 0;
  const t0 = Date.now();
  let faulted: Promise<unknown> | undefined;
  let faultError: unknown;
  for (let i = 0; Date.now() - t0 < STREAM_MS; i++) {
    // kept as a settled result: awaited after the stream, never an unhandled rejection
    if (!faulted && Date.now() - t0 >= FAULT_AT_MS)
      faulted = fault().then(
        () => undefined,
        (e: unknown) => (faultError = e),
      );
    const live = c.instances.filter(alive);
    const target = live[i % live.length] as StartAll;
    const dag = i % 2 === 0 ? 'emb' : 'fleet';
    posts.push(
      startRun(target, dag).then((id) => {
        if (id === undefined) refused++;
        else accepted.set(id, dag);
      }),
    );
    // the stream's pace (a rate, not a wait for an event)
    await new Promise((r) => setTimeout(r, t0 + ((i + 1) * 1000) / RATE_PER_S - Date.now()));
  }
  await Promise.all(posts);
  await faulted;
  if (faultError instanceof Error) throw faultError;
  if (faultError !== undefined)
    throw new Error(`the fault step failed: ${JSON.stringify(faultError)}`);
  return { accepted, refused };
};

interface StoredRun extends FinalRun {
  dag: string;
  owner?: { host: string; pid: number; workerId: string };
  /** Each step's name, status and error (what a failed run's message leaves out). */
  steps?: string[];
  revision?: number | undefined;
  nodes?: { step: { name: string }; status: number; error?: string }[];
}

/** Every run of the stream's DAGs the database holds, with its status and error. */
const storedRuns = async (c: HaCluster): Promise<StoredRun[]> =>
  (
    await c.db.query<{ dag_run_id: string; name: string; status: number; record: StoredRun }>(
      "SELECT dag_run_id, name, status, record FROM trellis_runs WHERE name IN ('emb', 'fleet')",
    )
  ).rows.map((r) => ({
    dagRunId: r.dag_run_id,
    dag: r.name,
    status: Number(r.status),
    ...(r.record.error ? { error: r.record.error } : {}),
    ...(r.record.owner ? { owner: r.record.owner } : {}),
    steps: (r.record.nodes ?? []).map((n) => `${n.step.name}: ${n.status} ${n.error ?? ''}`),
    revision: r.record.revision,
  }));

/** Runs not final, counted by DAG, status and owner, with a few examples (a failure's message). */
const pending = async (c: HaCluster): Promise<string> => {
  const open = (await storedRuns(c)).filter((r) => !FINAL.includes(r.status));
  const by = new Map<string, number>();
  for (const r of open) {
    const k = `${r.dag} status ${r.status} on ${r.owner?.workerId ?? '?'}@${r.owner?.pid ?? '?'}`;
    by.set(k, (by.get(k) ?? 0) + 1);
  }
  return open.length === 0 ? '' : `${open.length} not final: ${JSON.stringify([...by])}`;
};

const FINAL = [2, 3, 4, 6];

const fires = async (c: HaCluster): Promise<{ at: number; by: string; firedAt: number }[]> =>
  (
    await c.db.query<{ fire_at: Date; fired_by: string; fired_at: Date }>(
      "SELECT fire_at, fired_by, fired_at FROM trellis_schedule_fires WHERE dag_name = 'tick' ORDER BY fire_at",
    )
  ).rows.map((r) => ({ at: r.fire_at.getTime(), by: r.fired_by, firedAt: r.fired_at.getTime() }));

const pidOf = (holder: string): number => Number(holder.split(':')[1]);

/** The invariants, over the survivor's API and the database. */
const verify = async (
  c: HaCluster,
  survivor: StartAll,
  accepted: Map<string, string>,
  window: { from: number; takeover: number; steppedDown?: number },
  cause: RegExp,
  step: (what: string) => void,
): Promise<void> => {
  // every run the database holds ends, accepted or not (a start the killed instance wrote but
  // never answered is a run too)
  let last = '';
  try {
    await expect
      .poll(async () => (last = await pending(c)), { timeout: 180_000, interval: 2000 })
      .toBe('');
  } catch (e) {
    const open = (await storedRuns(c)).filter((r) => !FINAL.includes(r.status));
    console.log(
      JSON.stringify(open.slice(0, 6)),
      c.context(...open.slice(0, 6).map((r) => r.dagRunId)),
    );
    throw e;
  }
  step('every stored run final');
  const all = await storedRuns(c);
  const known = new Set(all.map((r) => r.dagRunId));
  const lost = [...accepted.keys()].filter((id) => !known.has(id));
  expect(lost, `accepted runs missing from the database (${last})`).toEqual([]);
  // the API agrees with the database (a sample of the accepted runs, through the survivor)
  const base = (): string => `${survivor.url}/api/v2`;
  const sample = [...accepted].filter((_, i) => i % 25 === 0);
  for (const [id, dag] of sample) await untilAllFinal(base, dag, [id], c.context);
  step('the API agrees');
  const failed = all.filter((r) => r.status === 2);
  console.log(
    `${all.length} runs: ${failed.length} failed, e.g. ${JSON.stringify(failed[0] ?? {})}`,
  );
  expectNothingLost(c.ledger, all, cause);
  // cron: each minute boundary inside the window fired once, and by the new leader after the
  // take-over (the deposed one's claims carry a stale token and are refused)
  const until = Date.now() - 15_000;
  const got = await fires(c);
  const expected: number[] = [];
  for (let m = Math.ceil(window.from / 60_000) * 60_000; m <= until; m += 60_000) expected.push(m);
  const inWindow = got.filter((f) => f.at >= window.from && f.at <= until);
  if (inWindow.length !== expected.length)
    console.log(JSON.stringify({ window, got }), c.context());
  expect(inWindow.map((f) => f.at)).toEqual(expected);
  // from the take-over until the deposed one stepped down (a frozen one resumed still holds a
  // stale token), every fire is the survivor's: a stale claim never lands. (A frozen leader,
  // once stepped down, may win the lease again fairly later.)
  const deposed = (x: { firedAt: number }): boolean =>
    x.firedAt > window.takeover && x.firedAt < (window.steppedDown ?? Infinity);
  for (const f of got.filter(deposed))
    expect(pidOf(f.by), `fire at ${new Date(f.at).toISOString()}`).toBe(survivor.proc.pid);
};

describe('replicated coordinators under a stream of runs (issue 20)', () => {
  it('survives kill -9 of the leader: nothing lost, nothing twice, cron once a minute', async () => {
    const step = progress('kill -9');
    const c = await startCluster('ha_kill');
    step('cluster up');
    try {
      const first = await c.leader();
      const other = c.instances.find((s) => s !== first) as StartAll;
      const from = Date.now();
      let takeover = 0;
      const { accepted, refused } = await stream(c, async () => {
        first.proc.kill('SIGKILL');
        await c.leader([other]);
        takeover = Date.now();
        step('taken over');
      });
      console.log(`kill -9: ${accepted.size} accepted, ${refused} refused`);
      expect(accepted.size).toBeGreaterThan(0);
      // the killed leader's own runs are failed by the survivor's recovery (docs/ha.md)
      await verify(c, other, accepted, { from, takeover }, /died before it finished/, step);
      step('verified');
    } finally {
      await c.stop();
      step('stopped');
    }
  }, 420_000);

  it('survives the leader frozen past its lease and resumed: it comes back a follower', async () => {
    const step = progress('SIGSTOP');
    const c = await startCluster('ha_stop');
    step('cluster up');
    try {
      const first = await c.leader();
      const other = c.instances.find((s) => s !== first) as StartAll;
      const from = Date.now();
      let takeover = 0;
      let steppedDown = 0;
      const { accepted, refused } = await stream(c, async () => {
        const frozenAt = Date.now();
        first.proc.kill('SIGSTOP');
        await c.leader([other]);
        takeover = Date.now();
        step('taken over');
        // frozen for twice the lease (the fault's length, not a wait for an event)
        await new Promise((r) => setTimeout(r, frozenAt + 2 * LEASE.ttlMs - Date.now()));
        first.proc.kill('SIGCONT');
        // resumed, it steps down on its own clock (or its stale claim is refused) before acting;
        // it may win the lease again later, fairly, when the other's renewal runs late
        const stepDown = /stepping down before it can expire|is stale/;
        await expect.poll(() => stepDown.test(first.output()), { timeout: 30_000 }).toBe(true);
        steppedDown = Date.now();
        step('stepped down');
        await c.leader(); // exactly one leader, whichever
      });
      console.log(`SIGSTOP: ${accepted.size} accepted, ${refused} refused`);
      expect(accepted.size).toBeGreaterThan(0);
      await verify(
        c,
        other,
        accepted,
        { from, takeover, steppedDown },
        /died before it finished/,
        step,
      );
      const metrics = await fetch(`${first.url}/api/v2/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/^svc_leader_fenced_writes_total \d+/m);
      // one leader at the end, whichever it is
      await c.leader();
      step('verified');
    } finally {
      await c.stop();
      step('stopped');
    }
  }, 420_000);
});
