import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '@trellis/core';
import { Feature } from '@trellis/coordinator/client';
import { FakeClock, flushMicrotasks } from '@trellis/testkit';
import { Outbox } from './outbox.js';
import {
  GrpcCode,
  chunkOf as chunk,
  fakeCoordinatorClient as fakeClient,
  reportOf as report,
} from './testing/fake-coordinator-client.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An outbox on a fresh journal directory, started. */
const outbox = (
  client: ReturnType<typeof fakeClient>['client'],
  opts: {
    clock?: Clock;
    onDropped?: (k: string) => void;
    lines?: string[];
    warnings?: string[];
  } = {},
): Outbox => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-outbox-'));
  dirs.push(dir);
  const box = new Outbox({
    client: () => client,
    clock: opts.clock ?? systemClock,
    dir,
    log: (l) => opts.lines?.push(l),
    warn: (m) => opts.warnings?.push(m),
    onDropped: opts.onDropped ?? (() => undefined),
    random: () => 0,
  });
  box.start();
  return box;
};

describe('worker outbox', () => {
  it('delivers a run’s log lines before the status report queued after them', async () => {
    const { client, sent } = fakeClient();
    const box = outbox(client);
    box.log('r1', chunk('r1', 0, 'a\n'));
    box.log('r1', chunk('r1', 2, 'b\n'));
    box.status('r1', report('r1', 1));
    await box.drained();
    // The first chunk leaves at once on a stream held open; the second joins it.
    expect(sent).toEqual([
      { kind: 'logs', data: ['a\n', 'b\n'] },
      { kind: 'status', seq: 1, run: 'r1' },
    ]);
  });

  it('keeps everything while the coordinator is away, delivers it in order after, and says so once', async () => {
    const { client, sent, state } = fakeClient();
    const lines: string[] = [];
    const box = outbox(client, { lines });
    state.away = true;
    box.log('r1', chunk('r1', 0, 'one\n'));
    box.status('r1', report('r1', 1));
    box.log('r1', chunk('r1', 4, 'two\n'));
    box.status('r1', report('r1', 2));
    expect(box.size).toBe(4);
    state.away = false;
    await box.drained();
    // Every log byte in order; report 1 is replaced by report 2 (each is the whole record),
    // which goes after the lines queued before it; the lines report 1 stood between go together.
    expect(sent).toEqual([
      { kind: 'logs', data: ['one\n', 'two\n'] },
      { kind: 'status', seq: 2, run: 'r1' },
    ]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^outbox: coordinator unreachable \(away\)/);
    expect(lines[1]).toMatch(
      /^outbox: coordinator reachable again after \d+ s: 3 buffered message/,
    );
  });

  it('sends only the last of consecutive status reports (each is the whole record)', async () => {
    const { client, sent, state } = fakeClient();
    const box = outbox(client);
    state.away = true;
    box.status('r1', report('r1', 1));
    box.status('r1', report('r1', 2));
    box.status('r1', report('r1', 3));
    state.away = false;
    await box.drained();
    expect(sent).toEqual([{ kind: 'status', seq: 3, run: 'r1' }]);
  });

  it('tells the worker to drop a run the coordinator no longer gives it, and discards the rest', async () => {
    const { client, sent, state } = fakeClient();
    const dropped: string[] = [];
    const box = outbox(client, { onDropped: (k) => dropped.push(k) });
    state.dropped.add('r1');
    box.status('r1', report('r1', 1));
    await box.drained();
    expect(dropped).toEqual(['r1']);
    expect(sent).toHaveLength(1);
  });

  it('retries a final status through unexpected gRPC errors with capped back-off and delivers it once', async () => {
    const { client, sent, state } = fakeClient();
    const clock = new FakeClock(0, { autoAdvance: true });
    const lines: string[] = [];
    const box = outbox(client, { clock, lines });
    state.failures.push(GrpcCode.Internal, GrpcCode.Internal, 2 /* UNKNOWN */, GrpcCode.Internal);
    box.status('r1', report('r1', 1), true);
    await box.drained();
    expect(sent).toEqual([{ kind: 'status', seq: 1, run: 'r1' }]);
    // random() = 0: the full exponential wait each time
    expect(clock.sleeps).toEqual([100, 200, 400, 800]);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/coordinator unreachable \(failure 13\)/);
    expect(lines[1]).toMatch(/reachable again .*: 1 buffered message/);
  });

  it('tells when everything queued for a run was delivered, its final report included', async () => {
    const { client, sent, state } = fakeClient();
    const clock = new FakeClock(0, { autoAdvance: true });
    const box = outbox(client, { clock });
    state.failures.push(GrpcCode.Internal);
    box.log('r1', chunk('r1', 0, 'a\n'));
    box.status('r1', report('r1', 1), true);
    box.status('r2', report('r2', 1), true);
    await box.whenSent('r1');
    // the log chunk failed once and was sent again; the final report went after it
    expect(sent.filter((m) => m.kind === 'status' && m.run === 'r1')).toHaveLength(1);
    await box.whenSent('r2');
    await box.whenSent('r3'); // nothing queued: at once
    expect(box.size).toBe(0);
  });

  it('tells a whenSent caller of a run discarded while the outbox is stopped, at once', async () => {
    const { client, sent, state } = fakeClient();
    const clock = new FakeClock(0);
    const box = outbox(client, { clock });
    state.away = true;
    const retrying = clock.nextSleep();
    box.status('r1', report('r1', 1), true);
    await retrying; // its delivery failed and waits to be tried again
    await box.stop(); // the worker stops: the report stays queued, nothing delivers it
    await flushMicrotasks();
    let told = false;
    const waiting = box.whenSent('r1').then(() => (told = true));
    box.discard('r1'); // the coordinator dropped the run meanwhile
    await flushMicrotasks();
    expect(told).toBe(true);
    await waiting;
    expect(box.size).toBe(0);
    expect(sent.filter((m) => m.kind === 'status')).toEqual([]);
  });

  it('sends a final report at once, ending the settle wait of a running report before it', async () => {
    const { client, sent } = fakeClient();
    const clock = new FakeClock(0);
    const box = outbox(client, { clock });
    box.status('r1', report('r1', 1));
    expect(clock.sleeps).toEqual([20]); // the running report settles
    expect(clock.pending).toBe(1);
    box.status('r1', report('r1', 2), true);
    await box.drained(); // the clock never moves
    expect(sent).toEqual([{ kind: 'status', seq: 2, run: 'r1' }]);
  });

  it('sends the log chunks running reports stood between in one stream, then the final report, without waiting', async () => {
    const { client, sent } = fakeClient();
    const clock = new FakeClock(0);
    const box = outbox(client, { clock });
    box.log('r1', chunk('r1', 0, 'a\n')); // leaves at once
    box.status('r1', report('r1', 1));
    box.log('r1', chunk('r1', 2, 'b\n'));
    box.status('r1', report('r1', 2));
    box.log('r1', chunk('r1', 4, 'c\n'));
    box.status('r1', report('r1', 3), true);
    await box.drained(); // the clock never moves
    expect(sent).toEqual([
      { kind: 'logs', data: ['a\n'] },
      { kind: 'logs', data: ['b\n', 'c\n'] },
      { kind: 'status', seq: 3, run: 'r1' },
    ]);
  });

  it("sends a run's last lines on the log stream held open, and its final report right after (issue 21, the worker path)", async () => {
    const { client, sent } = fakeClient();
    const clock = new FakeClock(0);
    const box = outbox(client, { clock });
    const realReport = client.report.bind(client);
    const reported = new Promise<void>((resolve) => {
      client.report = (r) => realReport(r).finally(resolve);
    });
    box.log('r1', chunk('r1', 0, 'started\n')); // leaves at once; its stream is held open
    expect(clock.pending).toBe(1);
    box.log('r1', chunk('r1', 8, 'finished\n'));
    box.status('r1', report('r1', 1), true); // ends the hold: the clock never moves
    await reported;
    expect(sent).toEqual([
      { kind: 'logs', data: ['started\n', 'finished\n'] },
      { kind: 'status', seq: 1, run: 'r1' },
    ]);
  });

  it("carries a run's last lines in its final report to a coordinator that takes them: one call, no stream", async () => {
    const { client, sent, state } = fakeClient();
    state.features.push(Feature.ReportLogs);
    const clock = new FakeClock(0);
    const box = outbox(client, { clock });
    box.log('r1', chunk('r1', 0, 'started\n')); // held back, unsent
    expect(clock.pending).toBe(1);
    box.log('r1', chunk('r1', 8, 'finished\n'));
    box.status('r1', report('r1', 1), true); // ends the hold: the clock never moves
    await box.whenSent('r1');
    expect(sent).toEqual([
      { kind: 'status', seq: 1, run: 'r1', logs: ['started\n', 'finished\n'] },
    ]);
    expect(box.heldBytes).toBe(0);
  });

  it('sends the lines on a stream after a final report a coordinator took without them (an older one behind the address)', async () => {
    const { client, sent, state } = fakeClient();
    state.features.push(Feature.ReportLogs);
    state.ignoresReportLogs = true;
    const box = outbox(client, { clock: new FakeClock(0) });
    box.log('r1', chunk('r1', 0, 'last\n'));
    box.status('r1', report('r1', 1), true);
    await box.drained(); // the lines left are not held back then
    expect(sent).toEqual([
      { kind: 'status', seq: 1, run: 'r1' },
      { kind: 'logs', data: ['last\n'] },
    ]);
    expect(box.heldBytes).toBe(0);
  });

  it('skips only a refused final report that carried last lines: the lines go once, on a stream', async () => {
    const { client, sent, state } = fakeClient();
    state.features.push(Feature.ReportLogs);
    state.failures.push(GrpcCode.InvalidArgument);
    const warnings: string[] = [];
    const box = outbox(client, { clock: new FakeClock(0), warnings });
    box.log('r1', chunk('r1', 0, 'a\n'));
    box.log('r1', chunk('r1', 2, 'b\n'));
    box.status('r1', report('r1', 1), true);
    await box.drained(); // the lines left are not held back then
    expect(sent).toEqual([{ kind: 'logs', data: ['a\n', 'b\n'] }]); // one stream
    expect(warnings).toEqual([expect.stringMatching(/refused the status report 1 of run r1;/)]);
    expect(box.heldBytes).toBe(0);
  });

  it('skips a message the coordinator refuses (INVALID_ARGUMENT), saying so, and goes on', async () => {
    const { client, sent, state } = fakeClient();
    const warnings: string[] = [];
    const box = outbox(client, { warnings });
    state.failures.push(GrpcCode.InvalidArgument);
    box.log('r1', chunk('r1', 0, 'x\n'));
    box.status('r1', report('r1', 1), true);
    await box.drained();
    expect(sent).toEqual([{ kind: 'status', seq: 1, run: 'r1' }]);
    expect(warnings).toEqual([
      expect.stringMatching(/refused the log chunk of \/logs\/r1.out at offset 0/),
    ]);
  });
});
