import { describe, expect, it } from 'vitest';
import { guardLinger } from './linger-guard.js';

describe('guardLinger', () => {
  it('ends a stopped service that something still holds, naming what holds it', async () => {
    const lines: string[] = [];
    const held = setInterval(() => undefined, 1000); // the forgotten handle
    try {
      const code = await new Promise<number>((resolve) =>
        guardLinger(
          ['start-all'],
          0,
          {
            err: (l) => lines.push(l),
            exit: resolve,
            resources: () => process.getActiveResourcesInfo(),
          },
          20,
        ),
      );
      expect(code).toBe(0);
      expect(lines.join('\n')).toMatch(
        /still running 0.02s after it stopped, held by: .*Timeout.*; exiting/,
      );
    } finally {
      clearInterval(held);
    }
  });

  it('leaves other commands alone', () => {
    const ports = {
      err: () => {
        throw new Error('not a service');
      },
      exit: () => {
        throw new Error('not a service');
      },
      resources: () => [],
    };
    // nothing is armed: a one-shot command's process is not ended by the guard
    expect(() => guardLinger(['status', 'x'], 0, ports, 1)).not.toThrow();
  });
});
