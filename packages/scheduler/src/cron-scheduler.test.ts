import { describe, expect, it } from 'vitest';
import { parseDagFile } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { CronScheduler, type LatestRun, type ScheduledDag } from './cron-scheduler.js';

const dagOf = (fileName: string, yaml: string, suspended = false): ScheduledDag => {
  const file = parseDagFile(yaml, { name: fileName });
  expect(file.errors).toEqual([]);
  return { fileName, dag: file.main.dag, suspended };
};

/** A scheduler over a fixed set of DAG files, recording what it did. */
const setup = (start: string, files: ScheduledDag[]) => {
  const clock = new FakeClock(start);
  const calls: string[] = [];
  const latest = new Map<string, LatestRun>();
  const state = { files };
  const scheduler = new CronScheduler({
    clock,
    dags: () => Promise.resolve(state.files),
    actions: {
      start: (d, at) => {
        calls.push(`start ${d.dag.name} ${at.toISOString()}`);
        return Promise.resolve();
      },
      stop: (d) => {
        calls.push(`stop ${d.dag.name}`);
        return Promise.resolve();
      },
      restart: (d) => {
        calls.push(`restart ${d.dag.name}`);
        return Promise.resolve();
      },
      latestRun: (name) => Promise.resolve(latest.get(name)),
    },
    log: () => undefined,
  });
  return { clock, calls, latest, scheduler, state };
};

