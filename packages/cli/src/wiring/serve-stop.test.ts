import { describe, expect, it } from 'vitest';
import type { CliIo } from '../io.js';
import { readyUnlessStopped } from './serve.js';

const io: CliIo = { out: () => undefined, err: () => undefined, env: {}, cwd: '/' };
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('readyUnlessStopped', () => {
  it('arms no give-up timer for a stop signal that comes after start-up (the usual stop)', async () => {
    let stop!: () => void;
    const until = new Promise<void>((r) => (stop = r));
    const app = {} as never;
    expect(await readyUnlessStopped(Promise.resolve(app), until, io)).toBe(app);
    const before = timers();
    stop();
    await until;
    await new Promise((r) => setImmediate(r));
    // a timer armed here held every stopped server's exit for 10 s
    expect(timers()).toBe(before);
  });

  it('still gives the start-up its bound when the stop signal comes during it', async () => {
    const until = Promise.resolve();
    const wiring = new Promise<never>(() => undefined);
    const pending = readyUnlessStopped(wiring, until, io);
    await new Promise((r) => setImmediate(r));
    expect(timers()).toBeGreaterThan(0);
    void pending;
  });
});
