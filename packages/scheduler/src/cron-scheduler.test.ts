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
      isRunning: (name) => Promise.resolve(latest.get(name)?.status === 1),
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

  it('fires at once, as a new leader, what came due since the last fire it resumes from', async () => {
    const { clock, calls, scheduler } = setup('2026-03-01T10:01:00.500Z', [
      dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n'),
    ]);
    scheduler.resumeFrom(new Date('2026-03-01T10:00:00Z')); // the predecessor's last fire
    const stop = new AbortController();
    const first = clock.nextSleep();
    const loop = scheduler.run(stop.signal);
    // 10:01 is fired before the loop sleeps to 10:02, not at 10:02
    expect(await first).toBe(59_500);
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

  it('fires once on the days a DST change skips or repeats the wall-clock time', async () => {
    // America/New_York: 2026-03-08 02:00 -> 03:00 (02:30 does not exist);
    // 2026-11-01 02:00 -> 01:00 (01:30 happens twice)
    const { clock, calls, scheduler } = setup('2026-03-07T12:00:00Z', [
      dagOf('skipped', 'schedule: "CRON_TZ=America/New_York 30 2 * * *"\nsteps:\n  - "true"\n'),
      dagOf('repeated', 'schedule: "CRON_TZ=America/New_York 30 1 * * *"\nsteps:\n  - "true"\n'),
    ]);
    await scheduler.tick();
    for (
      let t = Date.parse('2026-03-07T12:15:00Z');
      t <= Date.parse('2026-03-09T12:00:00Z');
      t += 15 * 60_000
    ) {
      await clock.setTime(new Date(t).toISOString());
      await scheduler.tick();
    }
    const march = calls.splice(0);
    // the gap day fires at 03:00 EDT (the first time after the missing 02:30), once
    expect(march).toEqual([
      'start repeated 2026-03-08T06:30:00.000Z',
      'start skipped 2026-03-08T07:00:00.000Z',
      'start repeated 2026-03-09T05:30:00.000Z',
      'start skipped 2026-03-09T06:30:00.000Z',
    ]);
    clock.jumpTo('2026-10-31T12:00:00Z');
    await scheduler.tick();
    calls.splice(0);
    for (
      let t = Date.parse('2026-10-31T12:15:00Z');
      t <= Date.parse('2026-11-02T12:00:00Z');
      t += 15 * 60_000
    ) {
      await clock.setTime(new Date(t).toISOString());
      await scheduler.tick();
    }
    // the repeated 01:30 fires once (01:30 EDT = 05:30Z), not again at 01:30 EST
    expect(calls).toEqual([
      'start repeated 2026-11-01T05:30:00.000Z',
      'start skipped 2026-11-01T07:30:00.000Z',
      'start repeated 2026-11-02T06:30:00.000Z',
      'start skipped 2026-11-02T07:30:00.000Z',
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
    await scheduler.idle();
    await clock.setTime('2026-03-01T09:00:00Z');
    await scheduler.tick();
    await scheduler.idle();
    latest.set('office', { status: 1, startedAt: '2026-03-01T09:00:00Z' });
    await clock.setTime('2026-03-01T12:00:00Z');
    await scheduler.tick();
    await scheduler.idle();
    await clock.setTime('2026-03-01T17:00:00Z');
    await scheduler.tick();
    await scheduler.idle();
    latest.set('office', { status: 4, startedAt: '2026-03-01T09:00:00Z' });
    await clock.setTime('2026-03-02T12:00:00Z'); // nothing running: no restart
    await scheduler.tick();
    await scheduler.idle();
    expect(calls).toEqual([
      'start office 2026-03-01T09:00:00.000Z',
      'restart office',
      'stop office',
      'start office 2026-03-02T09:00:00.000Z',
    ]);
  });

  it('skipIfSuccessful skips a start when a run already succeeded today (spec)', async () => {
    const yaml = 'schedule: "0 * * * *"\nskipIfSuccessful: true\nsteps:\n  - "true"\n';
    const { clock, calls, latest, scheduler } = setup('2026-03-01T09:30:00Z', [
      dagOf('hourly', yaml),
    ]);
    await scheduler.tick();
    latest.set('hourly', { status: 2, startedAt: '2026-03-01T09:40:00Z' }); // a failure never skips
    await clock.setTime('2026-03-01T10:00:00Z');
    await scheduler.tick();
    latest.set('hourly', { status: 4, startedAt: '2026-03-01T10:00:00.050Z' });
    await clock.setTime('2026-03-01T11:00:00Z'); // succeeded today: skipped
    await scheduler.tick();
    latest.set('hourly', { status: 4, startedAt: '2026-02-28T23:10:00Z' }); // yesterday
    await clock.setTime('2026-03-01T12:00:00Z');
    await scheduler.tick();
    expect(calls).toEqual([
      'start hourly 2026-03-01T10:00:00.000Z',
      'start hourly 2026-03-01T12:00:00.000Z',
    ]);
  });

  it('judges "today" in the entry\'s CRON_TZ zone', async () => {
    const yaml =
      'schedule: "CRON_TZ=Asia/Tokyo 0 * * * *"\nskipIfSuccessful: true\nsteps:\n  - "true"\n';
    // 14:30 UTC is 23:30 in Tokyo; 15:00 UTC is midnight there: a new day
    const { clock, calls, latest, scheduler } = setup('2026-03-01T14:30:00Z', [
      dagOf('tokyo', yaml),
    ]);
    await scheduler.tick();
    latest.set('tokyo', { status: 4, startedAt: '2026-03-01T14:40:00Z' });
    await clock.setTime('2026-03-01T15:00:00Z');
    await scheduler.tick();
    expect(calls).toEqual(['start tokyo 2026-03-01T15:00:00.000Z']);
  });

  it('fires a time that passed while the DAG files could not be read at the next tick', async () => {
    const files = [dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n')];
    const clock = new FakeClock('2026-03-01T10:00:30Z');
    const calls: string[] = [];
    let broken = false;
    const scheduler = new CronScheduler({
      clock,
      dags: () => (broken ? Promise.reject(new Error('EIO')) : Promise.resolve(files)),
      actions: {
        start: (d, at) => {
          calls.push(`start ${d.dag.name} ${at.toISOString()}`);
          return Promise.resolve();
        },
        stop: () => Promise.resolve(),
        restart: () => Promise.resolve(),
        latestRun: () => Promise.resolve(undefined),
        isRunning: () => Promise.resolve(false),
      },
      log: () => undefined,
    });
    await scheduler.tick();
    broken = true;
    await clock.setTime('2026-03-01T10:01:00Z');
    await scheduler.tick();
    broken = false;
    await clock.setTime('2026-03-01T10:01:20Z');
    await scheduler.tick();
    expect(calls).toEqual(['start minutely 2026-03-01T10:01:00.000Z']);
  });

  it('does not hold up other DAGs while a restart waits for its run to stop', async () => {
    const clock = new FakeClock('2026-03-01T11:59:30Z');
    const calls: string[] = [];
    let finishRestart: () => void = () => undefined;
    const scheduler = new CronScheduler({
      clock,
      dags: () =>
        Promise.resolve([
          dagOf('slow', 'schedule:\n  restart: "0 12 * * *"\nsteps:\n  - "true"\n'),
          dagOf('minutely', 'schedule: "* * * * *"\nsteps:\n  - "true"\n'),
        ]),
      actions: {
        start: (d, at) => {
          calls.push(`start ${d.dag.name} ${at.toISOString()}`);
          return Promise.resolve();
        },
        stop: () => Promise.resolve(),
        restart: (d) => {
          calls.push(`restart ${d.dag.name}`);
          return new Promise((r) => (finishRestart = r));
        },
        latestRun: () => Promise.resolve(undefined),
        isRunning: () => Promise.resolve(true),
      },
      log: () => undefined,
    });
    await scheduler.tick();
    await clock.setTime('2026-03-01T12:00:00Z');
    await scheduler.tick(); // returns although the restart goes on
    await clock.setTime('2026-03-01T12:01:00Z');
    await scheduler.tick();
    expect(calls).toEqual([
      'restart slow',
      'start minutely 2026-03-01T12:00:00.000Z',
      'start minutely 2026-03-01T12:01:00.000Z',
    ]);
    finishRestart();
    await scheduler.idle();
  });
});