describe('CronScheduler', () => {
  it('fires on the minute, once per fire time', async () => {
    const { clock, calls, scheduler } = setup('2026-03-01T10:00:30Z', [
      dagOf('every5', 'schedule: "*/5 * * * *"\nsteps:\n  - "true"\n'),
    ]);
    await scheduler.tick(); // 10:00:30: 10:00 was before the scheduler started
    await clock.setTime('2026-03-01T10:04:59.999Z');
    await scheduler.tick();
    expect(calls).toEqual([]);
    await clock.setTime('2026-03-01T10:05:00Z');
    await scheduler.tick();
    await scheduler.tick();
    expect(calls).toEqual(['start every5 2026-03-01T10:05:00.000Z']);
  });

  it('sleeps to the next minute boundary and fires from its own loop', async () => {
    const { clock, calls, scheduler } = setup('2026-03-01T10:00:30Z', [
      dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n'),
    ]);
    const stop = new AbortController();
    const first = clock.nextSleep();
    const loop = scheduler.run(stop.signal);
    expect(await first).toBe(30_000);
    const next = clock.nextSleep();
    await clock.advanceBy(30_000);
    expect(await next).toBe(60_000);
    expect(calls).toEqual(['start minutely 2026-03-01T10:01:00.000Z']);
    stop.abort();
    await loop;
  });

  it('catches a late timer with one fire, not one per missed minute', async () => {
    const { clock, calls, scheduler } = setup('2026-03-01T10:00:00.500Z', [
      dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n'),
    ]);
    await scheduler.tick();
    await clock.setTime('2026-03-01T10:04:20Z'); // the process was stalled for four minutes
    await scheduler.tick();
    expect(calls).toEqual(['start minutely 2026-03-01T10:01:00.000Z']);
    await clock.setTime('2026-03-01T10:05:00Z');
    await scheduler.tick();
    expect(calls).toEqual([
      'start minutely 2026-03-01T10:01:00.000Z',
      'start minutely 2026-03-01T10:05:00.000Z',
    ]);
  });

  it('never fires a time twice when the clock goes backwards', async () => {
    const { clock, calls, scheduler } = setup('2026-03-01T10:00:30Z', [
      dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n'),
    ]);
    await scheduler.tick();
    await clock.setTime('2026-03-01T10:01:00Z');
    await scheduler.tick();
    clock.jumpTo('2026-03-01T10:00:10Z'); // an NTP correction of 50 s back
    await scheduler.tick();
    clock.jumpTo('2026-03-01T10:01:05Z');
    await scheduler.tick();
    expect(calls).toEqual(['start minutely 2026-03-01T10:01:00.000Z']);
    clock.jumpTo('2026-03-01T10:02:00Z');
    await scheduler.tick();
    expect(calls).toHaveLength(2);
  });

  it('evaluates CRON_TZ in its zone across a DST change', async () => {
    // Europe/Berlin leaves CET for CEST on 2026-03-29 at 02:00 local (01:00 UTC).
    const { clock, calls, scheduler } = setup('2026-03-28T00:00:00Z', [
      dagOf('berlin', 'schedule: "CRON_TZ=Europe/Berlin 30 3 * * *"\nsteps:\n  - "true"\n'),
    ]);
    await scheduler.tick();
    for (const t of ['2026-03-28T02:30:00Z', '2026-03-29T01:30:00Z', '2026-03-29T02:00:00Z']) {
      await clock.setTime(t);
      await scheduler.tick();
    }
    await clock.setTime('2026-03-30T01:30:00Z');
    await scheduler.tick();
    // 03:30 CET = 02:30 UTC the day before the change; 03:30 CEST = 01:30 UTC after it
    expect(calls).toEqual([
      'start berlin 2026-03-28T02:30:00.000Z',
      'start berlin 2026-03-29T01:30:00.000Z',
      'start berlin 2026-03-30T01:30:00.000Z',
    ]);
  });

  it('produces nothing for a suspended DAG, and resumes when the flag goes', async () => {
    const { clock, calls, scheduler, state } = setup('2026-03-01T10:00:30Z', [
      dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n', true),
    ]);
    await scheduler.tick();
    await clock.setTime('2026-03-01T10:01:00Z');
    await scheduler.tick();
    expect(calls).toEqual([]);
    state.files = [dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n')];
    await clock.setTime('2026-03-01T10:02:00Z');
    await scheduler.tick();
    expect(calls).toEqual(['start minutely 2026-03-01T10:02:00.000Z']);
  });

  it('picks up DAG files added and removed while it runs', async () => {
    const { clock, calls, scheduler, state } = setup('2026-03-01T10:00:30Z', []);
    await scheduler.tick();
    state.files = [dagOf('late', 'schedule: "* * * * *"\nsteps:\n  - "true"\n')];
    await clock.setTime('2026-03-01T10:01:00Z');
    await scheduler.tick();
    state.files = [];
    await clock.setTime('2026-03-01T10:02:00Z');
    await scheduler.tick();
    expect(calls).toEqual(['start late 2026-03-01T10:01:00.000Z']);
  });

  it('runs the stop and restart lists only when a run is running', async () => {
    const yaml =
      'schedule:\n  start: "0 9 * * *"\n  stop: "0 17 * * *"\n  restart: "0 12 * * *"\nsteps:\n  - "true"\n';
    const { clock, calls, latest, scheduler } = setup('2026-03-01T08:59:30Z', [
      dagOf('office', yaml),
    ]);
    await scheduler.tick();
    await clock.setTime('2026-03-01T09:00:00Z');
    await scheduler.tick();
    latest.set('office', { status: 1, startedAt: '2026-03-01T09:00:00Z' });
    await clock.setTime('2026-03-01T12:00:00Z');
    await scheduler.tick();
    await clock.setTime('2026-03-01T17:00:00Z');
    await scheduler.tick();
    latest.set('office', { status: 4, startedAt: '2026-03-01T09:00:00Z' });
    await clock.setTime('2026-03-02T12:00:00Z'); // nothing running: no restart
    await scheduler.tick();
    expect(calls).toEqual([
      'start office 2026-03-01T09:00:00.000Z',
      'restart office',
      'stop office',
      'start office 2026-03-02T09:00:00.000Z',
    ]);
  });

  it('skipIfSuccessful skips a start when a run succeeded since the previous fire', async () => {
    const yaml = 'schedule: "0 * * * *"\nskipIfSuccessful: true\nsteps:\n  - "true"\n';
    const { clock, calls, latest, scheduler } = setup('2026-03-01T09:30:00Z', [
      dagOf('hourly', yaml),
    ]);
    await scheduler.tick();
    latest.set('hourly', { status: 4, startedAt: '2026-03-01T09:40:00Z' }); // a manual run
    await clock.setTime('2026-03-01T10:00:00Z');
    await scheduler.tick();
    expect(calls).toEqual([]);
    await clock.setTime('2026-03-01T11:00:00Z'); // that success is before 10:00: no skip
    await scheduler.tick();
    latest.set('hourly', { status: 2, startedAt: '2026-03-01T11:00:00Z' });
    await clock.setTime('2026-03-01T12:00:00Z'); // a failure never skips
    await scheduler.tick();
    expect(calls).toEqual([
      'start hourly 2026-03-01T11:00:00.000Z',
      'start hourly 2026-03-01T12:00:00.000Z',
    ]);
  });
});
